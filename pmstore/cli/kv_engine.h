// What `pmstore bench` drives: pmstore itself, or LMDB for comparison.
// Engines only move data; the bench core generates keys, times every
// operation and reports.
//
// Thread-safety: Put/Delete/Get/Update/Scan may be called from several threads
// at once (each engine serialises writers as its library requires).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"

namespace pmstore::cli {

class KvEngine {
 public:
  virtual ~KvEngine() = default;
  virtual std::string name() const = 0;
  // One line about how the engine runs here (granularity, mapping).
  virtual std::string Describe() = 0;
  virtual absl::Status Put(std::string_view key, std::string_view value) = 0;
  virtual absl::Status Delete(std::string_view key) = 0;
  // OK and *found false when the key is absent.
  virtual absl::Status Get(std::string_view key, std::string* value, bool* found) = 0;
  // One update of db_bench's updaterandom: reads `key` (its value into
  // *old_value, *found false when absent), then puts `value` under it.
  // With `transaction`, pmstore does both in one Transaction and begins it
  // again when Commit returns Aborted, adding one to *aborts each time;
  // without, a Get then a Put. LMDB does both in one write transaction
  // either way (it has no write outside one), and never aborts: its write
  // transactions wait for each other.
  virtual absl::Status Update(std::string_view key, std::string_view value, bool transaction, std::string* old_value,
                              bool* found, uint64_t* aborts) = 0;
  // Gets of every key of `keys` at once: (*values)[i] for keys[i] (empty
  // when absent); *found: how many were present. pmstore's MultiGet; LMDB has
  // no batched read (the bench runs readrandom there instead).
  virtual absl::Status MultiGet(std::span<const std::string_view> keys, std::vector<std::string>* values,
                                uint64_t* found) = 0;
  // Visits up to `limit` entries in key order (descending when `reverse`);
  // returns how many.
  virtual absl::StatusOr<uint64_t> Scan(uint64_t limit, uint64_t* bytes, bool reverse) = 0;

  // One thread's cursor for short range reads (seekrandom): it stays open
  // from seek to seek, as db_bench's iterator does.
  class Cursor {
   public:
    virtual ~Cursor() = default;
    // Positions at the first key >= `target` (reverse: the last key <=
    // `target`), then moves `nexts` more the same way; returns the entries
    // visited (0: none at the target) and adds their bytes to *bytes.
    virtual absl::StatusOr<uint64_t> Seek(std::string_view target, int nexts, bool reverse, uint64_t* bytes) = 0;
  };
  virtual absl::StatusOr<std::unique_ptr<Cursor>> NewCursor() = 0;
};

struct EngineConfig {
  std::string path;
  uint64_t size = 0;
  bool sync = true;
  bool fresh = false;  // delete whatever is at path first
  bool read_only = false;  // pmstore: Options::read_only; LMDB: MDB_RDONLY
  bool exclusive = false;  // pmstore: Options::exclusive; LMDB: no such mode, ignored
};

absl::StatusOr<std::unique_ptr<KvEngine>> OpenPmstoreEngine(const EngineConfig& config);
// LMDB with MDB_WRITEMAP | MDB_NOSUBDIR, one write transaction per put,
// synced on commit unless !sync (then MDB_NOSYNC | MDB_NOMETASYNC).
absl::StatusOr<std::unique_ptr<KvEngine>> OpenLmdbEngine(const EngineConfig& config);

}  // namespace pmstore::cli
