// A pool written by a version 1 build (tests/store/data/pool-v1.gz, made
// by make_pool_v1.sh) opens, reads back what that build wrote, takes
// writes and reopens as version 1: pools made before a format change keep
// working. A copy of it is a pool of the current version (doc/FORMAT.md
// "Versions").
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "gtest/gtest.h"
#include "pmstore/store.h"
#include "store_test_util.h"
#include "support/temp_dir.h"

namespace pmstore {
namespace {

using testing::OpenOrDie;
using testing::ValueFor;

constexpr int kSmallKeys = 3000;

std::string SmallKey(int i) {
  char key[16];
  std::snprintf(key, sizeof(key), "key-%05d", i);
  return key;
}
size_t SmallSize(int i) { return 20 + (i * 37) % 900; }
bool Deleted(int i) { return i % 7 == 3; }

// The fixture, unpacked into a fresh temp dir.
std::string UnpackFixture(const TempDir& dir) {
  const std::string pool = dir.path() + "/pool-v1";
  const std::string command =
      "gzip -dc '" PMSTORE_TEST_DATA_DIR "/pool-v1.gz' > '" + pool + "'";
  EXPECT_EQ(std::system(command.c_str()), 0) << command;
  return pool;
}

void ExpectFixtureContent(Store& store, int skip_from = kSmallKeys) {
  std::string value;
  for (int i = 0; i < skip_from; ++i) {
    const absl::Status status = store.Get(ReadOptions(), SmallKey(i), &value);
    if (Deleted(i)) {
      EXPECT_TRUE(absl::IsNotFound(status)) << SmallKey(i) << ": " << status;
    } else {
      ASSERT_TRUE(status.ok()) << SmallKey(i) << ": " << status;
      EXPECT_EQ(value, ValueFor(i, SmallSize(i))) << SmallKey(i);
    }
  }
  ASSERT_TRUE(store.Get(ReadOptions(), "large-1", &value).ok());
  EXPECT_EQ(value, ValueFor(1, (5 << 20) / 4));
  ASSERT_TRUE(store.Get(ReadOptions(), "large-2", &value).ok());
  EXPECT_EQ(value, ValueFor(2, (3 << 20) + 5));
}

TEST(StoreV1PoolTest, OpensAndReadsWhatAVersion1BuildWrote) {
  TempDir dir;
  const std::string pool = UnpackFixture(dir);
  auto report = Store::Check(pool);
  ASSERT_TRUE(report.ok()) << report.status();
  EXPECT_TRUE(report->clean()) << report->problems.front();
  EXPECT_EQ(report->keys, 2573u);

  Options options;
  auto store = OpenOrDie(pool, options);
  ASSERT_NE(store, nullptr);
  ExpectFixtureContent(*store);
  EXPECT_EQ(store->GetStats().keys, 2573u);
  EXPECT_EQ(store->GetStats().format_version, 1u);
}

TEST(StoreV1PoolTest, CopyConvertsToTheCurrentVersion) {
  TempDir dir;
  const std::string pool = UnpackFixture(dir);
  const std::string copy = dir.path() + "/pool-v2";
  {
    auto store = OpenOrDie(pool, Options());
    ASSERT_NE(store, nullptr);
    ASSERT_TRUE(store->CopyTo(ReadOptions(), copy).ok());
    EXPECT_EQ(store->GetStats().format_version, 1u) << "the source stays as it was";
  }
  auto report = Store::Check(copy);
  ASSERT_TRUE(report.ok()) << report.status();
  EXPECT_TRUE(report->clean()) << report->problems.front();
  EXPECT_EQ(report->keys, 2573u);
  auto store = OpenOrDie(copy, Options());
  ASSERT_NE(store, nullptr);
  EXPECT_EQ(store->GetStats().format_version, 2u);
  ExpectFixtureContent(*store);
  // The converted pool takes writes of every size class like any other.
  for (int i = 0; i < 500; ++i) ASSERT_TRUE(store->Put(WriteOptions(), SmallKey(i), ValueFor(i + 9, i % 400)).ok());
  std::string value;
  for (int i = 0; i < 500; ++i) {
    ASSERT_TRUE(store->Get(ReadOptions(), SmallKey(i), &value).ok()) << i;
    EXPECT_EQ(value, ValueFor(i + 9, i % 400));
  }
}

TEST(StoreV1PoolTest, TakesWritesAndReopens) {
  TempDir dir;
  const std::string pool = UnpackFixture(dir);
  Options options;
  {
    auto store = OpenOrDie(pool, options);
    ASSERT_NE(store, nullptr);
    // New keys between and after the old ones, overwrites, deletes, and
    // values of every size class.
    for (int i = 0; i < 2000; ++i) {
      ASSERT_TRUE(store->Put(WriteOptions(), SmallKey(i) + "-new", ValueFor(i + 7, 10 + i % 300)).ok());
    }
    for (int i = kSmallKeys - 500; i < kSmallKeys; ++i) {
      ASSERT_TRUE(store->Delete(WriteOptions(), SmallKey(i)).ok());
    }
    ASSERT_TRUE(store->Put(WriteOptions(), "large-3", ValueFor(3, (3 << 20) / 2)).ok());
    ASSERT_TRUE(store->Put(WriteOptions(), "large-1", ValueFor(4, (5 << 20) / 2)).ok());
    ASSERT_TRUE(store->Close().ok());
  }
  auto report = Store::Check(pool);
  ASSERT_TRUE(report.ok()) << report.status();
  EXPECT_TRUE(report->clean()) << report->problems.front();

  auto store = OpenOrDie(pool, options);
  ASSERT_NE(store, nullptr);
  EXPECT_EQ(store->GetStats().format_version, 1u) << "writes keep a version 1 pool's format";
  std::string value;
  for (int i = 0; i < 2000; ++i) {
    ASSERT_TRUE(store->Get(ReadOptions(), SmallKey(i) + "-new", &value).ok()) << i;
    EXPECT_EQ(value, ValueFor(i + 7, 10 + i % 300));
  }
  for (int i = kSmallKeys - 500; i < kSmallKeys; ++i) {
    EXPECT_TRUE(absl::IsNotFound(store->Get(ReadOptions(), SmallKey(i), &value))) << i;
  }
  for (int i = 0; i < kSmallKeys - 500; ++i) {
    const absl::Status status = store->Get(ReadOptions(), SmallKey(i), &value);
    if (Deleted(i)) {
      EXPECT_TRUE(absl::IsNotFound(status)) << i;
    } else {
      ASSERT_TRUE(status.ok()) << i << ": " << status;
      EXPECT_EQ(value, ValueFor(i, SmallSize(i))) << i;
    }
  }
  ASSERT_TRUE(store->Get(ReadOptions(), "large-1", &value).ok());
  EXPECT_EQ(value, ValueFor(4, (5 << 20) / 2));
  ASSERT_TRUE(store->Get(ReadOptions(), "large-2", &value).ok());
  EXPECT_EQ(value, ValueFor(2, (3 << 20) + 5));
  ASSERT_TRUE(store->Get(ReadOptions(), "large-3", &value).ok());
  EXPECT_EQ(value, ValueFor(3, (3 << 20) / 2));
}

// A version 1 build would misread page chunks: values of 1-2 MiB written
// into a version 1 pool still take whole 2 MiB runs, and the pool stays
// one that build reads (the check holds it to version 1's rules).
TEST(StoreV1PoolTest, LargeValuesWrittenIntoItKeepWholeRuns) {
  // On tmpfs the pool is mapped 2 MiB-aligned (on a disk file system it
  // is mapped with 4 KiB pages, off that alignment), so a run's value
  // starts on a 2 MiB boundary of the address space too.
  TempDir dir{"/dev/shm"};
  const std::string pool = UnpackFixture(dir);
  Options options;
  {
    auto store = OpenOrDie(pool, options);
    ASSERT_NE(store, nullptr);
    // (The first write frees the separator image the last close wrote.)
    ASSERT_TRUE(store->Put("first", "write").ok());
    const uint64_t live_before = store->GetStats().live_bytes;
    for (int i = 0; i < 6; ++i) {
      ASSERT_TRUE(store->Put("mid-" + std::to_string(i), ValueFor(10 + i, (3 << 20) / 2)).ok());
    }
    ASSERT_TRUE(store->Put("tailed", ValueFor(20, (21 << 20) / 10)).ok());
    for (int i = 0; i < 6; ++i) {
      PinnedValue pinned;
      ASSERT_TRUE(store->Get(ReadOptions(), "mid-" + std::to_string(i), &pinned).ok());
      EXPECT_EQ(reinterpret_cast<uintptr_t>(pinned.value().data()) % (2u << 20), 0u) << i;
    }
    // Six runs of one chunk and one of two, and their records.
    EXPECT_GE(store->GetStats().live_bytes - live_before, 8ull << 21);
    ASSERT_TRUE(store->Delete("mid-0").ok());
    ASSERT_TRUE(store->Close().ok());
  }
  // Still version 1 on the media (the superblock's version follows its magic).
  uint32_t version = 0;
  std::FILE* file = std::fopen(pool.c_str(), "rb");
  ASSERT_NE(file, nullptr);
  ASSERT_EQ(std::fseek(file, 8, SEEK_SET), 0);
  ASSERT_EQ(std::fread(&version, sizeof(version), 1, file), 1u);
  std::fclose(file);
  EXPECT_EQ(version, 1u);
  auto report = Store::Check(pool);
  ASSERT_TRUE(report.ok()) << report.status();
  EXPECT_TRUE(report->clean()) << report->problems.front();
  auto store = OpenOrDie(pool, options);
  ASSERT_NE(store, nullptr);
  std::string value;
  ASSERT_TRUE(store->Get(ReadOptions(), "mid-5", &value).ok());
  EXPECT_EQ(value, ValueFor(15, (3 << 20) / 2));
  ASSERT_TRUE(store->Get(ReadOptions(), "tailed", &value).ok());
  EXPECT_EQ(value, ValueFor(20, (21 << 20) / 10));
  ExpectFixtureContent(*store);
}

}  // namespace
}  // namespace pmstore
