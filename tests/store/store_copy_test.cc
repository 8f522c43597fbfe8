// Store::CopyTo on real pools in a temp dir (ext4 here) and on a small
// tmpfs: what the copy holds, its geometry, its name never showing a half
// made pool, and every error leaving nothing behind.
#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "pmstore/store.h"
#include "store/store_test_util.h"
#include "support/temp_dir.h"
#include "support/tmpfs_mount.h"

namespace pmstore {
namespace {

using testing::OpenOrDie;
using testing::SmallPool;
using testing::ValueFor;

std::map<std::string, std::string> Contents(Store& store) {
  std::map<std::string, std::string> contents;
  auto it = store.NewIterator({}, {});
  for (it->SeekToFirst(); it->Valid(); it->Next()) contents.emplace(std::string(it->key()), std::string(it->value()));
  EXPECT_TRUE(it->status().ok()) << it->status();
  return contents;
}

std::vector<std::string> Entries(const std::string& dir) {
  std::vector<std::string> names;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) names.push_back(entry.path().filename());
  std::sort(names.begin(), names.end());
  return names;
}

// Puts key0..key<count-1> (value sizes from `value_size`) in one unsynced
// run, made durable at the end: synced puts at page granularity cost an
// msync each.
template <typename ValueSize>
void Fill(Store& store, int count, ValueSize value_size) {
  for (int i = 0; i < count; ++i) {
    ASSERT_TRUE(store.Put({.sync = false}, absl::StrCat("key", i), ValueFor(i, value_size(i))).ok());
  }
  ASSERT_TRUE(store.Sync().ok());
}

// Opens the copy, checks it, and returns what it holds.
std::map<std::string, std::string> CheckedContents(const std::string& path) {
  auto report = Store::Check(path);
  EXPECT_TRUE(report.ok()) << report.status();
  if (report.ok()) {
    EXPECT_TRUE(report->clean()) << report->problems.front();
  }
  auto copy = OpenOrDie(path, {});
  return copy == nullptr ? std::map<std::string, std::string>{} : Contents(*copy);
}

TEST(StoreCopyTest, CopyHoldsEveryKeyAndValueAndPassesCheck) {
  TempDir dir;
  auto store = OpenOrDie(dir.File("pool"), SmallPool(8ull << 20, 256ull << 20));
  ASSERT_NE(store, nullptr);
  Fill(*store, 5000, [](int i) { return i % 300; });
  ASSERT_TRUE(store->Put("", "the empty key").ok());
  ASSERT_TRUE(store->Put("empty value", "").ok());
  ASSERT_TRUE(store->Put("large", ValueFor(7, 3u << 20)).ok());  // a 2 MiB aligned run of its own
  for (int i = 0; i < 5000; i += 3) ASSERT_TRUE(store->Delete({.sync = false}, absl::StrCat("key", i)).ok());
  const auto expected = Contents(*store);

  ASSERT_TRUE(store->CopyTo(dir.File("copy")).ok());
  EXPECT_EQ(CheckedContents(dir.File("copy")), expected);
  // The source is untouched and still writable.
  EXPECT_EQ(Contents(*store), expected);
  EXPECT_TRUE(store->Put("after", "copy").ok());
}

TEST(StoreCopyTest, CopyHasTheSourcesGeometry) {
  TempDir dir;
  auto store = OpenOrDie(dir.File("pool"), SmallPool(6ull << 20, 100ull << 20));
  ASSERT_NE(store, nullptr);
  Fill(*store, 200, [](int) { return 40000; });
  const Stats source = store->GetStats();
  ASSERT_GT(source.pool_bytes, 6ull << 20) << "the source should have grown";
  ASSERT_TRUE(store->CopyTo(dir.File("copy")).ok());
  auto copy = OpenOrDie(dir.File("copy"), {});
  ASSERT_NE(copy, nullptr);
  // Created at the source's size; the copy's close may grow it by one
  // step (a quarter, and a chunk) when it has no free chunk for the
  // separator image (doc/FORMAT.md).
  EXPECT_GE(copy->GetStats().pool_bytes, source.pool_bytes);
  EXPECT_LE(copy->GetStats().pool_bytes, source.pool_bytes + source.pool_bytes / 4 + (2ull << 20));
  EXPECT_EQ(copy->GetStats().max_pool_bytes, source.max_pool_bytes);
  EXPECT_EQ(copy->GetStats().keys, 200u);
}

TEST(StoreCopyTest, CopyHasTheSourcesPermissionBitsLessTheUmask) {
  TempDir dir;
  const mode_t umask_before = umask(0);
  for (const mode_t source_mode : {0600u, 0640u, 0664u}) {
    const std::string source_path = dir.File(absl::StrCat("pool", source_mode));
    const std::string copy_path = source_path + ".copy";
    {
      Options options = SmallPool();
      options.mode = source_mode;
      auto store = OpenOrDie(source_path, options);
      ASSERT_NE(store, nullptr);
      umask(022);
      ASSERT_TRUE(store->CopyTo(copy_path).ok());
      umask(0);
    }
    struct stat st;
    ASSERT_EQ(stat(copy_path.c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 0777, source_mode & ~0022u) << std::oct << "source 0" << source_mode;
  }
  umask(umask_before);
}

TEST(StoreCopyTest, EmptyStoreCopiesToAnEmptyPool) {
  TempDir dir;
  auto store = OpenOrDie(dir.File("pool"), SmallPool());
  ASSERT_NE(store, nullptr);
  ASSERT_TRUE(store->CopyTo(dir.File("copy")).ok());
  EXPECT_TRUE(CheckedContents(dir.File("copy")).empty());
}

TEST(StoreCopyTest, DestinationNameNeverShowsAHalfMadePool) {
  TempDir dir;
  auto store = OpenOrDie(dir.File("pool"), SmallPool(8ull << 20, 256ull << 20));
  ASSERT_NE(store, nullptr);
  Fill(*store, 5000, [](int) { return 100; });
  int calls = 0;
  uint64_t last_keys = 0;
  const std::string dest = dir.File("copy");
  auto progress = [&](uint64_t keys, uint64_t bytes) {
    ++calls;
    EXPECT_GT(keys, last_keys);
    EXPECT_GE(bytes, keys * 100);
    last_keys = keys;
    // Mid-copy: only the temporary name is there.
    struct stat st;
    EXPECT_NE(lstat(dest.c_str(), &st), 0) << dest << " exists before the copy is complete";
    const auto names = Entries(dir.path());
    EXPECT_EQ(names.size(), 2u);
    EXPECT_EQ(names.front().rfind("copy.copying.", 0), 0u) << names.front();
  };
  ASSERT_TRUE(store->CopyTo({}, dest, progress).ok());
  EXPECT_GE(calls, 5);
  EXPECT_EQ(last_keys, 5000u);
  EXPECT_EQ(Entries(dir.path()), (std::vector<std::string>{"copy", "pool"}));
}

TEST(StoreCopyTest, ExistingDestinationIsAlreadyExistsAndUntouched) {
  TempDir dir;
  auto store = OpenOrDie(dir.File("pool"), SmallPool());
  ASSERT_NE(store, nullptr);
  ASSERT_TRUE(store->Put("k", "v").ok());
  std::ofstream(dir.File("taken")) << "not yours";
  const absl::Status status = store->CopyTo(dir.File("taken"));
  EXPECT_TRUE(absl::IsAlreadyExists(status)) << status;
  EXPECT_NE(status.message().find(dir.File("taken")), std::string::npos) << status;
  std::ifstream in(dir.File("taken"));
  EXPECT_EQ(std::string(std::istreambuf_iterator<char>(in), {}), "not yours");
  // Its own pool is an existing destination too.
  EXPECT_TRUE(absl::IsAlreadyExists(store->CopyTo(dir.File("pool"))));
  EXPECT_EQ(Entries(dir.path()), (std::vector<std::string>{"pool", "taken"}));
}

TEST(StoreCopyTest, MissingDirectoryIsNotFoundAndLeavesNothing) {
  TempDir dir;
  auto store = OpenOrDie(dir.File("pool"), SmallPool());
  ASSERT_NE(store, nullptr);
  const absl::Status status = store->CopyTo(dir.File("no/such/dir/copy"));
  EXPECT_TRUE(absl::IsNotFound(status)) << status;
  EXPECT_EQ(Entries(dir.path()), (std::vector<std::string>{"pool"}));
}

TEST(StoreCopyTest, CopyAfterCloseIsFailedPreconditionAndLeavesNothing) {
  TempDir dir;
  auto store = OpenOrDie(dir.File("pool"), SmallPool());
  ASSERT_NE(store, nullptr);
  ASSERT_TRUE(store->Close().ok());
  const absl::Status status = store->CopyTo(dir.File("copy"));
  EXPECT_TRUE(absl::IsFailedPrecondition(status)) << status;
  EXPECT_EQ(Entries(dir.path()), (std::vector<std::string>{"pool"}));
}

TEST(StoreCopyTest, FullFileSystemIsResourceExhaustedAndLeavesNothing) {
  TempDir dir;
  auto store = OpenOrDie(dir.File("pool"), SmallPool(16ull << 20, 64ull << 20));
  ASSERT_NE(store, nullptr);
  ASSERT_TRUE(store->Put("k", "v").ok());
  TmpfsMount fs("size=8m");
  SKIP_UNLESS_MOUNTED(fs);
  const absl::Status status = store->CopyTo(fs.dir() + "/copy");
  EXPECT_TRUE(absl::IsResourceExhausted(status)) << status;
  EXPECT_TRUE(Entries(fs.dir()).empty()) << "left behind: " << Entries(fs.dir()).front();
}

}  // namespace
}  // namespace pmstore
