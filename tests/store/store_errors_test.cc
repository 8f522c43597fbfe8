// Every failure Store::Open and Store::Check promise: one status, a
// message naming the file and the problem.
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstddef>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>

#include "gtest/gtest.h"
#include "pmstore/format/image_layout.h"
#include "pmstore/format/key.h"
#include "pmstore/format/layout.h"
#include "pmstore/format/leaf.h"
#include "pmstore/format/record.h"
#include "pmstore/store.h"
#include "store/store_test_util.h"

namespace pmstore {
namespace {

using testing::InAChild;
using testing::OpenOrDie;
using testing::SmallPool;

class StoreErrorsTest : public ::testing::Test {
 protected:
  void MakePool() {
    auto store = OpenOrDie(path_, SmallPool());
    ASSERT_TRUE(store->Put("k", "v").ok());
  }
  void Poke(uint64_t offset, const void* bytes, size_t size) {
    const int fd = open(path_.c_str(), O_WRONLY);
    ASSERT_GE(fd, 0);
    ASSERT_EQ(pwrite(fd, bytes, size, static_cast<off_t>(offset)), static_cast<ssize_t>(size));
    close(fd);
  }
  void ExpectOpenFails(absl::StatusCode code, const std::string& words) {
    auto store = Store::Open(path_, Options());
    ASSERT_FALSE(store.ok());
    EXPECT_EQ(store.status().code(), code) << store.status();
    EXPECT_NE(store.status().message().find(path_), std::string::npos) << store.status();
    EXPECT_NE(store.status().message().find(words), std::string::npos) << store.status();
  }

  TempDir dir_{"/dev/shm"};
  std::string path_ = dir_.File("pool");
};

TEST_F(StoreErrorsTest, MissingFileIsNotFoundUnlessCreating) {
  ExpectOpenFails(absl::StatusCode::kNotFound, "no such pool");
}

TEST_F(StoreErrorsTest, ErrorIfExistsRefusesAnExistingPool) {
  MakePool();
  Options options;
  options.error_if_exists = true;
  auto store = Store::Open(path_, options);
  EXPECT_TRUE(absl::IsAlreadyExists(store.status())) << store.status();
}

TEST_F(StoreErrorsTest, GarbageFileIsNotAPool) {
  std::ofstream(path_) << std::string(1 << 20, 'g');
  ExpectOpenFails(absl::StatusCode::kInvalidArgument, "bad magic");
}

TEST_F(StoreErrorsTest, EmptyFileIsNotAPool) {
  std::ofstream(path_).flush();
  ExpectOpenFails(absl::StatusCode::kInvalidArgument, "not a pmstore pool");
}

TEST_F(StoreErrorsTest, DirectoryIsNotAPool) {
  path_ = dir_.path();
  ExpectOpenFails(absl::StatusCode::kInvalidArgument, "directory");
}

TEST_F(StoreErrorsTest, OtherVersionIsUnsupported) {
  MakePool();
  const uint32_t version = 99;
  Poke(8, &version, sizeof(version));
  ExpectOpenFails(absl::StatusCode::kFailedPrecondition, "unsupported pool format version 99");
}

TEST_F(StoreErrorsTest, FlippedSuperblockBitIsAChecksumFailure) {
  MakePool();
  const uint8_t byte = 0x40;
  Poke(24, &byte, 1);  // inside chunk_size
  ExpectOpenFails(absl::StatusCode::kDataLoss, "checksum failure");
}

TEST_F(StoreErrorsTest, FlippedRootBitIsAChecksumFailure) {
  MakePool();
  const uint8_t byte = 0x7f;
  Poke(4096 + 1, &byte, 1);  // head_leaf, which the last commit did not log
  ExpectOpenFails(absl::StatusCode::kDataLoss, "checksum failure in the root");
}

TEST_F(StoreErrorsTest, TruncatedFileIsReported) {
  MakePool();
  ASSERT_EQ(truncate(path_.c_str(), 4096 * 3), 0);
  ExpectOpenFails(absl::StatusCode::kDataLoss, "truncated");
}

TEST_F(StoreErrorsTest, TruncatedInsideAChunkItUsesIsDataLossAndAnOddTailIsPassedOver) {
  {
    auto store = OpenOrDie(path_, SmallPool());
    // Enough to reach past the first chunk: the pool uses several.
    for (int i = 0; i < 20; ++i) ASSERT_TRUE(store->Put("key" + std::to_string(i), std::string(200 << 10, 'v')).ok());
  }
  struct stat st;
  ASSERT_EQ(stat(path_.c_str(), &st), 0);
  // A tail that is no whole chunk (a grow a crash cut short) holds nothing
  // of the pool: open leaves it unmapped.
  ASSERT_EQ(truncate(path_.c_str(), st.st_size + 1000), 0);
  {
    auto store = OpenOrDie(path_, Options());
    std::string value;
    ASSERT_TRUE(store->Get("key19", &value).ok());
    EXPECT_EQ(value.size(), 200u << 10);
  }
  // Cut at a length that is no multiple of a page, inside a used chunk.
  ASSERT_EQ(truncate(path_.c_str(), st.st_size - 2 * 1024 * 1024 - 1000), 0);
  ExpectOpenFails(absl::StatusCode::kDataLoss, "truncated file");
}

TEST_F(StoreErrorsTest, AMaximumBelowTheSmallestPoolIsRefusedAndTheFileNeverExceedsItsMaximum) {
  auto refused = Store::Open(path_, SmallPool(4ull << 20, 4ull << 20));
  ASSERT_TRUE(absl::IsInvalidArgument(refused.status())) << refused.status();
  EXPECT_NE(refused.status().message().find(path_), std::string::npos) << refused.status();
  EXPECT_NE(refused.status().message().find("smallest pool"), std::string::npos) << refused.status();
  struct stat st;
  EXPECT_NE(stat(path_.c_str(), &st), 0) << "a refused create leaves no file";
  EXPECT_EQ(std::filesystem::directory_iterator(dir_.path()), std::filesystem::directory_iterator());
  // The smallest pool is exactly as large as its maximum; no initial size
  // makes a file larger than the maximum.
  for (const uint64_t initial : {uint64_t{1}, uint64_t{6} << 20, uint64_t{64} << 20}) {
    std::filesystem::remove(path_);
    auto store = OpenOrDie(path_, SmallPool(initial, 6ull << 20));
    ASSERT_NE(store, nullptr);
    ASSERT_EQ(stat(path_.c_str(), &st), 0);
    EXPECT_EQ(static_cast<uint64_t>(st.st_size), 6ull << 20) << "initial size " << initial;
    EXPECT_LE(store->GetStats().max_pool_bytes, 6ull << 20);
  }
}

TEST_F(StoreErrorsTest, AKeyOverTheLimitIsRefusedNamingTheFile) {
  auto store = OpenOrDie(path_, SmallPool());
  const absl::Status put = store->Put(std::string(kMaxKeySize + 1, 'k'), "v");
  ASSERT_TRUE(absl::IsInvalidArgument(put)) << put;
  EXPECT_NE(put.message().find(path_), std::string::npos) << put;
  EXPECT_NE(put.message().find("exceeds the limit"), std::string::npos) << put;
  WriteBatch batch;
  batch.Put("fine", "v");
  batch.Delete(std::string(kMaxKeySize + 1, 'k'));
  const absl::Status write = store->Write(batch);
  EXPECT_NE(write.message().find(path_), std::string::npos) << write;
  std::string value;
  EXPECT_TRUE(absl::IsNotFound(store->Get("fine", &value))) << "a batch with one bad key is refused whole";
  EXPECT_TRUE(store->Put(std::string(kMaxKeySize, 'k'), "v").ok()) << "the limit itself is a key";
}

uint64_t HeapOffset(const std::string& path) {
  internal::Superblock sb;
  const int fd = open(path.c_str(), O_RDONLY);
  EXPECT_EQ(pread(fd, &sb, sizeof(sb), 0), static_cast<ssize_t>(sizeof(sb)));
  close(fd);
  return sb.heap_offset;
}

TEST_F(StoreErrorsTest, DamagedLeafFailsItsFirstUseAndCheckReportsIt) {
  MakePool();
  auto clean = Store::Check(path_);
  ASSERT_TRUE(clean.ok());
  EXPECT_TRUE(clean->clean());
  EXPECT_EQ(clean->keys, 1u);
  // The first leaf sits right after chunk 0's 4 KiB bitmap; damage its
  // `next` word, which the last commit did not log (replay would repair it).
  const uint8_t next = 5;
  Poke(HeapOffset(path_) + internal::kBitmapUnits * internal::kUnitSize, &next, 1);
  {
    // The clean close left a separator image: open does not read the
    // leaves, their first use checks them (doc/FORMAT.md "Separator image").
    auto store = OpenOrDie(path_, Options());
    ASSERT_TRUE(store->GetStats().opened_from_separator_image);
    std::string value;
    const absl::Status get = store->Get("k", &value);
    EXPECT_TRUE(absl::IsDataLoss(get)) << get;
    EXPECT_NE(get.message().find("checksum failure in the index leaf"), std::string::npos) << get;
    const absl::Status put = store->Put("k2", "v");
    EXPECT_TRUE(absl::IsDataLoss(put)) << put;
    EXPECT_NE(put.message().find("checksum failure in index leaf"), std::string::npos) << put;
    EXPECT_FALSE(store->CheckNow().clean());
  }
  // Without the image (a crash, or the image's own damage), open walks the
  // chain and fails at the leaf.
  uint64_t image = 0;
  const int fd = open(path_.c_str(), O_RDONLY);
  ASSERT_EQ(pread(fd, &image, 8, internal::kRootOffset + offsetof(internal::Root, separator_image)), 8);
  close(fd);
  ASSERT_NE(image, 0u);
  const uint64_t zero = 0;
  Poke(image + offsetof(internal::SeparatorImageHeader, checksum), &zero, 8);
  ExpectOpenFails(absl::StatusCode::kDataLoss, "checksum failure in index leaf");
  auto report = Store::Check(path_);
  ASSERT_TRUE(report.ok());
  EXPECT_FALSE(report->clean());
}

TEST_F(StoreErrorsTest, DamagedValueIsFoundByCheckAndVerifiedReads) {
  MakePool();
  // The record of "k" lies in its home cell of the first leaf (format
  // version 2): header, key "k", value "v".
  const uint64_t leaf = HeapOffset(path_) + internal::kBitmapUnits * internal::kUnitSize;
  const uint64_t record = leaf + internal::kLeafBytes +
                          internal::HomeSlot(internal::KeyHash("k")) * internal::kLeafCellBytes;
  const char flipped = 'w';
  Poke(record + sizeof(internal::RecordHeader) + 1, &flipped, 1);
  auto store = OpenOrDie(path_, Options());
  std::string value;
  EXPECT_TRUE(store->Get("k", &value).ok()) << "unverified reads do not hash";
  EXPECT_EQ(value, "w");
  EXPECT_TRUE(absl::IsDataLoss(store->Get({.verify_checksums = true}, "k", &value)));
  const CheckReport report = store->CheckNow();
  ASSERT_FALSE(report.clean());
  EXPECT_NE(report.problems.front().find("checksum failure in record"), std::string::npos) << report.problems.front();
}

TEST_F(StoreErrorsTest, SecondOpenInThisProcessIsRefused) {
  auto first = OpenOrDie(path_, SmallPool());
  Options read_only;
  read_only.read_only = true;
  // By any name of the file: the pool is its inode.
  const std::string other_name = path_ + ".link";
  ASSERT_EQ(link(path_.c_str(), other_name.c_str()), 0);
  for (const auto& [path, options] :
       {std::pair{path_, Options()}, std::pair{path_, read_only}, std::pair{other_name, read_only}}) {
    auto second = Store::Open(path, options);
    ASSERT_FALSE(second.ok()) << path;
    EXPECT_TRUE(absl::IsFailedPrecondition(second.status()));
    EXPECT_NE(second.status().message().find("already open in this process"), std::string::npos) << second.status();
  }
  unlink(other_name.c_str());
}

TEST_F(StoreErrorsTest, ASecondReadOnlyOpenInThisProcessIsRefusedToo) {
  { OpenOrDie(path_, SmallPool()); }
  Options read_only;
  read_only.read_only = true;
  auto first = OpenOrDie(path_, read_only);
  auto second = Store::Open(path_, read_only);
  ASSERT_FALSE(second.ok());
  EXPECT_NE(second.status().message().find("already open in this process"), std::string::npos) << second.status();
  // Another process shares the read-only pool as before.
  EXPECT_EQ(InAChild([&] { return Store::Open(path_, read_only).status().ToString(); }), "OK");
  ASSERT_TRUE(first->Close().ok());
  EXPECT_TRUE(Store::Open(path_, read_only).ok()) << "a closed open leaves the pool to the next";
}

// What a refused opener reads: the holder as the message of a second open
// from a child process.
std::string MessageOfAnOpenFromAChild(const std::string& path) {
  return InAChild([&] {
    auto second = Store::Open(path, Options());
    return second.ok() ? std::string("opened") : std::string(second.status().message());
  });
}

TEST_F(StoreErrorsTest, OpenFromAnotherProcessNamesTheHolder) {
  auto first = OpenOrDie(path_, SmallPool());
  const std::string message = MessageOfAnOpenFromAChild(path_);
  EXPECT_NE(message.find("in use by process " + std::to_string(getpid())), std::string::npos) << message;
}

TEST_F(StoreErrorsTest, TheHolderStaysNamedAfterItsOwnSecondOpenAndCheckAreRefused) {
  auto first = OpenOrDie(path_, SmallPool());
  // Each refusal opens and closes a descriptor of the pool in the holding
  // process, which would drop a classic POSIX lock and with it the pid.
  auto second = Store::Open(path_, Options());
  ASSERT_FALSE(second.ok());
  EXPECT_NE(second.status().message().find("already open in this process"), std::string::npos) << second.status();
  auto check = Store::Check(path_);
  EXPECT_FALSE(check.ok()) << "a check of a pool open elsewhere is refused";
  const std::string message = MessageOfAnOpenFromAChild(path_);
  EXPECT_NE(message.find("in use by process " + std::to_string(getpid())), std::string::npos) << message;
  first.reset();
  auto after = Store::Open(path_, Options());
  EXPECT_TRUE(after.ok()) << "closing the holder releases the pool: " << after.status();
}

TEST_F(StoreErrorsTest, RequiredCacheLineGranularityFailsOnPageCache) {
  if (getenv("PMEM2_FORCE_GRANULARITY") != nullptr) GTEST_SKIP() << "granularity forced";
  Options options = SmallPool();
  options.required_granularity = Granularity::kCacheLine;
  auto store = Store::Open(path_, options);
  ASSERT_FALSE(store.ok());
  EXPECT_TRUE(absl::IsFailedPrecondition(store.status())) << store.status();
}

TEST_F(StoreErrorsTest, FullPoolWithoutGrowthRefusesAndKeepsEverything) {
  auto store = OpenOrDie(path_, SmallPool(8ull << 20, 8ull << 20));
  const std::string value(50000, 'v');
  int stored = 0;
  absl::Status status;
  while ((status = store->Put("k" + std::to_string(stored), value)).ok()) ++stored;
  EXPECT_TRUE(absl::IsResourceExhausted(status)) << status;
  EXPECT_NE(status.message().find(path_), std::string::npos) << status;
  WriteBatch batch;
  batch.Put("k0", "small");
  batch.Put("huge", std::string(3u << 20, 'h'));
  EXPECT_TRUE(absl::IsResourceExhausted(store->Write(batch)));
  std::string got;
  ASSERT_TRUE(store->Get("k0", &got).ok());
  EXPECT_EQ(got, value) << "a failed batch changed nothing";
  EXPECT_EQ(store->GetStats().keys, static_cast<uint64_t>(stored));
  EXPECT_TRUE(store->CheckNow().clean());
}

}  // namespace
}  // namespace pmstore
