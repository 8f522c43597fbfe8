// What a damaged or hostile pool must never do to its reader, shared by
// the deterministic damage sweep and the fuzz target.
//
// BuildReferencePool writes a small valid pool (a few hundred keys, one
// batch, overwrites, deletes, a large value in a run of chunks) and
// returns every value each key ever held. ExerciseDamagedPool then runs
// Store::Check, Store::Open and, when that succeeds, a verified Get of
// every key and a full iteration, and lists every broken promise: a value
// a key never held returned as OK, an iteration that does not end or goes
// backwards, a store that Check calls clean but that refuses a write.
// Crashes, hangs and out-of-bounds reads are the sanitizers' and the
// test's timeout's to catch.
#pragma once

#include <fcntl.h>
#include <unistd.h>

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "pmstore/format/layout.h"
#include "pmstore/format/leaf.h"
#include "pmstore/format/record.h"
#include "pmstore/format/redo_log.h"
#include "pmstore/store.h"

namespace pmstore::damage {

// Every value a key held after some commit; nullopt = absent.
using History = std::map<std::string, std::vector<std::optional<std::string>>>;

inline std::string ValueOf(uint64_t i, size_t size) {
  std::string value(size, '\0');
  for (size_t j = 0; j < size; ++j) value[j] = static_cast<char>('a' + (i * 31 + j * 7) % 26);
  return value;
}

inline Options ReferenceOptions() {
  Options options;
  options.create_if_missing = true;
  options.initial_size = 8ull << 20;
  options.max_size = 32ull << 20;
  return options;
}

// Builds the reference pool at `path` (which must not exist); *history
// gets each key's values. False with *why on failure.
inline bool BuildReferencePool(const std::string& path, History* history, std::string* why) {
  auto opened = Store::Open(path, ReferenceOptions());
  if (!opened.ok()) {
    *why = opened.status().ToString();
    return false;
  }
  Store& store = **opened;
  auto put = [&](const std::string& key, const std::string& value) {
    auto& h = (*history)[key];
    if (h.empty()) h.push_back(std::nullopt);
    h.push_back(value);
    return store.Put(key, value);
  };
  absl::Status s;
  for (uint64_t i = 0; i < 300 && s.ok(); ++i) s = put(absl::StrCat("key", 10000 + i), ValueOf(i, 8 + i % 200));
  WriteBatch batch;
  for (uint64_t i = 0; i < 40; ++i) {
    const std::string key = absl::StrCat("batch", 100 + i);
    batch.Put(key, ValueOf(i + 1000, 50));
    (*history)[key] = {std::nullopt, ValueOf(i + 1000, 50)};
  }
  if (s.ok()) s = store.Write(batch);
  for (uint64_t i = 0; i < 300 && s.ok(); i += 7) {
    const std::string key = absl::StrCat("key", 10000 + i);
    s = store.Delete(key);
    (*history)[key].push_back(std::nullopt);
  }
  for (uint64_t i = 3; i < 300 && s.ok(); i += 11) s = put(absl::StrCat("key", 10000 + i), ValueOf(i + 7, 90));
  if (s.ok()) s = put("large", ValueOf(42, (1u << 20) + 12345));
  // The last two commits touch one key, so a damaged log that rolls back
  // the newest commit lands on a state every other key agrees with.
  if (s.ok()) s = put("zz-last", "first");
  if (s.ok()) s = put("zz-last", "second");
  if (!s.ok()) {
    *why = s.ToString();
    return false;
  }
  return true;
}

struct Outcome {
  bool opened = false;
  bool check_clean = false;
  uint64_t keys_read = 0;
  std::vector<std::string> violations;
};

// A key's value must be one it held, or the read must fail clearly.
// `hostile`: the pool may have been rewritten with valid checksums, so a
// key may be legitimately gone; a wrong value still may not appear.
inline void ExpectHeld(const History& history, const std::string& key, const absl::Status& status,
                       const std::string& value, Outcome* out, bool hostile = false) {
  const auto it = history.find(key);
  if (status.ok()) {
    bool held = false;
    if (it != history.end()) {
      for (const auto& v : it->second) held = held || (v && *v == value);
    }
    if (!held) out->violations.push_back(absl::StrCat("Get(", absl::CHexEscape(key), ") returned a value it never held"));
  } else if (absl::IsNotFound(status)) {
    bool absent = false;
    if (it != history.end()) {
      for (const auto& v : it->second) absent = absent || !v;
    }
    if (!absent && !hostile) out->violations.push_back(absl::StrCat("Get(", absl::CHexEscape(key), ") NotFound, it was never absent"));
  } else if (status.message().empty()) {
    out->violations.push_back(absl::StrCat("Get(", absl::CHexEscape(key), ") failed without a message: ", status.ToString()));
  }
}

inline Outcome ExerciseDamagedPool(const std::string& path, const History& history, bool hostile = false) {
  Outcome out;
  auto check = Store::Check(path);
  if (!check.ok() && check.status().message().empty()) out.violations.push_back("Check failed without a message");
  auto opened = Store::Open(path, Options());
  if (!opened.ok()) {
    if (opened.status().message().empty()) out.violations.push_back("Open failed without a message");
    return out;
  }
  out.opened = true;
  Store& store = **opened;
  ReadOptions verified;
  verified.verify_checksums = true;
  for (const auto& [key, values] : history) {
    std::string value;
    const absl::Status status = store.Get(verified, key, &value);
    ExpectHeld(history, key, status, value, &out, hostile);
    ++out.keys_read;
  }
  const CheckReport report = store.CheckNow();
  out.check_clean = report.clean();
  // A full iteration always ends. Iterators do not hash records, so only
  // a pool its check calls clean promises increasing keys and held values.
  auto it = store.NewIterator(ReadOptions(), IterateOptions());
  std::string previous;
  uint64_t steps = 0;
  for (it->SeekToFirst(); it->Valid(); it->Next()) {
    if (++steps > 4 * history.size() + 100) {
      out.violations.push_back("iteration does not end");
      break;
    }
    const std::string key(it->key());
    const std::string value(it->value());
    if (!out.check_clean) continue;
    if (steps > 1 && key <= previous) {
      out.violations.push_back(absl::StrCat("iteration went from ", absl::CHexEscape(previous), " back to ",
                                            absl::CHexEscape(key)));
      break;
    }
    // Not hashed: only a pool whose records all verified vouches for it.
    if (!hostile) ExpectHeld(history, key, absl::OkStatus(), value, &out);
    previous = key;
  }
  it.reset();
  if (out.check_clean) {
    // A store its own check calls consistent accepts writes.
    const absl::Status put = store.Put("after-damage", "written");
    std::string value;
    if (!put.ok() && !absl::IsResourceExhausted(put) && !hostile) {
      out.violations.push_back(absl::StrCat("clean store refused a write: ", put.ToString()));
    } else if (put.ok() && (!store.Get(verified, "after-damage", &value).ok() || value != "written")) {
      out.violations.push_back("clean store lost a write it acknowledged");
    }
  }
  return out;
}

// Reads the whole file at `path`; empty on failure.
inline std::string ReadFile(const std::string& path) {
  std::string bytes;
  const int fd = open(path.c_str(), O_RDONLY);
  if (fd < 0) return bytes;
  const off_t size = lseek(fd, 0, SEEK_END);
  bytes.resize(static_cast<size_t>(size));
  size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = pread(fd, bytes.data() + done, bytes.size() - done, static_cast<off_t>(done));
    if (n <= 0) break;
    done += static_cast<size_t>(n);
  }
  close(fd);
  bytes.resize(done);
  return bytes;
}

// Replaces the contents of the file at `path` with `bytes`. It writes over
// the old contents and then cuts the file to length rather than truncating
// first, so a file rewritten many times keeps its pages.
inline bool WriteFile(const std::string& path, std::string_view bytes) {
  const int fd = open(path.c_str(), O_WRONLY | O_CREAT, 0644);
  if (fd < 0) return false;
  size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = write(fd, bytes.data() + done, bytes.size() - done);
    if (n <= 0) break;
    done += static_cast<size_t>(n);
  }
  const bool cut = ftruncate(fd, static_cast<off_t>(done)) == 0;
  close(fd);
  return cut && done == bytes.size();
}

}  // namespace pmstore::damage
