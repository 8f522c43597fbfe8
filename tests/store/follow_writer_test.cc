// A read-only open beside a writer of another process (doc/STORE.md,
// "Many processes on one pool"): it sees every commit acknowledged before
// its read began, with the pool growing, leaves splitting and emptying
// and unsynced runs; its values never go back in time and stay put while
// pinned; its snapshots and iterators read one commit or say Aborted; and
// the pool lock lets exactly the promised opens in (Options::exclusive).
// Real processes, the real pool lock and lock region.
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <functional>
#include <map>
#include <optional>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "gtest/gtest.h"
#include "pmstore/db/store_impl.h"
#include "pmstore/env/env.h"
#include "pmstore/format/layout.h"
#include "pmstore/format/leaf.h"
#include "pmstore/format/record.h"
#include "pmstore/persist/persister.h"
#include "pmstore/share/leaf_image_ring.h"
#include "pmstore/share/lock_region.h"
#include "pmstore/store.h"
#include "store/store_test_util.h"
#include "support/temp_dir.h"

namespace pmstore {
namespace {

using testing::OpenOrDie;
using testing::SmallPool;

using Model = std::map<std::string, std::string>;

// A process running `run(in, out)`, which reads what the parent sends on
// `in` and answers on `out`; Finish returns what it returned, or why it
// did not.
class Child {
 public:
  explicit Child(const std::function<std::string(int in, int out)>& run) {
    signal(SIGPIPE, SIG_IGN);  // a child that returned early: Send says so
    int to_child[2], from_child[2], result[2];
    if (pipe(to_child) != 0 || pipe(from_child) != 0 || pipe(result) != 0) return;
    std::fflush(nullptr);
    pid_ = fork();
    if (pid_ == 0) {
      close(to_child[1]);
      close(from_child[0]);
      close(result[0]);
      const std::string said = run(to_child[0], from_child[1]);
      const bool written = write(result[1], said.data(), said.size()) == static_cast<ssize_t>(said.size());
      _exit(written ? 0 : 1);
    }
    close(to_child[0]);
    close(from_child[1]);
    close(result[1]);
    to_ = to_child[1];
    from_ = from_child[0];
    result_ = result[0];
  }
  // One byte to the child; false when it is gone.
  bool Send(char c) const { return write(to_, &c, 1) == 1; }
  // Whether the child has said something (or is gone), without waiting.
  bool Said() const {
    pollfd said = {.fd = from_, .events = POLLIN, .revents = 0};
    return poll(&said, 1, 0) > 0;
  }
  // One byte from the child; false when it is gone.
  bool Receive() const {
    char c;
    return read(from_, &c, 1) == 1;
  }
  // Kills the child with SIGKILL; whether it died of it.
  bool Kill() {
    kill(pid_, SIGKILL);
    close(to_);
    close(from_);
    close(result_);
    int status = 0;
    return waitpid(pid_, &status, 0) == pid_ && WIFSIGNALED(status);
  }
  std::string Finish() {
    close(to_);
    std::string said;
    char buffer[4096];
    ssize_t n;
    while ((n = read(result_, buffer, sizeof(buffer))) > 0) said.append(buffer, static_cast<size_t>(n));
    close(result_);
    close(from_);
    int status = 0;
    const bool returned = waitpid(pid_, &status, 0) == pid_ && WIFEXITED(status) && WEXITSTATUS(status) == 0;
    return returned ? said : "child failed";
  }

 private:
  pid_t pid_ = -1;
  int to_ = -1;
  int from_ = -1;
  int result_ = -1;
};

bool ReadByte(int fd) {
  char c;
  return read(fd, &c, 1) == 1;
}
bool WriteByte(int fd) { return write(fd, "k", 1) == 1; }

std::string KeyOf(uint64_t i) { return absl::StrCat("key", 100000 + i); }

// One round of writes, the same in the writer and in the follower's
// model (both draw from `rng` seeded alike): puts of new and old keys,
// some values large enough to grow the pool, deletes of the least keys
// (which move separators) and of others; durable or not, one by one or as
// a batch. Applied to `store` when it is not null. The keys it touched.
std::vector<std::string> Round(std::mt19937_64& rng, int round, Model& model, Store* store) {
  std::vector<std::string> touched;
  WriteBatch batch;
  const bool batched = round % 3 == 0;
  const WriteOptions write{.sync = round % 2 == 0};
  bool ok = true;
  for (int i = 0; i < 40; ++i) {
    const std::string key = KeyOf(rng() % 4000);
    const size_t size = i == 0 && round % 25 == 0 ? (1 << 20) + 4096 : 20 + rng() % 150;
    std::string value = testing::ValueFor(round * 100 + i, size);
    touched.push_back(key);
    model[key] = value;
    if (store == nullptr) continue;
    if (batched) {
      batch.Put(key, value);
    } else {
      ok = ok && store->Put(write, key, value).ok();
    }
  }
  for (int i = 0; i < 12 && !model.empty(); ++i) {
    auto victim = i < 4 ? model.begin() : model.lower_bound(KeyOf(rng() % 4000));
    if (victim == model.end()) continue;
    const std::string key = victim->first;
    touched.push_back(key);
    model.erase(victim);
    if (store == nullptr) continue;
    if (batched) {
      batch.Delete(key);
    } else {
      ok = ok && store->Delete(write, key).ok();
    }
  }
  if (store != nullptr && batched) ok = store->Write(write, batch).ok();
  EXPECT_TRUE(ok) << "round " << round;
  return touched;
}

// Whether an iterator of `store` reads exactly `model`, forward and
// backward; else what differed.
std::string CompareScans(Store& store, const Model& model) {
  auto forward = store.NewIterator(ReadOptions(), IterateOptions());
  auto expected = model.begin();
  for (forward->SeekToFirst(); forward->Valid(); forward->Next(), ++expected) {
    if (expected == model.end()) return absl::StrCat("forward: extra key ", std::string(forward->key()));
    if (forward->key() != expected->first || forward->value() != expected->second) {
      return absl::StrCat("forward: ", std::string(forward->key()), " where ", expected->first, " was expected");
    }
  }
  if (!forward->status().ok()) return absl::StrCat("forward: ", forward->status().ToString());
  if (expected != model.end()) return absl::StrCat("forward: missing ", expected->first);
  auto backward = store.NewIterator(ReadOptions(), IterateOptions());
  auto reversed = model.rbegin();
  for (backward->SeekToLast(); backward->Valid(); backward->Prev(), ++reversed) {
    if (reversed == model.rend() || backward->key() != reversed->first || backward->value() != reversed->second) {
      return absl::StrCat("backward: unexpected ", std::string(backward->key()));
    }
  }
  if (!backward->status().ok()) return absl::StrCat("backward: ", backward->status().ToString());
  return reversed == model.rend() ? "" : absl::StrCat("backward: missing ", reversed->first);
}

constexpr int kRounds = 300;

TEST(FollowWriterTest, AReadOnlyOpenOfAnotherProcessSeesEachCommitAcknowledgedBeforeItsReadBegan) {
  TempDir dir("/dev/shm");
  const std::string path = dir.File("pool");
  // Small to begin with: the follower's mapping grows with the pool.
  auto writer = OpenOrDie(path, SmallPool(4ull << 20, 512ull << 20));
  ASSERT_NE(writer, nullptr);
  Child follower([&](int in, int out) -> std::string {
    auto store = Store::Open(path, Options{.read_only = true});
    if (!store.ok()) return absl::StrCat("open: ", store.status().ToString());
    WriteByte(out);
    std::mt19937_64 rng(7);
    Model model;
    for (int round = 0; round < kRounds; ++round) {
      if (!ReadByte(in)) return absl::StrCat("the writer left at round ", round);
      const std::vector<std::string> touched = Round(rng, round, model, nullptr);
      std::vector<std::string_view> keys(touched.begin(), touched.end());
      std::vector<std::string> values;
      const std::vector<absl::Status> statuses = (*store)->MultiGet(ReadOptions(), keys, &values);
      for (size_t i = 0; i < touched.size(); ++i) {
        const auto it = model.find(touched[i]);
        std::string value;
        const absl::Status got = (*store)->Get(ReadOptions(), touched[i], &value);
        const absl::StatusOr<bool> contains = (*store)->Contains(touched[i]);
        const bool present = it != model.end();
        if (present != got.ok() || (present && value != it->second) || (!present && !absl::IsNotFound(got))) {
          return absl::StrCat("round ", round, ": Get(", touched[i], ") = ", got.ToString(), ", ", value.size(),
                              " bytes; the model ", present ? "holds it" : "does not");
        }
        if (!contains.ok() || *contains != present)
          return absl::StrCat("round ", round, ": Contains(", touched[i], ")");
        if (statuses[i].ok() != present || (present && values[i] != it->second)) {
          return absl::StrCat("round ", round, ": MultiGet(", touched[i], ") = ", statuses[i].ToString());
        }
      }
      if (round % 50 == 49) {
        const std::string differs = CompareScans(**store, model);
        if (!differs.empty()) return absl::StrCat("round ", round, ": ", differs);
        if ((*store)->GetStats().keys != model.size()) return absl::StrCat("round ", round, ": Stats keys");
      }
      WriteByte(out);
    }
    return "ok";
  });
  ASSERT_TRUE(follower.Receive()) << follower.Finish();
  std::mt19937_64 rng(7);
  Model model;
  for (int round = 0; round < kRounds; ++round) {
    Round(rng, round, model, writer.get());
    ASSERT_TRUE(follower.Send('r')) << follower.Finish();
    ASSERT_TRUE(follower.Receive()) << follower.Finish();
  }
  EXPECT_EQ(follower.Finish(), "ok");
  EXPECT_GT(writer->GetStats().pool_bytes, 4ull << 20) << "the pool was to grow under the follower";
}

// Values written as "KEY:VERSION:padding", versions rising per key.
std::string Versioned(const std::string& key, uint64_t version) {
  return absl::StrCat(key, ":", version, ":", std::string(version % 90, 'p'));
}
bool ParseVersioned(std::string_view value, std::string_view key, uint64_t* version) {
  std::vector<std::string> parts = absl::StrSplit(std::string(value), ':');
  return parts.size() == 3 && parts[0] == key && absl::SimpleAtoi(parts[1], version) &&
         parts[2] == std::string(*version % 90, 'p');
}

// The writer commits a group of keys at a time, each to the group's next
// version, and puts an extra key beside each (KEY + "x") at even versions
// and deletes it at odd ones: leaves split and empty, separators move, and
// one commit's scan of a group sees one version throughout.
constexpr uint64_t kGroupKeys = 20;
constexpr uint64_t kGroups = 150;
constexpr uint64_t kKeys = kGroupKeys * kGroups;

WriteBatch GroupAtVersion(uint64_t group, uint64_t version) {
  WriteBatch batch;
  for (uint64_t i = 0; i < kGroupKeys; ++i) {
    const std::string key = KeyOf(group * kGroupKeys + i);
    batch.Put(key, Versioned(key, version));
    if (version % 2 == 0) {
      batch.Put(key + "x", "extra");
    } else {
      batch.Delete(key + "x");
    }
  }
  return batch;
}

// Every group at version 1, made durable.
bool FillGroups(Store& store) {
  for (uint64_t g = 0; g < kGroups; ++g) {
    if (!store.Write({.sync = false}, GroupAtVersion(g, 1)).ok()) return false;
  }
  return store.Sync().ok();
}

// A pool at `path` with every group at version 1, closed: for a writer of
// another process to open.
bool MakeGroupPool(const std::string& path) {
  auto writer = OpenOrDie(path, SmallPool(8ull << 20, 256ull << 20));
  return writer != nullptr && FillGroups(*writer) && writer->Close().ok();
}

// A scan of `group` through `store`: "" when it read one version of the
// whole group (or was Aborted: *aborted), else what was wrong.
std::string ScanGroup(Store& store, uint64_t group, bool* aborted) {
  const std::string first = KeyOf(group * kGroupKeys);
  auto it = store.NewIterator(ReadOptions(), IterateOptions{.upper_bound = KeyOf((group + 1) * kGroupKeys)});
  std::optional<uint64_t> version;
  uint64_t keys = 0, extras = 0;
  for (it->Seek(first); it->Valid(); it->Next()) {
    const std::string key(it->key());
    if (key.back() == 'x') {
      ++extras;
      continue;
    }
    uint64_t v;
    if (!ParseVersioned(it->value(), key, &v)) return absl::StrCat("scan: a damaged value at ", key);
    if (version.has_value() && v != *version) {
      return absl::StrCat("scan of group ", group, ": versions ", *version, " and ", v, " in one scan");
    }
    version = v;
    ++keys;
  }
  *aborted = absl::IsAborted(it->status());
  if (*aborted) return "";
  if (!it->status().ok()) return absl::StrCat("scan: ", it->status().ToString());
  const uint64_t expected_extras = version.value_or(1) % 2 == 0 ? kGroupKeys : 0;
  if (keys != kGroupKeys || extras != expected_extras) {
    return absl::StrCat("scan of group ", group, " at version ", version.value_or(0), ": ", keys, " keys and ", extras,
                        " extras");
  }
  return "";
}

TEST(FollowWriterTest, AFollowerReadingAsTheWriterCommitsSeesWholeCommitsThatNeverGoBackAndValuesStayWhilePinned) {
  TempDir dir("/dev/shm");
  const std::string path = dir.File("pool");
  auto writer = OpenOrDie(path, SmallPool(8ull << 20, 256ull << 20));
  ASSERT_NE(writer, nullptr);
  std::vector<uint64_t> versions(kGroups, 1);
  ASSERT_TRUE(FillGroups(*writer));
  Child follower([&](int in, int out) -> std::string {
    auto store = Store::Open(path, Options{.read_only = true});
    if (!store.ok()) return absl::StrCat("open: ", store.status().ToString());
    // A pinned value of the first key, held while the writer overwrites
    // it hundreds of times: its bytes must not change.
    PinnedValue pinned;
    if (!(*store)->Get(ReadOptions(), KeyOf(0), &pinned).ok()) return "pinned Get failed";
    const std::string pinned_copy(pinned.value());
    WriteByte(out);
    std::vector<uint64_t> seen(kKeys, 0);
    std::mt19937_64 rng(11);
    uint64_t reads = 0, scans = 0, aborted = 0;
    pollfd stop = {.fd = in, .events = POLLIN, .revents = 0};
    while (poll(&stop, 1, 0) == 0) {
      const uint64_t k = rng() % kKeys;
      std::string value;
      const absl::Status got = (*store)->Get(ReadOptions(), KeyOf(k), &value);
      uint64_t version = 0;
      if (!got.ok() || !ParseVersioned(value, KeyOf(k), &version)) {
        return absl::StrCat("Get(", KeyOf(k), ") = ", got.ToString(), " \"", value.substr(0, 40), "\"");
      }
      if (version < seen[k]) return absl::StrCat(KeyOf(k), " went back from version ", seen[k], " to ", version);
      seen[k] = version;
      if (++reads % 64 == 0) {
        bool was_aborted = false;
        const std::string wrong = ScanGroup(**store, rng() % kGroups, &was_aborted);
        if (!wrong.empty()) return wrong;
        ++(was_aborted ? aborted : scans);
      }
    }
    if (pinned.value() != pinned_copy) return "the pinned value changed under its pin";
    // The writer is done: every key as it left it.
    std::string last;
    for (uint64_t k = 0; k < kKeys; ++k) {
      std::string value;
      if (!(*store)->Get(ReadOptions(), KeyOf(k), &value).ok()) return "final Get failed";
      absl::StrAppend(&last, value, "\n");
    }
    std::fprintf(stderr, "follower: %llu reads, %llu group scans whole, %llu aborted\n",
                 static_cast<unsigned long long>(reads), static_cast<unsigned long long>(scans),
                 static_cast<unsigned long long>(aborted));
    return reads > 1000 && scans > 0 ? last : "too few reads or scans";
  });
  ASSERT_TRUE(follower.Receive()) << follower.Finish();
  std::mt19937_64 rng(5);
  const auto end = std::chrono::steady_clock::now() + std::chrono::seconds(2);
  while (std::chrono::steady_clock::now() < end) {
    // Group 0 (the pinned key's) often, the rest at random; 1 in 8 durable.
    const uint64_t g = rng() % 4 == 0 ? 0 : rng() % kGroups;
    ASSERT_TRUE(writer->Write({.sync = rng() % 8 == 0}, GroupAtVersion(g, ++versions[g])).ok());
  }
  ASSERT_TRUE(follower.Send('s')) << follower.Finish();
  std::string expected;
  for (uint64_t k = 0; k < kKeys; ++k) {
    absl::StrAppend(&expected, Versioned(KeyOf(k), versions[k / kGroupKeys]), "\n");
  }
  EXPECT_EQ(follower.Finish(), expected);
  EXPECT_GT(versions[0], 100u);
}

// Threads of one follower process read, scan and take snapshots at once
// while the writer commits: they catch up in turns (the gate), and each
// still reads whole commits.
TEST(FollowWriterTest, ThreadsOfAFollowerCatchUpInTurnsAndEachReadsWholeCommits) {
  TempDir dir("/dev/shm");
  const std::string path = dir.File("pool");
  auto writer = OpenOrDie(path, SmallPool(8ull << 20, 256ull << 20));
  ASSERT_NE(writer, nullptr);
  std::vector<uint64_t> versions(kGroups, 1);
  ASSERT_TRUE(FillGroups(*writer));
  Child follower([&](int in, int out) -> std::string {
    auto store = Store::Open(path, Options{.read_only = true});
    if (!store.ok()) return absl::StrCat("open: ", store.status().ToString());
    WriteByte(out);
    std::atomic<bool> stop{false};
    std::vector<std::string> wrong(3);
    std::vector<std::thread> threads;
    for (int t = 0; t < 3; ++t) {
      threads.emplace_back([&, t] {
        std::mt19937_64 rng(t);
        while (!stop.load(std::memory_order_relaxed) && wrong[t].empty()) {
          const uint64_t k = rng() % kKeys;
          const std::string keys_held[2] = {KeyOf(k), KeyOf((k + 1) % kKeys)};
          const std::vector<std::string_view> keys = {keys_held[0], keys_held[1]};
          std::vector<std::string> values;
          const std::vector<absl::Status> got = (*store)->MultiGet(ReadOptions(), keys, &values);
          uint64_t v;
          for (size_t i = 0; i < keys.size(); ++i) {
            if (!got[i].ok() || !ParseVersioned(values[i], keys[i], &v)) wrong[t] = "MultiGet: " + got[i].ToString();
          }
          bool aborted;
          if (rng() % 8 == 0 && wrong[t].empty()) wrong[t] = ScanGroup(**store, rng() % kGroups, &aborted);
          if (rng() % 16 == 0 && wrong[t].empty()) {
            auto snapshot = (*store)->GetSnapshot();
            std::string value;
            const absl::Status at = (*store)->Get(ReadOptions{.snapshot = snapshot.get()}, KeyOf(k), &value);
            if (!(at.ok() && ParseVersioned(value, KeyOf(k), &v)) && !absl::IsAborted(at)) {
              wrong[t] = "snapshot Get: " + at.ToString();
            }
          }
        }
      });
    }
    char c;
    (void)!read(in, &c, 1);
    stop = true;
    for (std::thread& thread : threads) thread.join();
    for (const std::string& w : wrong) {
      if (!w.empty()) return w;
    }
    return "ok";
  });
  ASSERT_TRUE(follower.Receive()) << follower.Finish();
  std::mt19937_64 rng(9);
  const auto end = std::chrono::steady_clock::now() + std::chrono::seconds(1);
  while (std::chrono::steady_clock::now() < end) {
    const uint64_t g = rng() % kGroups;
    ASSERT_TRUE(writer->Write({.sync = false}, GroupAtVersion(g, ++versions[g])).ok());
  }
  ASSERT_TRUE(follower.Send('s')) << follower.Finish();
  EXPECT_EQ(follower.Finish(), "ok");
}

// The least key of each leaf of the pool at `path`, in chain order, read
// from the file (a writer may have it open: its last commit is synced).
std::vector<std::string> LeastKeysOfLeaves(const std::string& path) {
  std::vector<std::string> keys;
  const int fd = open(path.c_str(), O_RDONLY);
  struct stat st;
  if (fd < 0 || fstat(fd, &st) != 0) return keys;
  const uint64_t length = static_cast<uint64_t>(st.st_size);
  void* mapped = mmap(nullptr, length, PROT_READ, MAP_SHARED, fd, 0);
  close(fd);
  if (mapped == MAP_FAILED) return keys;
  const char* base = static_cast<const char*>(mapped);
  uint64_t leaf;
  std::memcpy(&leaf, base + internal::kRootHeadLeafWord, sizeof(leaf));
  for (int n = 0; leaf != 0 && leaf + sizeof(internal::Leaf) <= length && n < 100000; ++n) {
    const auto* at = reinterpret_cast<const internal::Leaf*>(base + leaf);
    if (at->header.count > 0) {
      keys.emplace_back(internal::RecordKey(base, length, at->slots[at->header.perm[0]].record));
    }
    leaf = at->header.next;
  }
  munmap(mapped, length);
  return keys;
}

// A snapshot a follower took reads the pool as it was then, after the
// writer overwrote every key in place and after it split every leaf: the
// leaves as they were come from the pool's leaf image ring. The
// follower's map, caught up since, leads to leaves changed or born after
// the snapshot, which it must not read as they are now.
TEST(FollowWriterTest, AFollowersSnapshotReadsItsCommitThroughLeavesChangedAndBornAfterIt) {
  TempDir dir("/dev/shm");
  const std::string path = dir.File("pool");
  auto writer = OpenOrDie(path, SmallPool(8ull << 20, 256ull << 20));
  ASSERT_NE(writer, nullptr);
  ASSERT_TRUE(FillGroups(*writer));
  Child follower([&](int in, int out) -> std::string {
    auto store = Store::Open(path, Options{.read_only = true});
    if (!store.ok()) return absl::StrCat("open: ", store.status().ToString());
    auto snapshot = (*store)->GetSnapshot();
    const ReadOptions at_snapshot{.snapshot = snapshot.get()};
    // Reads around the middle key of each group, a Get of it and of its
    // extra (absent at the snapshot) and a scan each way; "" when each
    // read the snapshot's version 1 and no extra key.
    const auto check = [&](const char* after) -> std::string {
      std::string value;
      if (!(*store)->Get(ReadOptions(), KeyOf(0), &value).ok()) return "Get failed";  // the map catches up
      for (uint64_t g = 0; g < kGroups; ++g) {
        const uint64_t k = g * kGroupKeys + kGroupKeys / 2;
        const std::string key = KeyOf(k);
        const absl::Status extra = (*store)->Get(at_snapshot, key + "x", &value);
        if (!absl::IsNotFound(extra)) return absl::StrCat(after, ": snapshot Get of ", key, "x: ", extra.ToString());
        const absl::Status old = (*store)->Get(at_snapshot, key, &value);
        if (!old.ok() || value != Versioned(key, 1)) {
          return absl::StrCat(after, ": snapshot Get of ", key, ": ", old.ToString(), " ", value);
        }
        for (const bool forward : {true, false}) {
          auto it = (*store)->NewIterator(at_snapshot, IterateOptions());
          uint64_t keys = 0;
          for (forward ? it->Seek(key) : it->SeekForPrev(key); it->Valid() && keys < 3 * kGroupKeys;
               forward ? it->Next() : it->Prev(), ++keys) {
            const std::string at(it->key());
            if (at.back() == 'x' || it->value() != Versioned(at, 1)) {
              return absl::StrCat(after, ": the scan from ", key, " read ", at, " as ", std::string(it->value()));
            }
          }
          if (!it->status().ok()) return absl::StrCat(after, ": scan from ", key, ": ", it->status().ToString());
          if (keys != std::min<uint64_t>(3 * kGroupKeys, forward ? kKeys - k : k + 1)) {
            return absl::StrCat(after, ": the scan from ", key, " read only ", keys, " keys");
          }
        }
      }
      return "";
    };
    WriteByte(out);
    for (const char* after : {"after the overwrites",
                              "after rounds of overwrites that change more leaves than the "
                              "image ring holds",
                              "after the splits"}) {
      if (!ReadByte(in)) return "no word from the writer";
      if (std::string wrong = check(after); !wrong.empty()) return wrong;
      WriteByte(out);
    }
    return "ok";
  });
  ASSERT_TRUE(follower.Receive()) << follower.Finish();
  // Every group at version 3: each key overwritten, each leaf changed in place.
  for (uint64_t g = 0; g < kGroups; ++g) ASSERT_TRUE(writer->Write({.sync = false}, GroupAtVersion(g, 3)).ok());
  ASSERT_TRUE(follower.Send('w') && follower.Receive()) << follower.Finish();
  // The same again, until the leaves changed outnumber the ring's entries
  // twice: the snapshot needs each leaf's image once, kept however often
  // the leaf changes after (all aborted when every change took an entry).
  // A round: one commit that overwrites the least key of every leaf.
  ASSERT_TRUE(writer->Sync().ok());
  const std::vector<std::string> least_keys = LeastKeysOfLeaves(path);
  ASSERT_GT(least_keys.size(), 10u);
  for (size_t round = 0; round * least_keys.size() < 2 * internal::kLeafImageSlots; ++round) {
    WriteBatch batch;
    for (const std::string& key : least_keys) batch.Put(key, Versioned(key, 3));
    ASSERT_TRUE(writer->Write({.sync = false}, batch).ok());
  }
  ASSERT_TRUE(follower.Send('w') && follower.Receive()) << follower.Finish();
  // Every group at version 2, with its extra keys: the leaves split.
  for (uint64_t g = 0; g < kGroups; ++g) ASSERT_TRUE(writer->Write({.sync = false}, GroupAtVersion(g, 2)).ok());
  ASSERT_TRUE(follower.Send('w') && follower.Receive()) << follower.Finish();
  EXPECT_EQ(follower.Finish(), "ok");
}

// A follower's snapshot keeps reading the keys the writer deletes after
// it, least keys first: separators move up past them, leaves empty and
// leave the chain, the head moves. Once the writer has changed more
// leaves than the image ring holds, a snapshot older than them says
// Aborted rather than read the pool as it is now.
TEST(FollowWriterTest, AFollowersSnapshotReadsKeysDeletedAfterItUntilTheImageRingIsOverrun) {
  TempDir dir("/dev/shm");
  const std::string path = dir.File("pool");
  auto writer = OpenOrDie(path, SmallPool(8ull << 20, 256ull << 20));
  ASSERT_NE(writer, nullptr);
  ASSERT_TRUE(FillGroups(*writer));
  constexpr uint64_t kDeleted = kKeys / 2;
  // And the least key of every other leaf after those: the separator
  // moves up past it, and the leaf before stays as it was, so the map
  // routes the key to a leaf unchanged since the snapshot, which never
  // held it.
  std::vector<std::string> least_keys;
  ASSERT_TRUE(writer->Sync().ok());
  const std::vector<std::string> leaves = LeastKeysOfLeaves(path);
  for (size_t i = 2; i < leaves.size(); i += 2) {
    if (leaves[i] > KeyOf(kDeleted)) least_keys.push_back(leaves[i]);
  }
  ASSERT_GT(least_keys.size(), 10u);
  Child follower([&](int in, int out) -> std::string {
    auto store = Store::Open(path, Options{.read_only = true});
    if (!store.ok()) return absl::StrCat("open: ", store.status().ToString());
    auto snapshot = (*store)->GetSnapshot();
    const ReadOptions at_snapshot{.snapshot = snapshot.get()};
    WriteByte(out);
    if (!ReadByte(in)) return "no word from the writer";
    std::string value;
    if (!absl::IsNotFound((*store)->Get(ReadOptions(), KeyOf(0), &value))) return "key 0 was to be deleted";
    std::vector<std::string> deleted = least_keys;
    for (uint64_t k = 0; k < kDeleted; ++k) deleted.push_back(KeyOf(k));
    for (const std::string& key : deleted) {
      const absl::Status got = (*store)->Get(at_snapshot, key, &value);
      if (!got.ok() || value != Versioned(key, 1)) return absl::StrCat("snapshot Get of ", key, ": ", got.ToString());
    }
    for (const bool forward : {true, false}) {
      auto it = (*store)->NewIterator(at_snapshot, IterateOptions());
      uint64_t keys = 0;
      for (forward ? it->SeekToFirst() : it->SeekToLast(); it->Valid(); forward ? it->Next() : it->Prev()) ++keys;
      if (!it->status().ok() || keys != kKeys) {
        return absl::StrCat(forward ? "forward" : "backward", " scan: ", keys, " keys, ", it->status().ToString());
      }
    }
    WriteByte(out);
    // A newer snapshot after each commit of the writer ('n'), which reads
    // each leaf as it is: every change needs an image, the overrun's. The
    // one before still reads its commit: the process's newest pin counts,
    // not only its oldest.
    std::unique_ptr<Snapshot> newer;
    std::vector<std::string> left;  // the keys each round overwrites
    char word;
    for (uint64_t round = 0; read(in, &word, 1) == 1 && word == 'n'; ++round) {
      if (newer == nullptr) left = LeastKeysOfLeaves(path);
      for (const std::string& key : newer == nullptr ? std::vector<std::string>() : left) {
        const absl::Status got = (*store)->Get(ReadOptions{.snapshot = newer.get()}, key, &value);
        if (!got.ok() || value != Versioned(key, 2 + (round - 1) % 2)) {
          return absl::StrCat("round ", round, ": the previous round's snapshot read ", key, ": ", got.ToString());
        }
      }
      newer = (*store)->GetSnapshot();
      WriteByte(out);
    }
    if (word != 'w') return "no word from the writer";
    const absl::Status overrun = (*store)->Get(at_snapshot, KeyOf(kKeys - 1), &value);
    if (!absl::IsAborted(overrun)) return "after the overrun: " + overrun.ToString();
    return "ok";
  });
  ASSERT_TRUE(follower.Receive()) << follower.Finish();
  for (uint64_t k = 0; k < kDeleted; ++k) ASSERT_TRUE(writer->Delete({.sync = false}, KeyOf(k)).ok());
  for (const std::string& key : least_keys) ASSERT_TRUE(writer->Delete({.sync = false}, key).ok());
  ASSERT_TRUE(follower.Send('w') && follower.Receive()) << follower.Finish();
  // The least key of every leaf left overwritten, a commit each round,
  // each round read by a newer snapshot, until the ring holds no image
  // older than the last round's thousands.
  ASSERT_TRUE(writer->Sync().ok());
  const std::vector<std::string> left = LeastKeysOfLeaves(path);
  ASSERT_GT(left.size(), 10u);
  for (size_t round = 0; round * left.size() < 2 * internal::kLeafImageSlots; ++round) {
    WriteBatch batch;
    for (const std::string& key : left) batch.Put(key, Versioned(key, 2 + round % 2));
    ASSERT_TRUE(writer->Write({.sync = false}, batch).ok());
    ASSERT_TRUE(follower.Send('n') && follower.Receive()) << follower.Finish();
  }
  ASSERT_TRUE(follower.Send('w')) << follower.Finish();
  EXPECT_EQ(follower.Finish(), "ok");
}

// A pool at `path` of keys 0-99, each durable with `value`, closed.
void MakeClosedPool(const std::string& path, const std::string& value) {
  auto writer = OpenOrDie(path, SmallPool());
  ASSERT_NE(writer, nullptr);
  for (uint64_t k = 0; k < 100; ++k) ASSERT_TRUE(writer->Put({}, KeyOf(k), value).ok());
}

// What Store::Open of `path` with `options`, then Close, return in
// another process ("ok" when both succeed).
std::string OpenElsewhere(const std::string& path, const Options& options) {
  return testing::InAChild([&] {
    auto store = Store::Open(path, options);
    if (!store.ok()) return store.status().ToString();
    const absl::Status closed = (*store)->Close();
    return closed.ok() ? std::string("ok") : closed.ToString();
  });
}

TEST(FollowWriterTest, ThePoolLockLetsReadOnlyOpensBesideOneWriterUnlessAnOpenIsExclusive) {
  TempDir dir("/dev/shm");
  const std::string path = dir.File("pool");
  const Options read_only{.read_only = true};
  const Options alone{.exclusive = true};
  {
    auto writer = OpenOrDie(path, SmallPool());
    ASSERT_NE(writer, nullptr);
    EXPECT_EQ(OpenElsewhere(path, read_only), "ok");
    const std::string second_writer = OpenElsewhere(path, Options());
    EXPECT_NE(second_writer.find("FAILED_PRECONDITION"), std::string::npos) << second_writer;
    EXPECT_NE(second_writer.find("open for writing"), std::string::npos) << second_writer;
    const std::string exclusive_writer = OpenElsewhere(path, alone);
    EXPECT_NE(exclusive_writer.find("FAILED_PRECONDITION"), std::string::npos) << exclusive_writer;
    const std::string exclusive_reader = OpenElsewhere(path, Options{.read_only = true, .exclusive = true});
    EXPECT_NE(exclusive_reader.find("FAILED_PRECONDITION"), std::string::npos) << exclusive_reader;
  }
  {
    auto writer = OpenOrDie(path, alone);
    ASSERT_NE(writer, nullptr);
    const std::string reader = OpenElsewhere(path, read_only);
    EXPECT_NE(reader.find("alone (Options::exclusive)"), std::string::npos) << reader;
  }
  {
    auto reader = OpenOrDie(path, Options{.read_only = true, .exclusive = true});
    ASSERT_NE(reader, nullptr);
    EXPECT_EQ(OpenElsewhere(path, read_only), "ok");
    const std::string writer = OpenElsewhere(path, Options());
    EXPECT_NE(writer.find("open read-only, alone"), std::string::npos) << writer;
  }
  {
    // A reader that was there first follows the writer that joins it.
    auto reader = OpenOrDie(path, read_only);
    ASSERT_NE(reader, nullptr);
    const std::string exclusive_writer = OpenElsewhere(path, alone);
    EXPECT_NE(exclusive_writer.find("FAILED_PRECONDITION"), std::string::npos) << exclusive_writer;
    std::string value;
    EXPECT_TRUE(absl::IsNotFound(reader->Get(ReadOptions(), "joined", &value)));
    EXPECT_EQ(testing::InAChild([&] {
                auto writer = Store::Open(path, Options());
                if (!writer.ok()) return writer.status().ToString();
                return (*writer)->Put({}, "joined", "yes").ToString();
              }),
              "OK");
    ASSERT_TRUE(reader->Get(ReadOptions(), "joined", &value).ok());
    EXPECT_EQ(value, "yes");
    // Writes stay refused in a read-only open.
    EXPECT_TRUE(absl::IsPermissionDenied(reader->Put({}, "k", "v")));
  }
}

// The writer is killed with SIGKILL at random points, inside commits
// among them, while the follower reads; each time a new writer opens the
// pool (recovering it) and goes on. The follower never reads a torn value
// or a scan of two versions, only waits (Unavailable, once a leaf stays
// mid-commit for a second) until the next writer recovers, and ends with
// exactly what a fresh open reads.
TEST(FollowWriterTest, AFollowerGoesOnThroughWritersKilledInsideCommitsAndTheirRecoveries) {
  TempDir dir("/dev/shm");
  const std::string path = dir.File("pool");
  ASSERT_TRUE(MakeGroupPool(path));
  auto follower = OpenOrDie(path, Options{.read_only = true});
  ASSERT_NE(follower, nullptr);
  std::mt19937_64 rng(3);
  uint64_t reads = 0, unavailable = 0, scans = 0, aborted = 0;
  // Reads for `ms` milliseconds: "" or what was wrong.
  const auto read_for = [&](int ms) -> std::string {
    const auto end = std::chrono::steady_clock::now() + std::chrono::milliseconds(ms);
    while (std::chrono::steady_clock::now() < end) {
      const uint64_t k = rng() % kKeys;
      std::string value;
      const absl::Status got = follower->Get(ReadOptions(), KeyOf(k), &value);
      uint64_t version;
      if (absl::IsUnavailable(got)) {
        ++unavailable;
        continue;
      }
      if (!got.ok() || !ParseVersioned(value, KeyOf(k), &version)) return absl::StrCat("Get: ", got.ToString());
      if (++reads % 16 == 0) {
        bool was_aborted = false;
        const std::string wrong = ScanGroup(*follower, rng() % kGroups, &was_aborted);
        if (!wrong.empty() && wrong.find("UNAVAILABLE") == std::string::npos) return wrong;
        ++(was_aborted ? aborted : scans);
      }
    }
    return "";
  };
  for (int life = 0; life < 6; ++life) {
    int ready[2];
    ASSERT_EQ(pipe(ready), 0);
    std::fflush(nullptr);
    const pid_t writer = fork();
    if (writer == 0) {
      close(ready[0]);
      auto store = Store::Open(path, Options());
      if (!store.ok()) _exit(1);
      if (write(ready[1], "r", 1) != 1) _exit(1);
      std::mt19937_64 writes(life);
      for (uint64_t version = 2;; ++version) {
        if (!(*store)->Write({.sync = writes() % 8 == 0}, GroupAtVersion(writes() % kGroups, version)).ok()) _exit(2);
      }
    }
    close(ready[1]);
    char c;
    ASSERT_EQ(read(ready[0], &c, 1), 1) << "writer " << life << " did not open the pool";
    close(ready[0]);
    ASSERT_EQ(read_for(static_cast<int>(20 + rng() % 150)), "") << "writer " << life << " alive";
    kill(writer, SIGKILL);
    int status = 0;
    ASSERT_EQ(waitpid(writer, &status, 0), writer);
    ASSERT_TRUE(WIFSIGNALED(status)) << "writer " << life << " was to be killed, not to exit";
    ASSERT_EQ(read_for(30), "") << "writer " << life << " dead";
  }
  // A last writer recovers the pool and closes it; the follower then reads
  // what a fresh open in another process reads.
  ASSERT_EQ(testing::InAChild([&] { return Store::Open(path, Options()).status().ToString(); }), "OK");
  std::string mine;
  for (uint64_t k = 0; k < kKeys; ++k) {
    std::string value;
    ASSERT_TRUE(follower->Get(ReadOptions(), KeyOf(k), &value).ok()) << KeyOf(k);
    absl::StrAppend(&mine, value, "\n");
  }
  EXPECT_EQ(mine, testing::InAChild([&] {
              auto fresh = Store::Open(path, Options{.read_only = true, .exclusive = true});
              if (!fresh.ok()) return fresh.status().ToString();
              std::string all;
              for (uint64_t k = 0; k < kKeys; ++k) {
                std::string value;
                if (!(*fresh)->Get(ReadOptions(), KeyOf(k), &value).ok()) return std::string("missing");
                absl::StrAppend(&all, value, "\n");
              }
              return all;
            }));
  EXPECT_GT(reads, 1000u);
  std::fprintf(stderr, "follower: %llu reads (%llu unavailable), %llu group scans whole, %llu aborted\n",
               static_cast<unsigned long long>(reads), static_cast<unsigned long long>(unavailable),
               static_cast<unsigned long long>(scans), static_cast<unsigned long long>(aborted));
}

// What a writer that died between stamping a leaf and publishing its
// commit leaves (the region's applying word and the leaf's version word
// both at the commit, made here by hand since a kill lands there rarely):
// a follower's read of that leaf waits a second, then says Unavailable and
// why; the next writable open recovers, publishes, and the read succeeds.
TEST(FollowWriterTest, ALeafLeftMidCommitByADeadWriterIsUnavailableUntilTheNextWriterOpens) {
  TempDir dir("/dev/shm");
  const std::string path = dir.File("pool");
  ASSERT_NO_FATAL_FAILURE(MakeClosedPool(path, "v"));
  int up[2], down[2];  // child to parent, parent to child
  ASSERT_EQ(pipe(up), 0);
  ASSERT_EQ(pipe(down), 0);
  std::fflush(nullptr);
  const pid_t dead = fork();
  if (dead == 0) {
    close(up[0]);
    close(down[1]);
    auto store = Store::Open(path, Options());
    const int fd = open(path.c_str(), O_RDWR | O_CLOEXEC);
    if (!store.ok() || fd < 0) _exit(1);
    char c;
    if (write(up[1], "o", 1) != 1 || read(down[0], &c, 1) != 1) _exit(2);  // the follower opened
    auto slot = internal::ReaderSlot::Attach(env::Env::Default(), fd, /*writable=*/true);
    struct stat st;
    if (!slot.ok() || fstat(fd, &st) != 0) _exit(3);
    char* base = static_cast<char*>(mmap(nullptr, st.st_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0));
    if (base == MAP_FAILED) _exit(4);
    internal::ChangeRing ring = (*slot)->change_ring();
    const uint64_t commit = ring.published().value_or(0) + 1;
    uint64_t head;
    std::memcpy(&head, base + internal::kRootHeadLeafWord, sizeof(head));
    ring.BeginApplying(commit);
    internal::LeafVersion(base, head).store(commit, std::memory_order_relaxed);
    _exit(0);  // dies without publishing the commit
  }
  close(up[1]);
  close(down[0]);
  char c;
  ASSERT_EQ(read(up[0], &c, 1), 1);
  auto follower = OpenOrDie(path, Options{.read_only = true});
  ASSERT_NE(follower, nullptr);
  ASSERT_EQ(write(down[1], "g", 1), 1);
  int status = 0;
  ASSERT_EQ(waitpid(dead, &status, 0), dead);
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
  close(up[0]);
  close(down[1]);
  std::string value;
  const auto start = std::chrono::steady_clock::now();
  const absl::Status stuck = follower->Get(ReadOptions(), KeyOf(0), &value);
  EXPECT_TRUE(absl::IsUnavailable(stuck)) << stuck;
  EXPECT_NE(stuck.message().find("mid-commit for over a second"), std::string::npos) << stuck;
  EXPECT_GE(std::chrono::steady_clock::now() - start, std::chrono::seconds(1));
  // A leaf the dead writer did not stamp reads at once.
  EXPECT_TRUE(follower->Get(ReadOptions(), KeyOf(99), &value).ok());
  ASSERT_EQ(testing::InAChild([&] {
              auto writer = Store::Open(path, Options());
              return writer.ok() ? (*writer)->Put({}, KeyOf(0), "after").ToString() : writer.status().ToString();
            }),
            "OK");
  ASSERT_TRUE(follower->Get(ReadOptions(), KeyOf(0), &value).ok());
  EXPECT_EQ(value, "after");
}

// Checks of a pool another process writes: each holds the writers' turn
// and checks the commit it found, while the writer's commits split and
// empty leaves and move separators; none may report the writer's commit
// in flight as damage.
TEST(FollowWriterTest, ChecksOfAPoolAnotherProcessWritesEachCheckOneCommit) {
  constexpr uint64_t kCommitsAtLeast = 150;
  TempDir dir("/dev/shm");
  const std::string path = dir.File("pool");
  ASSERT_TRUE(MakeGroupPool(path));
  Child writer([&](int in, int out) -> std::string {
    auto store = Store::Open(path, Options());
    if (!store.ok()) return store.status().ToString();
    if (!WriteByte(out)) return "the parent is gone";
    std::mt19937_64 rng(5);
    uint64_t commits = 0;
    for (uint64_t version = 2;; ++version, ++commits) {
      pollfd stop = {in, POLLIN, 0};
      if (poll(&stop, 1, 0) > 0) break;
      const absl::Status written = (*store)->Write({.sync = rng() % 8 == 0}, GroupAtVersion(rng() % kGroups, version));
      if (!written.ok()) return written.ToString();
      if (commits == kCommitsAtLeast && !WriteByte(out)) return "the parent is gone";
    }
    return absl::StrCat(commits);
  });
  ASSERT_TRUE(writer.Receive());
  auto follower = OpenOrDie(path, Options{.read_only = true});
  ASSERT_NE(follower, nullptr);
  // Checks for a second, and on until the writer has made its commits
  // (the checks hold its turn: how many it gets in a second varies).
  int checks = 0;
  const auto start = std::chrono::steady_clock::now();
  for (bool committed = false; !committed || std::chrono::steady_clock::now() < start + std::chrono::seconds(1);
       ++checks) {
    committed = committed || writer.Said();
    ASSERT_LT(std::chrono::steady_clock::now(), start + std::chrono::seconds(60)) << "the writer never got its turn";
    const CheckReport report = follower->CheckNow();
    ASSERT_TRUE(report.clean()) << "check " << checks << ": " << absl::StrJoin(report.problems, "; ");
    // Every group's keys, and its extras when its version is even.
    EXPECT_GE(report.keys, kKeys);
    EXPECT_LE(report.keys, 2 * kKeys);
  }
  // pmstore check's open, in a process of its own.
  EXPECT_EQ(testing::InAChild([&] {
              auto report = Store::Check(path);
              if (!report.ok()) return report.status().ToString();
              return report->clean() ? std::string("clean") : absl::StrJoin(report->problems, "; ");
            }),
            "clean");
  ASSERT_TRUE(writer.Send('s'));
  const std::string said = writer.Finish();
  uint64_t commits = 0;
  ASSERT_TRUE(absl::SimpleAtoi(said, &commits)) << said;
  EXPECT_GE(commits, kCommitsAtLeast) << "the writer hardly wrote: the checks met no commit";
  EXPECT_GT(checks, 10);
  std::fprintf(stderr, "%d checks while the writer made %llu commits\n", checks,
               static_cast<unsigned long long>(commits));
}

// The pipes of the process a PausingPersister pauses (a Child's): it says
// "paused" on g_paused and waits for a byte on g_resume.
int g_paused = -1;
int g_resume = -1;

// The real persister, paused at its first flush: inside the recovery of
// a writable open that finds an unsynced run cut short.
class PausingPersister final : public internal::Persister {
 public:
  explicit PausingPersister(std::unique_ptr<internal::Persister> real) : real_(std::move(real)) {}
  static std::unique_ptr<internal::Persister> Make(const mapping::Mapping& mapping, const mapping::PoolFile& file) {
    return std::make_unique<PausingPersister>(internal::MakeMappingPersister(mapping, file));
  }
  absl::Status Flush(const void* addr, size_t size) override {
    if (!paused_) {
      paused_ = true;
      char c;
      if (write(g_paused, "p", 1) != 1 || read(g_resume, &c, 1) != 1) _exit(5);
    }
    return real_->Flush(addr, size);
  }
  absl::Status Drain() override { return real_->Drain(); }
  absl::Status SyncLength() override { return real_->SyncLength(); }

 private:
  std::unique_ptr<internal::Persister> real_;
  bool paused_ = false;
};

// A writable open's recovery writes leaves in place without their version
// words; a follower must read none of them meanwhile. A writer killed
// inside an unsynced run leaves its values in the pool, where the
// follower reads them; the next writable open, paused inside its recovery
// (which, on the same boot, keeps the run and writes the pool back; a
// power failure would roll the run back), holds the follower's reads off:
// they say Unavailable after a second. Once it has opened, the follower
// reads the run's values, which the kill did not lose.
TEST(FollowWriterTest, AFollowerReadsNoLeafWhileTheNextWriterRecoversThePoolInPlace) {
  TempDir dir("/dev/shm");
  const std::string path = dir.File("pool");
  ASSERT_NO_FATAL_FAILURE(MakeClosedPool(path, "durable"));
  Child killed([&](int, int out) -> std::string {
    auto store = Store::Open(path, Options());
    if (!store.ok()) return store.status().ToString();
    for (uint64_t k = 0; k < 100; ++k) {
      const absl::Status put = (*store)->Put({.sync = false}, KeyOf(k), "unsynced");
      if (!put.ok()) return put.ToString();
    }
    if (!WriteByte(out)) return "the parent is gone";
    pause();
    return "not killed";
  });
  ASSERT_TRUE(killed.Receive());
  auto follower = OpenOrDie(path, Options{.read_only = true});
  ASSERT_NE(follower, nullptr);
  std::string value;
  ASSERT_TRUE(follower->Get(ReadOptions(), KeyOf(7), &value).ok());
  EXPECT_EQ(value, "unsynced");
  ASSERT_TRUE(killed.Kill());
  // What another process read of the run stays readable after the kill:
  // the values are in the pool, and nothing has rolled them back yet.
  ASSERT_TRUE(follower->Get(ReadOptions(), KeyOf(7), &value).ok());
  EXPECT_EQ(value, "unsynced");

  Child recovering([&](int in, int out) -> std::string {
    g_paused = out;
    g_resume = in;
    auto store = StoreImpl::OpenWith(path, Options(), &PausingPersister::Make);
    if (!store.ok()) return store.status().ToString();
    return (*store)->Close().ToString();
  });
  ASSERT_TRUE(recovering.Receive()) << "the writable open never flushed during its recovery";
  const auto start = std::chrono::steady_clock::now();
  const absl::Status during = follower->Get(ReadOptions(), KeyOf(7), &value);
  EXPECT_TRUE(absl::IsUnavailable(during)) << during << " (read " << value << ")";
  EXPECT_GE(std::chrono::steady_clock::now() - start, std::chrono::seconds(1));
  ASSERT_TRUE(recovering.Send('r'));
  ASSERT_EQ(recovering.Finish(), "OK");
  for (uint64_t k = 0; k < 100; ++k) {
    ASSERT_TRUE(follower->Get(ReadOptions(), KeyOf(k), &value).ok()) << KeyOf(k);
    EXPECT_EQ(value, "unsynced") << KeyOf(k);
  }
}

// Set in a writer's child once its open is done: its DyingPersister exits
// the process right after the next drain.
bool g_die_after_drain = false;

// The real persister, whose process dies right after a drain once told
// to: after a durable commit's commit point, before the commit is applied.
class DyingPersister final : public internal::Persister {
 public:
  explicit DyingPersister(std::unique_ptr<internal::Persister> real) : real_(std::move(real)) {}
  static std::unique_ptr<internal::Persister> Make(const mapping::Mapping& mapping, const mapping::PoolFile& file) {
    return std::make_unique<DyingPersister>(internal::MakeMappingPersister(mapping, file));
  }
  absl::Status Flush(const void* addr, size_t size) override { return real_->Flush(addr, size); }
  absl::Status Drain() override {
    const absl::Status drained = real_->Drain();
    if (g_die_after_drain) _exit(0);
    return drained;
  }
  absl::Status SyncLength() override { return real_->SyncLength(); }

 private:
  std::unique_ptr<internal::Persister> real_;
};

// A writer that dies after its commit is durable and before it applies it
// leaves the commit to the next writable open, which replays it in place
// with no version word to say which leaves it changed: a follower's
// snapshot begun before would read them as its own commit's. Once the pool
// was recovered in place, such a snapshot says Aborted (before it, it reads
// its commit); a snapshot begun after reads the recovered commit.
TEST(FollowWriterTest, AFollowersSnapshotBegunBeforeTheNextWriterReplayedACommitInPlaceSaysAborted) {
  TempDir dir("/dev/shm");
  const std::string path = dir.File("pool");
  ASSERT_NO_FATAL_FAILURE(MakeClosedPool(path, "before"));
  auto follower = OpenOrDie(path, Options{.read_only = true});
  ASSERT_NE(follower, nullptr);
  auto snapshot = follower->GetSnapshot();
  const ReadOptions at_snapshot{.snapshot = snapshot.get()};
  std::string value;
  Child dying([&](int, int) -> std::string {
    auto store = StoreImpl::OpenWith(path, Options(), &DyingPersister::Make);
    if (!store.ok()) return store.status().ToString();
    g_die_after_drain = true;
    return "alive after the put: " + (*store)->Put({.sync = true}, KeyOf(7), "after").ToString();
  });
  ASSERT_EQ(dying.Finish(), "") << "the writer was to die at its commit's drain";
  ASSERT_TRUE(follower->Get(at_snapshot, KeyOf(7), &value).ok());
  EXPECT_EQ(value, "before") << "the commit was never applied";

  ASSERT_EQ(OpenElsewhere(path, Options()), "ok") << "the writable open that recovers the pool";
  ASSERT_TRUE(follower->Get(ReadOptions(), KeyOf(7), &value).ok());
  EXPECT_EQ(value, "after") << "the commit was durable: the recovery replayed it";
  const absl::Status old = follower->Get(at_snapshot, KeyOf(7), &value);
  EXPECT_TRUE(absl::IsAborted(old)) << old << " (read " << value << ")";
  EXPECT_NE(old.message().find("recovered"), std::string_view::npos) << old;
  auto it = follower->NewIterator(at_snapshot, IterateOptions());
  uint64_t keys = 0;
  for (it->SeekToFirst(); it->Valid(); it->Next()) ++keys;
  EXPECT_TRUE(absl::IsAborted(it->status())) << it->status() << " after " << keys << " keys";
  auto fresh = follower->GetSnapshot();
  ASSERT_TRUE(follower->Get(ReadOptions{.snapshot = fresh.get()}, KeyOf(7), &value).ok());
  EXPECT_EQ(value, "after");
  // A writable open with nothing to recover writes nothing in place: the
  // snapshot goes on reading.
  ASSERT_EQ(OpenElsewhere(path, Options()), "ok");
  const absl::Status after_clean_open = follower->Get(ReadOptions{.snapshot = fresh.get()}, KeyOf(7), &value);
  EXPECT_TRUE(after_clean_open.ok()) << after_clean_open;
  EXPECT_EQ(value, "after");
}

}  // namespace
}  // namespace pmstore
