// A deterministic random workload for crash tests: operation i is a pure
// function of (seed, i), so a process that watched another run it can
// recompute exactly what each acknowledged operation wrote.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "pmstore/store.h"

namespace pmstore::crashtest {

struct Mutation {
  std::string key;
  bool put = true;
};

struct Operation {
  uint64_t index = 0;
  bool batch = false;              // applied with Store::Write as one commit
  std::vector<Mutation> mutations;
};

class Workload {
 public:
  Workload(uint64_t seed, int keyspace) : seed_(seed), keyspace_(keyspace) {}

  Operation At(uint64_t index) const;
  // The value operation `index` writes under `key` (sizes from 0 bytes to
  // 1.5 MiB, so small records and 2 MiB runs are both exercised).
  std::string ValueOf(uint64_t index, const std::string& key) const;
  absl::Status Apply(Store& store, const Operation& op, const WriteOptions& options = WriteOptions()) const;

  int keyspace() const { return keyspace_; }
  std::string KeyName(int k) const;

 private:
  uint64_t seed_;
  int keyspace_;
};

// What the store must hold: for each present key, the index of the
// operation whose value it holds.
class Model {
 public:
  void Apply(const Operation& op);
  // Every key of the keyspace compared with the store; "" when they match,
  // else the first difference.
  std::string Diff(Store& store, const Workload& workload) const;

 private:
  std::map<std::string, uint64_t> writer_;
};

}  // namespace pmstore::crashtest
