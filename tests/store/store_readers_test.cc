// The reader table (Store::Readers, ClearStaleReaders): every open of a
// pool by any process is listed until it closes, a process killed with the
// pool open is listed as stale until its slot is cleared or taken, and a
// forked child does not keep its dead parent's slot alive. Real processes,
// real kills, the real /dev/shm.
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <optional>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "pmstore/env/env.h"
#include "pmstore/share/lock_region.h"
#include "pmstore/store.h"
#include "store/store_test_util.h"
#include "support/temp_dir.h"

namespace pmstore {
namespace {

using testing::OpenOrDie;
using testing::SmallPool;

Options ReadOnly() {
  Options options;
  options.read_only = true;
  return options;
}

std::string RegionPathOf(const std::string& pool) {
  struct stat st;
  EXPECT_EQ(stat(pool.c_str(), &st), 0) << pool;
  return internal::LockRegionPath(st);
}

std::vector<ReaderInfo> ReadersOrDie(const std::string& pool) {
  auto readers = Store::Readers(pool);
  EXPECT_TRUE(readers.ok()) << readers.status();
  return readers.ok() ? *readers : std::vector<ReaderInfo>{};
}

const ReaderInfo* Find(const std::vector<ReaderInfo>& readers, pid_t pid) {
  auto it = std::find_if(readers.begin(), readers.end(), [&](const ReaderInfo& r) { return r.pid == pid; });
  return it == readers.end() ? nullptr : &*it;
}

// A process that opens the pool and holds it open until told to close it
// (Release) or killed (Kill). Its first word through the pipe says it has
// the pool open (or failed: -1).
class Holder {
 public:
  // `fork_grandchild`: after opening, the holder forks a child that sleeps
  // with the holder's descriptors. The child reports its own pid as the
  // second word: fork has returned there, so the handlers that run in a
  // forked child have run (the holder's word alone would not say so).
  Holder(const std::string& pool, const Options& options, bool fork_grandchild = false) {
    int ready[2], hold[2];
    if (pipe(ready) != 0 || pipe(hold) != 0) return;
    pid_ = fork();
    if (pid_ == 0) {
      close(ready[0]);
      close(hold[1]);
      auto store = Store::Open(pool, options);
      const int64_t word = store.ok() ? getpid() : -1;
      if (write(ready[1], &word, sizeof(word)) != sizeof(word)) _exit(3);
      if (store.ok() && fork_grandchild && fork() == 0) {
        const int64_t grandchild = getpid();
        if (write(ready[1], &grandchild, sizeof(grandchild)) != sizeof(grandchild)) _exit(3);
        char byte;
        while (read(hold[0], &byte, 1) > 0) {
        }
        _exit(0);
      }
      char byte;
      while (read(hold[0], &byte, 1) > 0) {
      }
      _exit(store.ok() && (*store)->Close().ok() ? 0 : 2);
    }
    close(ready[1]);
    close(hold[0]);
    hold_ = hold[1];
    int64_t word = -1;
    opened_ = read(ready[0], &word, sizeof(word)) == sizeof(word) && word == pid_;
    if (opened_ && fork_grandchild) {
      if (read(ready[0], &word, sizeof(word)) == sizeof(word)) grandchild_ = static_cast<pid_t>(word);
    }
    close(ready[0]);
  }
  ~Holder() {
    if (grandchild_ > 0) kill(grandchild_, SIGKILL);
    if (hold_ >= 0) close(hold_);
    if (pid_ > 0 && !reaped_) waitpid(pid_, nullptr, 0);
  }

  bool opened() const { return opened_; }
  pid_t pid() const { return pid_; }
  pid_t grandchild() const { return grandchild_; }

  // Closes the store and exits; the exit status says whether Close was OK.
  int Release() {
    close(hold_);
    hold_ = -1;
    int status = 0;
    waitpid(pid_, &status, 0);
    reaped_ = true;
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  }
  void Kill() {
    kill(pid_, SIGKILL);
    waitpid(pid_, nullptr, 0);
    reaped_ = true;
  }

 private:
  pid_t pid_ = -1;
  pid_t grandchild_ = -1;
  int hold_ = -1;
  bool opened_ = false;
  bool reaped_ = false;
};

class ReadersTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_FALSE(dir_.path().empty());
    auto store = OpenOrDie(pool_, SmallPool());
    ASSERT_TRUE(store->Put("k", "v").ok());
    ASSERT_TRUE(store->Close().ok());
  }

  TempDir dir_;
  const std::string pool_ = dir_.File("pool");
};

TEST_F(ReadersTest, EveryOpenIsListedUntilItClosesAndTheLastCloseRemovesTheTable) {
  EXPECT_TRUE(ReadersOrDie(pool_).empty());
  auto writer = OpenOrDie(pool_, Options());
  std::vector<ReaderInfo> readers = ReadersOrDie(pool_);
  ASSERT_EQ(readers.size(), 1u);
  EXPECT_EQ(readers[0].pid, getpid());
  EXPECT_TRUE(readers[0].writable);
  EXPECT_FALSE(readers[0].stale);
  EXPECT_GT(readers[0].opened_unix_ns, 0);
  struct stat st;
  EXPECT_EQ(stat(RegionPathOf(pool_).c_str(), &st), 0) << "the table lives while the pool is open";
  ASSERT_TRUE(writer->Close().ok());
  EXPECT_TRUE(ReadersOrDie(pool_).empty());
  EXPECT_NE(stat(RegionPathOf(pool_).c_str(), &st), 0) << "the last to close removes the table";

  auto first = OpenOrDie(pool_, ReadOnly());
  Holder second(pool_, ReadOnly());
  ASSERT_TRUE(second.opened());
  readers = ReadersOrDie(pool_);
  ASSERT_EQ(readers.size(), 2u);
  EXPECT_NE(readers[0].slot, readers[1].slot);
  for (const ReaderInfo& r : readers) EXPECT_FALSE(r.writable);
  ASSERT_TRUE(first->Close().ok());
  readers = ReadersOrDie(pool_);
  ASSERT_EQ(readers.size(), 1u);
  EXPECT_EQ(readers[0].pid, second.pid());
}

// What the open's slot says it pins.
std::optional<uint64_t> PinnedOf(const std::string& pool) {
  const std::vector<ReaderInfo> readers = ReadersOrDie(pool);
  EXPECT_EQ(readers.size(), 1u);
  return readers.empty() ? std::nullopt : readers[0].pinned_commit;
}

// A writable open's last commit, as its slot says.
std::optional<uint64_t> LastCommitOf(const std::string& pool) {
  const std::vector<ReaderInfo> readers = ReadersOrDie(pool);
  EXPECT_EQ(readers.size(), 1u);
  return readers.empty() ? std::nullopt : readers[0].last_commit;
}

// The commit a store's reads see now.
uint64_t CurrentCommit(Store& store) { return store.GetSnapshot()->sequence(); }

TEST_F(ReadersTest, AWritableOpenPublishesItsLastCommitAndAReadOnlyOneNone) {
  {
    auto store = OpenOrDie(pool_, Options());
    const uint64_t found = CurrentCommit(*store);
    EXPECT_GT(found, 0u) << "the pool was written before";
    EXPECT_EQ(LastCommitOf(pool_), found) << "the commit found at open is published";
    ASSERT_TRUE(store->Put("a", "1").ok());
    ASSERT_TRUE(store->Put(WriteOptions{.sync = false}, "b", "2").ok());
    const uint64_t now = CurrentCommit(*store);
    EXPECT_GT(now, found);
    EXPECT_EQ(LastCommitOf(pool_), now) << "durable and unsynced commits are published";
    EXPECT_FALSE(store->Put(std::string(kMaxKeySize + 1, 'k'), "v").ok());
    EXPECT_EQ(LastCommitOf(pool_), now) << "a refused write published a commit";
    ASSERT_TRUE(store->Close().ok());
  }
  Holder reader(pool_, ReadOnly());
  ASSERT_TRUE(reader.opened());
  const std::vector<ReaderInfo> readers = ReadersOrDie(pool_);
  const ReaderInfo* info = Find(readers, reader.pid());
  ASSERT_NE(info, nullptr);
  EXPECT_FALSE(info->writable);
  EXPECT_EQ(info->last_commit, std::nullopt) << "a read-only open makes no commits";
  EXPECT_EQ(reader.Release(), 0);
}

TEST_F(ReadersTest, EachOpenPublishesTheOldestCommitItsReadsPin) {
  auto store = OpenOrDie(pool_, Options());
  EXPECT_EQ(PinnedOf(pool_), std::nullopt);
  auto empty = store->GetSnapshot();  // commit 0 of an empty pool is pinned too
  EXPECT_EQ(PinnedOf(pool_), std::optional<uint64_t>(empty->sequence()));
  empty.reset();
  EXPECT_EQ(PinnedOf(pool_), std::nullopt);

  ASSERT_TRUE(store->Put("a", "1").ok());
  auto older = store->GetSnapshot();
  ASSERT_TRUE(store->Put("b", "2").ok());
  auto newer = store->GetSnapshot();
  ASSERT_LT(older->sequence(), newer->sequence());
  const std::optional<uint64_t> older_seq = older->sequence();
  EXPECT_EQ(PinnedOf(pool_), older_seq) << "the oldest pin is published";
  older.reset();
  // Until the next commit the published one may be older than the truth
  // (it only keeps space longer); the commit publishes the truth.
  EXPECT_EQ(PinnedOf(pool_), older_seq);
  ASSERT_TRUE(store->Put("b", "3").ok());
  EXPECT_EQ(PinnedOf(pool_), std::optional<uint64_t>(newer->sequence()));
  newer.reset();

  // A value read in place, an iterator and a transaction each pin the
  // commit they read.
  ASSERT_TRUE(store->Put("c", "3").ok());
  const std::optional<uint64_t> latest = [&] {
    auto now = store->GetSnapshot();
    return std::optional<uint64_t>(now->sequence());
  }();
  {
    PinnedValue value;
    ASSERT_TRUE(store->Get(ReadOptions(), "a", &value).ok());
    EXPECT_EQ(PinnedOf(pool_), latest);
  }
  EXPECT_EQ(PinnedOf(pool_), std::nullopt);
  {
    auto iterator = store->NewIterator(ReadOptions(), IterateOptions());
    iterator->SeekToFirst();
    ASSERT_TRUE(iterator->Valid());
    EXPECT_EQ(PinnedOf(pool_), latest);
  }
  EXPECT_EQ(PinnedOf(pool_), std::nullopt);
  {
    auto transaction = store->BeginTransaction(TransactionOptions());
    EXPECT_EQ(PinnedOf(pool_), latest);
    transaction->Rollback();
  }
  EXPECT_EQ(PinnedOf(pool_), std::nullopt);
}

TEST_F(ReadersTest, ListsTheOpensOfOtherProcessesWhileTheyHoldThePool) {
  Holder writer(pool_, Options());
  ASSERT_TRUE(writer.opened());
  std::vector<ReaderInfo> readers = ReadersOrDie(pool_);
  ASSERT_EQ(readers.size(), 1u);
  EXPECT_EQ(readers[0].pid, writer.pid());
  EXPECT_TRUE(readers[0].writable);
  EXPECT_FALSE(readers[0].stale);
  EXPECT_EQ(writer.Release(), 0);

  Holder reader(pool_, ReadOnly());
  ASSERT_TRUE(reader.opened());
  auto mine = OpenOrDie(pool_, ReadOnly());
  readers = ReadersOrDie(pool_);
  ASSERT_EQ(readers.size(), 2u);
  ASSERT_NE(Find(readers, reader.pid()), nullptr);
  ASSERT_NE(Find(readers, getpid()), nullptr);
  EXPECT_EQ(reader.Release(), 0);
  readers = ReadersOrDie(pool_);
  ASSERT_EQ(readers.size(), 1u);
  EXPECT_EQ(readers[0].pid, getpid());
}

TEST_F(ReadersTest, AProcessKilledWithThePoolOpenIsStaleUntilCleared) {
  Holder writer(pool_, Options());
  ASSERT_TRUE(writer.opened());
  const pid_t dead = writer.pid();
  writer.Kill();
  std::vector<ReaderInfo> readers = ReadersOrDie(pool_);
  ASSERT_EQ(readers.size(), 1u);
  EXPECT_EQ(readers[0].pid, dead);
  EXPECT_TRUE(readers[0].stale) << "its lock died with it";

  auto cleared = Store::ClearStaleReaders(pool_);
  ASSERT_TRUE(cleared.ok()) << cleared.status();
  EXPECT_EQ(*cleared, 1);
  EXPECT_TRUE(ReadersOrDie(pool_).empty());
  cleared = Store::ClearStaleReaders(pool_);
  ASSERT_TRUE(cleared.ok()) << cleared.status();
  EXPECT_EQ(*cleared, 0);
}

TEST_F(ReadersTest, ClearingLeavesTheLivingAndANewOpenTakesADeadProcesssSlot) {
  Holder first(pool_, ReadOnly());
  ASSERT_TRUE(first.opened());
  Holder second(pool_, ReadOnly());
  ASSERT_TRUE(second.opened());
  std::vector<ReaderInfo> readers = ReadersOrDie(pool_);
  ASSERT_EQ(readers.size(), 2u);
  const uint32_t first_slot = Find(readers, first.pid())->slot;
  first.Kill();

  auto mine = OpenOrDie(pool_, ReadOnly());
  readers = ReadersOrDie(pool_);
  ASSERT_EQ(readers.size(), 2u) << "the new open took the dead process's slot";
  ASSERT_NE(Find(readers, getpid()), nullptr);
  EXPECT_EQ(Find(readers, getpid())->slot, first_slot);
  EXPECT_EQ(Find(readers, first.pid()), nullptr);

  // A live process (this one, another) is never cleared.
  auto cleared = Store::ClearStaleReaders(pool_);
  ASSERT_TRUE(cleared.ok()) << cleared.status();
  EXPECT_EQ(*cleared, 0);
  EXPECT_EQ(ReadersOrDie(pool_).size(), 2u);
  EXPECT_EQ(second.Release(), 0);
}

// The child a holder forks inherits its descriptors. Were the child's copy
// of the table's descriptor kept, the holder's slot lock would outlive the
// holder and its slot would never read stale.
TEST_F(ReadersTest, AForkedChildDoesNotKeepItsDeadParentsSlotAlive) {
  Holder holder(pool_, ReadOnly(), /*fork_grandchild=*/true);
  ASSERT_TRUE(holder.opened());
  ASSERT_GT(holder.grandchild(), 0);
  holder.Kill();
  ASSERT_EQ(kill(holder.grandchild(), 0), 0) << "the forked child still runs";
  std::vector<ReaderInfo> readers = ReadersOrDie(pool_);
  ASSERT_EQ(readers.size(), 1u);
  EXPECT_EQ(readers[0].pid, holder.pid());
  EXPECT_TRUE(readers[0].stale);
}

TEST_F(ReadersTest, AProcessKilledWithThePoolOpenLeavesATableTheNextOpenMakesAnew) {
  Holder writer(pool_, Options());
  ASSERT_TRUE(writer.opened());
  writer.Kill();
  auto mine = OpenOrDie(pool_, Options());
  const std::vector<ReaderInfo> readers = ReadersOrDie(pool_);
  ASSERT_EQ(readers.size(), 1u) << "nobody was attached: the table was made anew, without the stale slot";
  EXPECT_EQ(readers[0].pid, getpid());
}

TEST_F(ReadersTest, DestroyRemovesTheTableAKilledProcessLeftAndNoOtherPoolsTable) {
  const std::string other = dir_.File("other");
  Holder killed(pool_, Options());
  ASSERT_TRUE(killed.opened());
  killed.Kill();
  ASSERT_TRUE(OpenOrDie(other, SmallPool())->Close().ok());
  Holder living(other, Options());
  ASSERT_TRUE(living.opened());
  const std::string region = RegionPathOf(pool_);
  const std::string other_region = RegionPathOf(other);
  ASSERT_EQ(access(region.c_str(), F_OK), 0) << "the killed process left no table to remove";

  ASSERT_TRUE(Store::Destroy(pool_).ok());
  EXPECT_NE(access(region.c_str(), F_OK), 0) << "the destroyed pool's table stayed in /dev/shm";
  EXPECT_EQ(access(other_region.c_str(), F_OK), 0) << "another pool's table went too";
  EXPECT_EQ(ReadersOrDie(other).size(), 1u);
  EXPECT_EQ(living.Release(), 0);
}

// Regions left by killed processes go once a day old, whoever opens
// another pool: their pages are memory. Removed through the paths named
// (this test's own: the leftovers of other tests running beside it must
// stay, each one's stale slots named by pmstore readers until then), at a
// moment a day and an hour after now.
TEST_F(ReadersTest, ALeftoverTableADayOldIsRemovedAndTheLivingAndTheRecentStay) {
  const std::string alive = dir_.File("alive");
  ASSERT_TRUE(OpenOrDie(alive, SmallPool())->Close().ok());
  Holder killed(pool_, Options());
  ASSERT_TRUE(killed.opened());
  killed.Kill();
  Holder living(alive, ReadOnly());
  ASSERT_TRUE(living.opened());
  const std::string dead_region = RegionPathOf(pool_);
  const std::string live_region = RegionPathOf(alive);
  const std::vector<std::string> listed = internal::RegionFiles(live_region);
  EXPECT_NE(std::find(listed.begin(), listed.end(), dead_region), listed.end());
  EXPECT_EQ(std::find(listed.begin(), listed.end(), live_region), listed.end()) << "the one excepted was listed";

  const std::vector<std::string> ours = {dead_region, live_region};
  env::Env* env = env::Env::Default();
  struct timespec now;
  clock_gettime(CLOCK_REALTIME, &now);
  const int64_t now_ns = int64_t{now.tv_sec} * 1'000'000'000 + now.tv_nsec;
  EXPECT_EQ(internal::RemoveLeftoverRegions(env, ours, now_ns), 0) << "a leftover of a moment ago went";
  EXPECT_EQ(ReadersOrDie(pool_).size(), 1u) << "the dead process's stale slot is still listed";
  const int64_t later = now_ns + internal::kLeftoverRegionAgeNs + int64_t{3600} * 1'000'000'000;
  EXPECT_EQ(internal::RemoveLeftoverRegions(env, ours, later), 1);
  EXPECT_NE(access(dead_region.c_str(), F_OK), 0) << "the killed process's table stayed";
  EXPECT_EQ(access(live_region.c_str(), F_OK), 0) << "a table a living process is attached to went";
  EXPECT_EQ(ReadersOrDie(alive).size(), 1u);
  EXPECT_TRUE(ReadersOrDie(pool_).empty());
  EXPECT_EQ(living.Release(), 0);

  // The open that makes its pool's table sweeps the rest: a leftover of
  // a moment ago stays.
  Holder killed_again(pool_, Options());
  ASSERT_TRUE(killed_again.opened());
  killed_again.Kill();
  ASSERT_TRUE(OpenOrDie(dir_.File("third"), SmallPool())->Close().ok());
  EXPECT_EQ(access(dead_region.c_str(), F_OK), 0) << "an open removed a leftover younger than a day";
  EXPECT_TRUE(Store::Destroy(pool_).ok());  // and the leftover with it
}

// Another process's open, as far as the writer can tell: a slot of the
// pool's reader table that pins a commit, taken by a child that holds it
// until told to let go.
class ForeignPin {
 public:
  ForeignPin(const std::string& pool, uint64_t commit) {
    int ready[2], hold[2];
    if (pipe(ready) != 0 || pipe(hold) != 0) return;
    pid_ = fork();
    if (pid_ == 0) {
      close(ready[0]);
      close(hold[1]);
      const int fd = open(pool.c_str(), O_RDONLY | O_CLOEXEC);
      auto slot = internal::ReaderSlot::Attach(env::Env::Default(), fd, /*writable=*/false);
      if (slot.ok()) (*slot)->PublishPinned(commit, commit);
      const char word = slot.ok() ? 'p' : 'x';
      if (write(ready[1], &word, 1) != 1) _exit(3);
      char byte;
      while (read(hold[0], &byte, 1) > 0) {
      }
      if (slot.ok()) slot->reset();  // frees the slot
      _exit(0);
    }
    close(ready[1]);
    close(hold[0]);
    hold_ = hold[1];
    char word = 0;
    pinned_ = read(ready[0], &word, 1) == 1 && word == 'p';
    close(ready[0]);
  }
  ~ForeignPin() { Release(); }
  bool pinned() const { return pinned_; }
  // Kills the process: its slot stays, stale, with the pin in it.
  void Kill() {
    if (hold_ < 0) return;
    kill(pid_, SIGKILL);
    Release();
  }
  void Release() {
    if (hold_ < 0) return;
    close(hold_);
    hold_ = -1;
    waitpid(pid_, nullptr, 0);
  }

 private:
  pid_t pid_ = -1;
  int hold_ = -1;
  bool pinned_ = false;
};

// Overwrites "k" (300 bytes: a record in a small chunk's units, not in a
// leaf cell) and writes more values of its size; whether the old value's
// bytes, read where it lay in the mapping, are still there afterwards.
// (Records of this size reuse freed units within a write or two.)
bool OverwrittenValueSurvives(Store& store, const std::string& old_value, const char* where) {
  EXPECT_TRUE(store.Put("k", std::string(old_value.size(), 'n')).ok());
  for (int i = 0; i < 100; ++i) EXPECT_TRUE(store.Put("fill" + std::to_string(i), std::string(old_value.size(), 'f')).ok());
  return std::string_view(where, old_value.size()) == old_value;
}

TEST_F(ReadersTest, SpaceThatAnotherProcessPinsIsNotReused) {
  auto store = OpenOrDie(pool_, Options());
  const std::string old_value(300, 'o');
  auto place_of_k = [&] {
    PinnedValue pinned;
    EXPECT_TRUE(store->Get(ReadOptions(), "k", &pinned).ok());
    return pinned.value().data();  // stays mapped while the store is open
  };

  // Without another process's pin the old value's space is reused: what
  // the check below would miss otherwise.
  ASSERT_TRUE(store->Put("k", old_value).ok());
  const char* where = place_of_k();
  ASSERT_FALSE(OverwrittenValueSurvives(*store, old_value, where)) << "the allocator reuses no freed space here";

  ASSERT_TRUE(store->Put("k", old_value).ok());
  where = place_of_k();
  ForeignPin foreign(pool_, CurrentCommit(*store));
  ASSERT_TRUE(foreign.pinned());
  EXPECT_TRUE(OverwrittenValueSurvives(*store, old_value, where))
      << "space another process's reader could still read was reused";
}

// Overwrites keys 0..count-1 with values of 1000 bytes of `fill`, one
// durable put each; the first failure.
absl::Status OverwriteAll(Store& store, int count, char fill) {
  for (int i = 0; i < count; ++i) {
    const absl::Status status = store.Put("key" + std::to_string(i), std::string(1000, fill));
    if (!status.ok()) return status;
  }
  return absl::OkStatus();
}

// A pool of 16 MiB, whose heap holds 1500 values of 1000 bytes (with
// their leaves) about five times over, and rounds of overwrites enough to
// fill it twice: each round needs the space the one before freed, unless
// a pin holds it back.
constexpr uint64_t kPoolBytes = 16ull << 20;
constexpr int kKeys = 1500;
constexpr std::string_view kRounds = "bcdefghijk";

TEST_F(ReadersTest, AWriterOutOfSpaceClearsADeadProcesssPinAndGoesOn) {
  TempDir shm("/dev/shm");  // durable puts cost no disk flush
  const std::string pool = shm.File("small");
  auto store = OpenOrDie(pool, SmallPool(kPoolBytes, kPoolBytes));
  ASSERT_TRUE(OverwriteAll(*store, kKeys, 'a').ok());
  ForeignPin dead(pool, CurrentCommit(*store));
  ASSERT_TRUE(dead.pinned());
  dead.Kill();
  // Every round needs the space the one before freed, which only the dead
  // process's pin holds back.
  for (const char fill : kRounds) {
    const absl::Status status = OverwriteAll(*store, kKeys, fill);
    ASSERT_TRUE(status.ok()) << "round " << fill << ": " << status;
  }
  for (const ReaderInfo& reader : ReadersOrDie(pool)) EXPECT_FALSE(reader.stale) << "pid " << reader.pid;
  std::string value;
  ASSERT_TRUE(store->Get(ReadOptions(), "key0", &value).ok());
  EXPECT_EQ(value, std::string(1000, kRounds.back()));
}

TEST_F(ReadersTest, AWriterOutOfSpaceLeavesALiveProcesssPinAloneAndGetsTheSpaceOnceItLeaves) {
  TempDir shm("/dev/shm");
  const std::string pool = shm.File("small");
  auto store = OpenOrDie(pool, SmallPool(kPoolBytes, kPoolBytes));
  ASSERT_TRUE(OverwriteAll(*store, kKeys, 'a').ok());
  const uint64_t pinned = CurrentCommit(*store);
  ForeignPin live(pool, pinned);
  ASSERT_TRUE(live.pinned());
  absl::Status status;
  for (const char fill : kRounds) {
    status = OverwriteAll(*store, kKeys, fill);
    if (!status.ok()) break;
  }
  EXPECT_TRUE(absl::IsResourceExhausted(status)) << "the live pin's space was reused: " << status;
  const std::vector<ReaderInfo> readers = ReadersOrDie(pool);
  const auto holds_the_pin = [&](const ReaderInfo& r) { return r.pinned_commit == std::optional<uint64_t>(pinned); };
  EXPECT_TRUE(std::any_of(readers.begin(), readers.end(), holds_the_pin)) << "the live process's pin was cleared";
  live.Release();
  EXPECT_TRUE(OverwriteAll(*store, kKeys, 'z').ok()) << "its space came back once it left";
}

TEST_F(ReadersTest, WhatIsNotAPoolIsRefused) {
  auto readers = Store::Readers(dir_.File("missing"));
  EXPECT_EQ(readers.status().code(), absl::StatusCode::kNotFound) << readers.status();
  readers = Store::Readers(dir_.path());
  EXPECT_EQ(readers.status().code(), absl::StatusCode::kInvalidArgument) << readers.status();
  const std::string text = dir_.File("text");
  FILE* f = fopen(text.c_str(), "w");
  ASSERT_NE(f, nullptr);
  fputs("not a pool, but long enough to hold a superblock's magic and more of it\n", f);
  fclose(f);
  readers = Store::Readers(text);
  EXPECT_EQ(readers.status().code(), absl::StatusCode::kInvalidArgument) << readers.status();
  EXPECT_EQ(Store::ClearStaleReaders(text).status().code(), absl::StatusCode::kInvalidArgument);
}

// A table another pmstore version laid out, held by a process of that
// version: it is reported, not misread, and opens go on unlisted.
TEST_F(ReadersTest, ATableOfAnotherLayoutInUseIsReportedAndOpensGoOnUnlisted) {
  const std::string region = RegionPathOf(pool_);
  const int fd = open(region.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  ASSERT_GE(fd, 0) << region;
  ASSERT_EQ(ftruncate(fd, 100), 0);
  struct flock in_use = {};
  in_use.l_type = F_RDLCK;
  in_use.l_whence = SEEK_SET;
  in_use.l_start = 1;  // the use lock
  in_use.l_len = 1;
  ASSERT_EQ(fcntl(fd, F_OFD_SETLK, &in_use), 0);

  auto readers = Store::Readers(pool_);
  EXPECT_EQ(readers.status().code(), absl::StatusCode::kFailedPrecondition) << readers.status();
  EXPECT_NE(readers.status().message().find("another pmstore version"), std::string::npos) << readers.status();
  {
    auto store = Store::Open(pool_, Options());
    ASSERT_TRUE(store.ok()) << store.status();
    EXPECT_TRUE((*store)->Close().ok());
  }
  close(fd);  // the other version's process leaves
  readers = Store::Readers(pool_);
  ASSERT_TRUE(readers.ok()) << readers.status();
  EXPECT_TRUE(readers->empty()) << "a leftover of another layout that nobody holds lists no process";
  auto store = OpenOrDie(pool_, Options());
  const std::vector<ReaderInfo> listed = ReadersOrDie(pool_);
  ASSERT_EQ(listed.size(), 1u) << "made anew in this version's layout";
  EXPECT_EQ(listed[0].pid, getpid());
  ASSERT_TRUE(store->Close().ok());
  unlink(region.c_str());
}

}  // namespace
}  // namespace pmstore
