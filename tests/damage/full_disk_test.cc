// A full file system under the pool: creating a pool that does not fit,
// and growing one until the file system is full, on a size-limited tmpfs.
// Each is a clear ResourceExhausted naming the file; nothing acknowledged
// is lost and nothing half made is left behind.
#include <filesystem>
#include <string>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "pmstore/store.h"
#include "support/tmpfs_mount.h"

namespace pmstore {
namespace {

std::string Value(int i) { return std::string(50000, static_cast<char>('a' + i % 26)) + std::to_string(i); }

Options Create(uint64_t initial, uint64_t max) {
  Options options;
  options.create_if_missing = true;
  options.initial_size = initial;
  options.max_size = max;
  return options;
}

std::vector<std::string> Entries(const std::string& dir) {
  std::vector<std::string> names;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) names.push_back(entry.path().filename());
  return names;
}

TEST(FullDiskTest, CreateThatDoesNotFitIsResourceExhaustedAndLeavesNothing) {
  TmpfsMount fs("size=8m");
  SKIP_UNLESS_MOUNTED(fs);
  const std::string path = fs.dir() + "/pool";
  auto store = Store::Open(path, Create(32ull << 20, 64ull << 20));
  ASSERT_FALSE(store.ok());
  EXPECT_TRUE(absl::IsResourceExhausted(store.status())) << store.status();
  EXPECT_NE(store.status().message().find(path), std::string::npos) << store.status();
  EXPECT_TRUE(Entries(fs.dir()).empty()) << "left behind: " << Entries(fs.dir()).front();
  // The space is still there for a pool that fits.
  auto fits = Store::Open(path, Create(6ull << 20, 6ull << 20));
  ASSERT_TRUE(fits.ok()) << fits.status();
  EXPECT_TRUE((*fits)->Put("k", "v").ok());
}

TEST(FullDiskTest, GrowthIntoAFullFileSystemKeepsEveryEarlierWrite) {
  // Room for the metadata and a few chunks; the pool may grow far beyond.
  TmpfsMount fs("size=14m");
  SKIP_UNLESS_MOUNTED(fs);
  const std::string path = fs.dir() + "/pool";
  int stored = 0;
  {
    auto store = Store::Open(path, Create(6ull << 20, 256ull << 20));
    ASSERT_TRUE(store.ok()) << store.status();
    const uint64_t size_before = (*store)->GetStats().pool_bytes;
    absl::Status status;
    while ((status = (*store)->Put(absl::StrCat("key", stored), Value(stored))).ok()) ++stored;
    EXPECT_TRUE(absl::IsResourceExhausted(status)) << status;
    EXPECT_NE(status.message().find(path), std::string::npos) << status;
    EXPECT_GT((*store)->GetStats().pool_bytes, size_before) << "the pool grew before the file system filled";
    EXPECT_GT(stored, 100);
    // The failed write changed nothing; a large value fails the same way.
    std::string got;
    EXPECT_TRUE(absl::IsNotFound((*store)->Get(absl::StrCat("key", stored), &got)));
    EXPECT_TRUE(absl::IsResourceExhausted((*store)->Put("large", std::string(3u << 20, 'L'))));
    EXPECT_TRUE((*store)->CheckNow().clean());
    // A full file system refuses cleanly; it is no failing device: the
    // store takes writes that fit (it is not poisoned).
    ASSERT_TRUE((*store)->Delete(absl::StrCat("key", stored - 1)).ok());
    ASSERT_TRUE((*store)->Put(absl::StrCat("key", stored - 1), Value(stored - 1)).ok());
    EXPECT_TRUE((*store)->Close().ok());
  }
  auto store = Store::Open(path, Options());
  ASSERT_TRUE(store.ok()) << store.status();
  ReadOptions verified;
  verified.verify_checksums = true;
  for (int i = 0; i < stored; ++i) {
    std::string got;
    ASSERT_TRUE((*store)->Get(verified, absl::StrCat("key", i), &got).ok()) << i;
    ASSERT_EQ(got, Value(i)) << i;
  }
  EXPECT_EQ((*store)->GetStats().keys, static_cast<uint64_t>(stored));
  // Deletes make room again without growing.
  for (int i = 0; i < stored; i += 2) ASSERT_TRUE((*store)->Delete(absl::StrCat("key", i)).ok()) << i;
  for (int i = 0; i < stored / 4; ++i) {
    ASSERT_TRUE((*store)->Put(absl::StrCat("again", i), Value(i)).ok()) << i;
  }
  EXPECT_TRUE((*store)->CheckNow().clean());
  std::string got;
  ASSERT_TRUE((*store)->Get(verified, "again0", &got).ok());
  EXPECT_EQ(got, Value(0));
  ASSERT_TRUE((*store)->Get(verified, absl::StrCat("key", 1), &got).ok());
  EXPECT_EQ(got, Value(1));
}

}  // namespace
}  // namespace pmstore
