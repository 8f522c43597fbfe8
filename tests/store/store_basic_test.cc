// The store's API against a real pool file on the root file system.
#include <string>

#include "gtest/gtest.h"
#include "pmstore/store.h"
#include "store/store_test_util.h"

namespace pmstore {
namespace {

using testing::OpenOrDie;
using testing::SmallPool;

// On tmpfs, where msync is cheap: on ext4 every durable put costs a disk
// cache flush (~10 ms here), which the ext4 tests pay only a few times.
class StoreBasicTest : public ::testing::Test {
 protected:
  TempDir dir_{"/dev/shm"};
  std::string path_ = dir_.File("pool");
};

TEST_F(StoreBasicTest, PutThenGetReturnsTheValue) {
  auto store = OpenOrDie(path_, SmallPool());
  ASSERT_TRUE(store->Put("alpha", "one").ok());
  std::string value;
  ASSERT_TRUE(store->Get("alpha", &value).ok());
  EXPECT_EQ(value, "one");
}

TEST_F(StoreBasicTest, GetOfMissingKeyIsNotFoundAndLeavesValueAlone) {
  auto store = OpenOrDie(path_, SmallPool());
  std::string value = "untouched";
  EXPECT_TRUE(absl::IsNotFound(store->Get("nope", &value)));
  EXPECT_EQ(value, "untouched");
}

TEST_F(StoreBasicTest, OverwriteReplacesAndDeleteRemoves) {
  auto store = OpenOrDie(path_, SmallPool());
  ASSERT_TRUE(store->Put("k", "v1").ok());
  ASSERT_TRUE(store->Put("k", "v2").ok());
  std::string value;
  ASSERT_TRUE(store->Get("k", &value).ok());
  EXPECT_EQ(value, "v2");
  EXPECT_EQ(store->GetStats().keys, 1u);
  ASSERT_TRUE(store->Delete("k").ok());
  EXPECT_FALSE(*store->Contains("k"));
  EXPECT_TRUE(store->Delete("k").ok()) << "deleting an absent key is not an error";
  EXPECT_EQ(store->GetStats().keys, 0u);
}

TEST_F(StoreBasicTest, EmptyKeyAndEmptyValueAreStored) {
  auto store = OpenOrDie(path_, SmallPool());
  ASSERT_TRUE(store->Put("", "").ok());
  ASSERT_TRUE(store->Put("e", "").ok());
  std::string value = "x";
  ASSERT_TRUE(store->Get("", &value).ok());
  EXPECT_EQ(value, "");
  EXPECT_TRUE(*store->Contains("e"));
}

TEST_F(StoreBasicTest, KeyOfMaxSizeWorksAndOneMoreIsRejected) {
  auto store = OpenOrDie(path_, SmallPool());
  const std::string big(kMaxKeySize, 'k');
  ASSERT_TRUE(store->Put(big, "v").ok());
  std::string value;
  ASSERT_TRUE(store->Get(big, &value).ok());
  EXPECT_EQ(value, "v");
  EXPECT_TRUE(absl::IsInvalidArgument(store->Put(big + "k", "v")));
}

TEST_F(StoreBasicTest, ReopenAfterCloseKeepsEverything) {
  {
    auto store = OpenOrDie(path_, SmallPool());
    for (int i = 0; i < 2000; ++i) ASSERT_TRUE(store->Put("key" + std::to_string(i), testing::ValueFor(i, i % 300)).ok());
    for (int i = 0; i < 2000; i += 3) ASSERT_TRUE(store->Delete("key" + std::to_string(i)).ok());
  }
  auto store = OpenOrDie(path_, Options());
  for (int i = 0; i < 2000; ++i) {
    std::string value;
    const absl::Status s = store->Get("key" + std::to_string(i), &value);
    if (i % 3 == 0) {
      EXPECT_TRUE(absl::IsNotFound(s)) << i;
    } else {
      ASSERT_TRUE(s.ok()) << i << " " << s;
      EXPECT_EQ(value, testing::ValueFor(i, i % 300));
    }
  }
  EXPECT_EQ(store->GetStats().keys, 2000u - 667u);
  EXPECT_TRUE(store->CheckNow().clean());
}

TEST_F(StoreBasicTest, WriteBatchAppliesInOrder) {
  auto store = OpenOrDie(path_, SmallPool());
  ASSERT_TRUE(store->Put("gone", "x").ok());
  WriteBatch batch;
  batch.Put("a", "1");
  batch.Put("b", "2");
  batch.Put("a", "3");
  batch.Delete("gone");
  batch.Delete("b");
  ASSERT_TRUE(store->Write(batch).ok());
  std::string value;
  ASSERT_TRUE(store->Get("a", &value).ok());
  EXPECT_EQ(value, "3");
  EXPECT_FALSE(*store->Contains("b"));
  EXPECT_FALSE(*store->Contains("gone"));
  EXPECT_EQ(store->GetStats().keys, 1u);
  EXPECT_TRUE(store->CheckNow().clean());
}

TEST_F(StoreBasicTest, IteratorVisitsKeysInOrderWithPrefixAndRange) {
  auto store = OpenOrDie(path_, SmallPool());
  for (const char* key : {"b/2", "a/1", "b/1", "c", "b/3", "a/2", "b"}) ASSERT_TRUE(store->Put(key, key).ok());
  auto collect = [&](IterateOptions range, std::string_view seek = "") {
    std::string keys;
    auto it = store->NewIterator(ReadOptions(), range);
    for (seek.empty() ? it->SeekToFirst() : it->Seek(seek); it->Valid(); it->Next()) {
      EXPECT_EQ(it->key(), it->value());
      keys += std::string(it->key()) + ",";
    }
    EXPECT_TRUE(it->status().ok());
    return keys;
  };
  EXPECT_EQ(collect({}), "a/1,a/2,b,b/1,b/2,b/3,c,");
  EXPECT_EQ(collect({.prefix = "b/"}), "b/1,b/2,b/3,");
  EXPECT_EQ(collect({.lower_bound = "a/2", .upper_bound = "b/2"}), "a/2,b,b/1,");
  EXPECT_EQ(collect({}, "b/15"), "b/2,b/3,c,");
  EXPECT_EQ(collect({.prefix = "zz"}), "");
}

TEST_F(StoreBasicTest, IterationCrossesManyLeavesAndBatches) {
  auto store = OpenOrDie(path_, SmallPool());
  for (int i = 0; i < 5000; ++i) {
    char key[16];
    snprintf(key, sizeof(key), "k%06d", (i * 7919) % 5000);
    ASSERT_TRUE(store->Put(key, std::to_string(i)).ok());
  }
  auto it = store->NewIterator(ReadOptions(), {});
  int n = 0;
  std::string previous;
  for (it->SeekToFirst(); it->Valid(); it->Next(), ++n) {
    EXPECT_LT(previous, std::string(it->key()));
    previous = std::string(it->key());
  }
  EXPECT_EQ(n, 5000);
}

TEST_F(StoreBasicTest, LargeValueIsStoredInAlignedRunAndSurvivesReopen) {
  const std::string large = testing::ValueFor(7, (5ull << 20) + 123);
  {
    auto store = OpenOrDie(path_, SmallPool(8ull << 20, 64ull << 20));
    ASSERT_TRUE(store->Put("big", large).ok());
    PinnedValue pinned;
    ASSERT_TRUE(store->Get(ReadOptions(), "big", &pinned).ok());
    EXPECT_EQ(reinterpret_cast<uintptr_t>(pinned.value().data()) % (2u << 20), 0u);
    EXPECT_EQ(pinned.value(), large);
  }
  auto store = OpenOrDie(path_, Options());
  std::string value;
  ASSERT_TRUE(store->Get({.verify_checksums = true}, "big", &value).ok());
  EXPECT_EQ(value, large);
  ASSERT_TRUE(store->Delete("big").ok());
  EXPECT_TRUE(store->CheckNow().clean());
}

TEST_F(StoreBasicTest, PinnedValueSurvivesOverwriteAndDelete) {
  auto store = OpenOrDie(path_, SmallPool());
  ASSERT_TRUE(store->Put("k", "original").ok());
  PinnedValue pinned;
  ASSERT_TRUE(store->Get(ReadOptions(), "k", &pinned).ok());
  ASSERT_TRUE(store->Delete("k").ok());
  // Churn that would reuse the freed record's space if it were released.
  for (int i = 0; i < 200; ++i) ASSERT_TRUE(store->Put("x" + std::to_string(i), "XXXXXXXX").ok());
  EXPECT_EQ(pinned.value(), "original");
  pinned.Reset();
  EXPECT_TRUE(pinned.value().empty());
}

TEST_F(StoreBasicTest, PoolGrowsUpToMaxSizeThenReportsFullAndKeepsData) {
  auto store = OpenOrDie(path_, SmallPool(8ull << 20, 16ull << 20));
  const std::string value(4000, 'v');
  int stored = 0;
  absl::Status status;
  for (; stored < 100000; ++stored) {
    status = store->Put("key" + std::to_string(stored), value);
    if (!status.ok()) break;
  }
  EXPECT_TRUE(absl::IsResourceExhausted(status)) << status;
  EXPECT_GT(stored, 1000);
  EXPECT_GT(store->GetStats().pool_bytes, 8ull << 20);
  for (int i = 0; i < stored; i += 97) {
    std::string got;
    ASSERT_TRUE(store->Get("key" + std::to_string(i), &got).ok()) << i;
    EXPECT_EQ(got, value);
  }
  EXPECT_TRUE(store->CheckNow().clean());
  // Deleting makes room again.
  for (int i = 0; i < stored; i += 2) ASSERT_TRUE(store->Delete("key" + std::to_string(i)).ok());
  EXPECT_TRUE(store->Put("after", value).ok());
  EXPECT_TRUE(store->CheckNow().clean());
}

TEST_F(StoreBasicTest, ChunksEmptiedBySmallValuesHoldLargeValuesLater) {
  auto store = OpenOrDie(path_, SmallPool(16ull << 20, 16ull << 20));
  const std::string small(4000, 's');
  int stored = 0;
  while (store->Put("k" + std::to_string(stored), small).ok()) ++stored;
  ASSERT_GT(stored, 1000);
  for (int i = 0; i < stored; ++i) ASSERT_TRUE(store->Delete("k" + std::to_string(i)).ok());
  const std::string large(6u << 20, 'L');
  ASSERT_TRUE(store->Put("large", large).ok());
  std::string got;
  ASSERT_TRUE(store->Get("large", &got).ok());
  EXPECT_EQ(got, large);
  EXPECT_TRUE(store->CheckNow().clean());
}

TEST_F(StoreBasicTest, SpaceOfDeletedValuesIsReused) {
  auto store = OpenOrDie(path_, SmallPool(8ull << 20, 8ull << 20));
  const std::string value(1000, 'v');
  for (int round = 0; round < 20; ++round) {
    for (int i = 0; i < 2000; ++i) ASSERT_TRUE(store->Put("key" + std::to_string(i), value).ok()) << round;
  }
  EXPECT_EQ(store->GetStats().keys, 2000u);
}

TEST_F(StoreBasicTest, UnsyncedWritesAreVisibleAndSurviveSyncAndReopen) {
  {
    auto store = OpenOrDie(path_, SmallPool());
    for (int i = 0; i < 100; ++i) ASSERT_TRUE(store->Put({.sync = false}, "k" + std::to_string(i), "v").ok());
    EXPECT_TRUE(*store->Contains("k42"));
    ASSERT_TRUE(store->Sync().ok());
  }
  auto store = OpenOrDie(path_, Options());
  EXPECT_EQ(store->GetStats().keys, 100u);
}

TEST(StoreOnExt4Test, DurablePutsSurviveReopenOnTheRootFileSystem) {
  TempDir dir;  // /var/tmp: ext4 here, page granularity, msync per commit
  const std::string path = dir.File("pool");
  {
    auto store = OpenOrDie(path, SmallPool());
    ASSERT_NE(store, nullptr);
    EXPECT_EQ(store->GetStats().granularity, Granularity::kPage);
    for (int i = 0; i < 20; ++i) ASSERT_TRUE(store->Put("k" + std::to_string(i), std::to_string(i)).ok());
    WriteBatch batch;
    for (int i = 0; i < 500; ++i) batch.Put("b" + std::to_string(i), testing::ValueFor(i, 50));
    ASSERT_TRUE(store->Write(batch).ok());
    ASSERT_TRUE(store->Delete("k3").ok());
  }
  auto store = OpenOrDie(path, Options());
  ASSERT_NE(store, nullptr);
  EXPECT_EQ(store->GetStats().keys, 519u);
  std::string value;
  ASSERT_TRUE(store->Get("b499", &value).ok());
  EXPECT_EQ(value, testing::ValueFor(499, 50));
  EXPECT_TRUE(store->CheckNow().clean());
}

TEST_F(StoreBasicTest, StatsDescribeTheMapping) {
  auto store = OpenOrDie(path_, SmallPool());
  ASSERT_TRUE(store->Put("k", "v").ok());
  const Stats stats = store->GetStats();
  EXPECT_EQ(stats.path, path_);
  EXPECT_EQ(stats.keys, 1u);
  EXPECT_GE(stats.pool_bytes, 8ull << 20);
  EXPECT_GT(stats.free_bytes, 0u);
  EXPECT_GT(stats.live_bytes, 0u);
  EXPECT_FALSE(stats.pmd_verify_method.empty());
}

}  // namespace
}  // namespace pmstore
