#include "pmstore/mapping/pool_file.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include "pmstore/base/units.h"
#include "support/temp_dir.h"
#include "support/tmpfs_mount.h"

namespace pmstore::mapping {
namespace {

using base::kHugePageSize;

uint64_t AllocatedBytes(const std::string& path) {
  struct stat st {};
  EXPECT_EQ(stat(path.c_str(), &st), 0);
  return static_cast<uint64_t>(st.st_blocks) * 512;
}

TEST(PoolFileTest, CreateRoundsUpTo2MiBAndAllocatesEveryByte) {
  TempDir dir;
  auto file = PoolFile::Open(dir.File("pool"), OpenMode::kCreateExclusive, 3 * kHugePageSize + 1);
  ASSERT_TRUE(file.ok()) << file.status();
  EXPECT_EQ(file->size(), 4 * kHugePageSize);
  EXPECT_GE(AllocatedBytes(dir.File("pool")), 4 * kHugePageSize);
  EXPECT_FALSE(file->dax());  // /var/tmp is ext4 without -o dax here
}

TEST(PoolFileTest, OpenExistingKeepsItsSizeAndMissingFileIsNotFound) {
  TempDir dir;
  ASSERT_TRUE(PoolFile::Open(dir.File("pool"), OpenMode::kCreateOrOpen, kHugePageSize).ok());
  auto reopened = PoolFile::Open(dir.File("pool"), OpenMode::kCreateOrOpen, 10 * kHugePageSize);
  ASSERT_TRUE(reopened.ok());
  EXPECT_EQ(reopened->size(), kHugePageSize);

  auto missing = PoolFile::Open(dir.File("nope"), OpenMode::kOpenExisting, 0);
  EXPECT_EQ(missing.status().code(), absl::StatusCode::kNotFound);
  EXPECT_NE(missing.status().message().find(dir.File("nope")), std::string::npos);
}

TEST(PoolFileTest, ExclusiveCreateRefusesAnExistingFile) {
  TempDir dir;
  ASSERT_TRUE(PoolFile::Open(dir.File("pool"), OpenMode::kCreateExclusive, kHugePageSize).ok());
  EXPECT_EQ(PoolFile::Open(dir.File("pool"), OpenMode::kCreateExclusive, kHugePageSize).status().code(),
            absl::StatusCode::kAlreadyExists);
}

TEST(PoolFileTest, DirectoriesAndZeroSizesAreInvalid) {
  TempDir dir;
  EXPECT_EQ(PoolFile::Open(dir.path(), OpenMode::kOpenExisting, 0).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(PoolFile::Open(dir.File("empty"), OpenMode::kCreateOrOpen, 0).status().code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(PoolFileTest, GrowAllocatesTheNewSpace) {
  TempDir dir;
  auto file = PoolFile::Open(dir.File("pool"), OpenMode::kCreateExclusive, kHugePageSize);
  ASSERT_TRUE(file.ok());
  ASSERT_TRUE(file->Grow(5 * kHugePageSize - 7).ok());
  EXPECT_EQ(file->size(), 5 * kHugePageSize);
  EXPECT_GE(AllocatedBytes(dir.File("pool")), 5 * kHugePageSize);
}

TEST(PoolFileTest, PublishAsRenamesAtomicallyAndNeverReplaces) {
  TempDir dir;
  auto file = PoolFile::Open(dir.File("pool.tmp"), OpenMode::kCreateExclusive, kHugePageSize);
  ASSERT_TRUE(file.ok());
  ASSERT_TRUE(PoolFile::Open(dir.File("taken"), OpenMode::kCreateExclusive, kHugePageSize).ok());
  EXPECT_EQ(file->PublishAs(dir.File("taken")).code(), absl::StatusCode::kAlreadyExists);
  EXPECT_EQ(access(dir.File("pool.tmp").c_str(), F_OK), 0) << "a refused publish leaves the file where it was";
  ASSERT_TRUE(file->PublishAs(dir.File("pool")).ok());
  EXPECT_EQ(file->path(), dir.File("pool"));
  EXPECT_NE(access(dir.File("pool.tmp").c_str(), F_OK), 0);
  EXPECT_TRUE(file->Grow(2 * kHugePageSize).ok()) << "the open file keeps working under its new name";
}

TEST(PoolFileTest, FullFileSystemIsAnErrorAtCreateAndGrowNotASigbusLater) {
  TmpfsMount mount("size=8m");
  SKIP_UNLESS_MOUNTED(mount);
  const std::string big = mount.dir() + "/big";
  auto too_big = PoolFile::Open(big, OpenMode::kCreateExclusive, 16 * kHugePageSize);
  EXPECT_EQ(too_big.status().code(), absl::StatusCode::kResourceExhausted) << too_big.status();
  EXPECT_NE(too_big.status().message().find("fallocate"), std::string::npos);
  EXPECT_NE(access(big.c_str(), F_OK), 0) << "a failed create must not leave a file behind";

  auto file = PoolFile::Open(mount.dir() + "/pool", OpenMode::kCreateExclusive, 2 * kHugePageSize);
  ASSERT_TRUE(file.ok()) << file.status();
  EXPECT_EQ(file->Grow(16 * kHugePageSize).code(), absl::StatusCode::kResourceExhausted);
  EXPECT_EQ(file->size(), 2 * kHugePageSize);
  struct stat st {};
  ASSERT_EQ(fstat(file->fd(), &st), 0);
  EXPECT_EQ(static_cast<uint64_t>(st.st_size), 2 * kHugePageSize) << "the file keeps its old size";
}

}  // namespace
}  // namespace pmstore::mapping
