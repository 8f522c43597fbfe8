// Unsynced runs (doc/FORMAT.md, "Unsynced runs") seen from the API: what
// the undo log costs and where it runs out. What a power failure inside a
// run leaves is the crash simulator's part (store_crash_test).
#include <memory>
#include <string>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "pmstore/store.h"
#include "store/store_test_util.h"

namespace pmstore {
namespace {

using testing::OpenOrDie;
using testing::SmallPool;
using testing::ValueFor;

constexpr WriteOptions kUnsynced{.sync = false};

std::string Key(int i) { return absl::StrCat("key", 1000000 + i); }

// A pool of 150 000 keys in about 5 000 leaves, all durable: every leaf is
// live before the next run.
constexpr int kManyKeys = 150000;
std::unique_ptr<Store> ManyDurableKeys(const std::string& path) {
  auto store = OpenOrDie(path, SmallPool(64ull << 20, 256ull << 20));
  if (store == nullptr) return nullptr;
  for (int i = 0; i < kManyKeys; ++i) EXPECT_TRUE(store->Put(kUnsynced, Key(i), ValueFor(i, 20)).ok()) << i;
  EXPECT_TRUE(store->Sync().ok());
  return store;
}

TEST(StoreUnsyncedTest, RunThatOutgrowsItsUndoLogEndsItselfAndKeepsEveryWrite) {
  TempDir dir("/dev/shm");
  const std::string path = dir.File("pool");
  auto store = ManyDurableKeys(path);
  ASSERT_NE(store, nullptr);
  constexpr int kKeys = kManyKeys;
  // One key in every 25 changes: about three live lines of a different
  // leaf each, more than one undo log holds (13 105 lines).
  for (int i = 0; i < kKeys; i += 25) ASSERT_TRUE(store->Put(kUnsynced, Key(i), ValueFor(i + 7, 30)).ok()) << i;
  ASSERT_TRUE(store->Close().ok());
  store = OpenOrDie(path, Options());
  ASSERT_NE(store, nullptr);
  for (int i = 0; i < kKeys; ++i) {
    std::string got;
    ASSERT_TRUE(store->Get(Key(i), &got).ok()) << i;
    ASSERT_EQ(got, i % 25 == 0 ? ValueFor(i + 7, 30) : ValueFor(i, 20)) << i;
  }
  EXPECT_TRUE(store->CheckNow().clean());
}

TEST(StoreUnsyncedTest, BatchTooLargeForAnUndoLogIsMadeDurableInstead) {
  TempDir dir("/dev/shm");
  const std::string path = dir.File("pool");
  auto store = ManyDurableKeys(path);
  ASSERT_NE(store, nullptr);
  constexpr int kKeys = kManyKeys;
  // One commit that changes about 18 000 live lines: no undo log holds it.
  WriteBatch batch;
  for (int i = 0; i < kKeys; i += 25) batch.Put(Key(i), "batched");
  ASSERT_TRUE(store->Write(kUnsynced, batch).ok());
  ASSERT_TRUE(store->Close().ok());
  store = OpenOrDie(path, Options());
  ASSERT_NE(store, nullptr);
  std::string got;
  ASSERT_TRUE(store->Get(Key(kKeys - 25), &got).ok());
  EXPECT_EQ(got, "batched");
  EXPECT_TRUE(store->CheckNow().clean());
}

TEST(StoreUnsyncedTest, SpaceARunFreesIsReusedOnceItEnds) {
  TempDir dir("/dev/shm");
  // 8 MiB, no growth: a run holds what it frees until it ends, so a long
  // run of overwrites fills the pool, and the store ends the run to go on.
  auto store = OpenOrDie(dir.File("pool"), SmallPool(8ull << 20, 8ull << 20));
  ASSERT_NE(store, nullptr);
  for (int round = 0; round < 40; ++round) {
    for (int i = 0; i < 20; ++i) {
      ASSERT_TRUE(store->Put(kUnsynced, Key(i), ValueFor(round * 100 + i, 40000)).ok()) << round << " " << i;
    }
  }
  std::string got;
  ASSERT_TRUE(store->Get(Key(3), &got).ok());
  EXPECT_EQ(got, ValueFor(39 * 100 + 3, 40000));
  EXPECT_TRUE(store->CheckNow().clean());
  EXPECT_TRUE(store->Close().ok());
}

TEST(StoreUnsyncedTest, DurableWritesAndUnsyncedRunsInterleave) {
  TempDir dir("/dev/shm");
  const std::string path = dir.File("pool");
  auto store = OpenOrDie(path, SmallPool());
  ASSERT_NE(store, nullptr);
  for (int i = 0; i < 300; ++i) {
    // sync=true every third write: it ends the run before it.
    const WriteOptions options{.sync = i % 3 == 0};
    ASSERT_TRUE(store->Put(options, Key(i % 50), ValueFor(i, 100)).ok()) << i;
    if (i % 7 == 0) {
      ASSERT_TRUE(store->Delete(kUnsynced, Key((i + 1) % 50)).ok());
    }
  }
  const CheckReport before = store->CheckNow();
  EXPECT_TRUE(before.clean());
  ASSERT_TRUE(store->Close().ok());
  store = OpenOrDie(path, Options());
  ASSERT_NE(store, nullptr);
  EXPECT_EQ(store->CheckNow().keys, before.keys);
  EXPECT_TRUE(store->CheckNow().clean());
}

}  // namespace
}  // namespace pmstore
