// Large values in a version 2 pool: values of 1-2 MiB in pages of page
// chunks, larger ones in 2 MiB aligned runs with their tails in pages,
// mixed with small values, read back in place, overwritten, deleted,
// reopened, and checked.
#include <cstdint>
#include <cstdio>
#include <map>
#include <string>

#include "gtest/gtest.h"
#include "pmstore/format/layout.h"
#include "pmstore/store.h"
#include "store/store_test_util.h"

namespace pmstore {
namespace {

using testing::OpenOrDie;
using testing::SmallPool;
using testing::ValueFor;

constexpr uint64_t kMiB = 1ull << 20;
constexpr uint64_t kChunk = 2 * kMiB;

class StoreLargeValueTest : public ::testing::Test {
 protected:
  void ExpectHolds(Store& store, const std::map<std::string, std::string>& model) {
    for (const auto& [key, value] : model) {
      PinnedValue pinned;
      ASSERT_TRUE(store.Get(ReadOptions{.verify_checksums = true}, key, &pinned).ok()) << key;
      EXPECT_TRUE(pinned.value() == value) << key << ": " << pinned.value().size() << " bytes, want " << value.size();
    }
    EXPECT_EQ(store.GetStats().keys, model.size());
    const CheckReport report = store.CheckNow();
    EXPECT_TRUE(report.clean()) << report.problems.front();
  }

  TempDir dir_{"/dev/shm"};
  std::string path_ = dir_.File("pool");
};

uintptr_t Address(const PinnedValue& pinned) { return reinterpret_cast<uintptr_t>(pinned.value().data()); }

TEST_F(StoreLargeValueTest, ValueAcrossTwoPageChunksIsOneViewInPlace) {
  auto store = OpenOrDie(path_, SmallPool(16 * kMiB, 64 * kMiB));
  const std::string a = ValueFor(1, 3 * kMiB / 2);
  const std::string b = ValueFor(2, 3 * kMiB / 2);
  const std::string run = ValueFor(3, 4 * kMiB + 5);
  ASSERT_TRUE(store->Put("a", a).ok());
  ASSERT_TRUE(store->Put("b", b).ok());
  ASSERT_TRUE(store->Put("run", run).ok());
  PinnedValue pa, pb, prun;
  ASSERT_TRUE(store->Get(ReadOptions(), "a", &pa).ok());
  ASSERT_TRUE(store->Get(ReadOptions(), "b", &pb).ok());
  ASSERT_TRUE(store->Get(ReadOptions(), "run", &prun).ok());
  // a takes the first 24 pages of a page chunk, b its last 8 and 16 of
  // the next: one view over the chunk boundary.
  EXPECT_EQ(Address(pa) % kChunk, 0u);
  EXPECT_EQ(Address(pb), Address(pa) + a.size());
  EXPECT_LT(Address(pb) / kChunk, (Address(pb) + b.size() - 1) / kChunk);
  EXPECT_EQ(pb.value(), b);
  // Values of 2 MiB and more stay 2 MiB aligned.
  EXPECT_EQ(Address(prun) % kChunk, 0u);
  EXPECT_EQ(prun.value(), run);
  EXPECT_TRUE(store->CheckNow().clean());
}

TEST_F(StoreLargeValueTest, MixedSizesReadBackOverwriteDeleteAndReopen) {
  const uint64_t sizes[] = {kMiB, 3 * kMiB / 2, 21 * kMiB / 10, 4 * kMiB, 100, 70000, kMiB - 1, 2 * kMiB};
  std::map<std::string, std::string> model;
  {
    auto store = OpenOrDie(path_, SmallPool(8 * kMiB, 256 * kMiB));
    for (int i = 0; i < 24; ++i) {
      const std::string key = "key" + std::to_string(i);
      model[key] = ValueFor(i, sizes[i % 8]);
      ASSERT_TRUE(store->Put(key, model[key]).ok()) << key;
    }
    ExpectHolds(*store, model);
    // Each key takes another size class: pages become runs and back.
    for (int i = 0; i < 24; i += 2) {
      const std::string key = "key" + std::to_string(i);
      model[key] = ValueFor(i + 100, sizes[(i + 3) % 8]);
      ASSERT_TRUE(store->Put(key, model[key]).ok()) << key;
    }
    for (int i = 1; i < 24; i += 3) {
      const std::string key = "key" + std::to_string(i);
      model.erase(key);
      ASSERT_TRUE(store->Delete(key).ok()) << key;
    }
    ExpectHolds(*store, model);
    ASSERT_TRUE(store->Close().ok());
  }
  auto report = Store::Check(path_);
  ASSERT_TRUE(report.ok()) << report.status();
  EXPECT_TRUE(report->clean()) << report->problems.front();
  auto store = OpenOrDie(path_, Options());
  ExpectHolds(*store, model);
  // Freed pages are reused once released: churn stays within the pool.
  for (int round = 0; round < 10; ++round) {
    for (int i = 0; i < 24; i += 3) {
      const std::string key = "key" + std::to_string(i);
      model[key] = ValueFor(round * 24 + i, sizes[(round + i) % 8]);
      ASSERT_TRUE(store->Put(key, model[key]).ok()) << key;
    }
  }
  ExpectHolds(*store, model);
}

// Reads or writes the 8-byte word at `offset` of the file at `path`.
uint64_t WordAt(const std::string& path, uint64_t offset) {
  uint64_t word = 0;
  std::FILE* file = std::fopen(path.c_str(), "rb");
  EXPECT_NE(file, nullptr);
  if (file == nullptr) return 0;
  EXPECT_EQ(std::fseek(file, static_cast<long>(offset), SEEK_SET), 0);
  EXPECT_EQ(std::fread(&word, 8, 1, file), 1u);
  std::fclose(file);
  return word;
}
void SetWordAt(const std::string& path, uint64_t offset, uint64_t word) {
  std::FILE* file = std::fopen(path.c_str(), "r+b");
  ASSERT_NE(file, nullptr);
  ASSERT_EQ(std::fseek(file, static_cast<long>(offset), SEEK_SET), 0);
  ASSERT_EQ(std::fwrite(&word, 8, 1, file), 1u);
  std::fclose(file);
}
bool Reports(const std::string& path, const std::string& problem) {
  auto report = Store::Check(path);
  EXPECT_TRUE(report.ok()) << report.status();
  if (!report.ok()) return false;
  for (const std::string& line : report->problems) {
    if (line.find(problem) != std::string::npos) return true;
  }
  return false;
}

TEST_F(StoreLargeValueTest, CheckFindsAPageMarkedForNoValueAndAValuesPageMarkedFree) {
  {
    auto store = OpenOrDie(path_, SmallPool(8 * kMiB, 64 * kMiB));
    ASSERT_TRUE(store->Put("a", ValueFor(1, 3 * kMiB / 2)).ok());  // pages 0-23 of one page chunk
    // Open replays the last two commits: the edits below must not be in them.
    for (int i = 0; i < 3; ++i) ASSERT_TRUE(store->Put("small" + std::to_string(i), "v").ok());
    ASSERT_TRUE(store->Close().ok());
  }
  auto clean = Store::Check(path_);
  ASSERT_TRUE(clean.ok() && clean->clean());
  uint64_t word_offset = 0;
  for (uint64_t c = 0; c < 4 && word_offset == 0; ++c) {
    const uint64_t offset = internal::kChunkTableOffset + 8 * c;
    if (internal::ChunkKind(WordAt(path_, offset)) == internal::kChunkPages) word_offset = offset;
  }
  ASSERT_NE(word_offset, 0u) << "no page chunk among the first four chunks";
  const uint64_t word = WordAt(path_, word_offset);
  EXPECT_EQ(internal::PageBits(word), internal::PageMask(0, 24));

  SetWordAt(path_, word_offset, word | (uint64_t{1} << 63));  // page 31
  EXPECT_TRUE(Reports(path_, "pages allocated but unreachable from page 31"));
  SetWordAt(path_, word_offset, word & ~(uint64_t{1} << 32));  // page 0
  EXPECT_TRUE(Reports(path_, "reachable pages marked free from page 0"));
  SetWordAt(path_, word_offset, word);
  auto restored = Store::Check(path_);
  ASSERT_TRUE(restored.ok());
  EXPECT_TRUE(restored->clean()) << restored->problems.front();
}

// live_bytes over the values' bytes, for a pool of one size class.
double SpaceAmplification(const std::string& path, uint64_t size, int count) {
  auto store = OpenOrDie(path, SmallPool(8 * kMiB, 1024 * kMiB));
  for (int i = 0; i < count; ++i) EXPECT_TRUE(store->Put("v" + std::to_string(i), ValueFor(i, size)).ok());
  EXPECT_TRUE(store->CheckNow().clean());
  return static_cast<double>(store->GetStats().live_bytes) / static_cast<double>(size * count);
}

TEST_F(StoreLargeValueTest, ValuesOfOneToTwoMiBAndTailsTakeLittleMoreThanTheirSize) {
  EXPECT_LE(SpaceAmplification(dir_.File("1m"), kMiB, 20), 1.15);
  EXPECT_LE(SpaceAmplification(dir_.File("1.5m"), 3 * kMiB / 2, 20), 1.15);
  EXPECT_LE(SpaceAmplification(dir_.File("2.1m"), 21 * kMiB / 10, 20), 1.15);
}

}  // namespace
}  // namespace pmstore
