#include "workload.h"

#include <random>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace pmstore::crashtest {
namespace {

uint64_t Mix(uint64_t a, uint64_t b) {
  uint64_t x = a * 0x9E3779B97F4A7C15ull ^ (b + 0x632BE59BD9B4E019ull);
  x ^= x >> 31;
  x *= 0xBF58476D1CE4E5B9ull;
  return x ^ (x >> 29);
}

}  // namespace

std::string Workload::KeyName(int k) const { return absl::StrFormat("key-%05d", k); }

Operation Workload::At(uint64_t index) const {
  std::mt19937_64 rng(Mix(seed_, index));
  Operation op;
  op.index = index;
  const int kind = static_cast<int>(rng() % 10);
  op.batch = kind >= 8;  // 20% batches
  const int count = op.batch ? 2 + static_cast<int>(rng() % 4) : 1;
  for (int i = 0; i < count; ++i) {
    Mutation m;
    m.key = KeyName(static_cast<int>(rng() % keyspace_));
    m.put = op.batch ? rng() % 4 != 0 : kind < 6;  // single ops: 60% put, 20% delete
    op.mutations.push_back(m);
  }
  return op;
}

std::string Workload::ValueOf(uint64_t index, const std::string& key) const {
  std::mt19937_64 rng(Mix(seed_ ^ std::hash<std::string>()(key), index));
  const int bucket = static_cast<int>(rng() % 200);
  size_t size;
  if (bucket == 0) size = (3u << 20) / 2;                     // 0.5%: a 2 MiB run
  else if (bucket < 10) size = 64 * 1024 + rng() % 200000;    // 4.5%: large record
  else if (bucket < 60) size = 200 + rng() % 8000;            // 25%
  else size = rng() % 200;                                    // 70%, empty included
  if (size == 0) return "";
  // A readable head says which operation wrote the value when a test fails.
  std::string value = absl::StrCat("op=", index, " key=", key, ";");
  const size_t head = value.size();
  value.resize(std::max(size, head));
  for (size_t i = head; i < value.size(); ++i) value[i] = static_cast<char>(rng());
  return value;
}

absl::Status Workload::Apply(Store& store, const Operation& op, const WriteOptions& options) const {
  if (!op.batch) {
    const Mutation& m = op.mutations[0];
    return m.put ? store.Put(options, m.key, ValueOf(op.index, m.key)) : store.Delete(options, m.key);
  }
  WriteBatch batch;
  for (const Mutation& m : op.mutations) {
    if (m.put) batch.Put(m.key, ValueOf(op.index, m.key));
    else batch.Delete(m.key);
  }
  return store.Write(options, batch);
}

void Model::Apply(const Operation& op) {
  for (const Mutation& m : op.mutations) {
    if (m.put) writer_[m.key] = op.index;
    else writer_.erase(m.key);
  }
}

std::string Model::Diff(Store& store, const Workload& workload) const {
  for (int k = 0; k < workload.keyspace(); ++k) {
    const std::string key = workload.KeyName(k);
    std::string value;
    const absl::Status s = store.Get(key, &value);
    auto it = writer_.find(key);
    if (it == writer_.end()) {
      if (!absl::IsNotFound(s)) return absl::StrCat(key, ": expected absent, got ", s.ToString(), " size ", value.size());
      continue;
    }
    if (!s.ok()) return absl::StrCat(key, ": expected the value of op ", it->second, ", got ", s.ToString());
    if (value != workload.ValueOf(it->second, key)) {
      return absl::StrCat(key, ": value differs from op ", it->second, " (", value.size(), " bytes, starts '",
                          value.substr(0, 24), "')");
    }
  }
  return "";
}

}  // namespace pmstore::crashtest
