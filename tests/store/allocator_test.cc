// SpaceAllocator's large values on an in-memory pool: pages of page
// chunks for values of 1-2 MiB (across adjacent page chunks), runs with
// their tail pages, quarantine of freed pages, growth, and version 1
// pools, which keep whole runs.
#include "pmstore/space/allocator.h"

#include <algorithm>
#include <cstring>
#include <memory>
#include <vector>

#include "gtest/gtest.h"
#include "store/memory_pool.h"

namespace pmstore::internal {
namespace {

constexpr uint64_t kMiB = 1ull << 20;
constexpr uint64_t kMaxChunks = 16;

// A pool's chunk table and heap in memory; commits apply the logged words.
class AllocatorTest : public ::testing::Test {
 protected:
  void Make(uint32_t version, uint64_t chunks) {
    pool_ = std::make_unique<MemoryPool>(version, kMaxChunks);
    sb_ = pool_->sb;
    tx_ = std::make_unique<Transaction>(pool_->base());
    alloc_ = std::make_unique<SpaceAllocator>(
        pool_->base(), sb_, [](uint64_t want) -> absl::StatusOr<uint64_t> { return std::min(want, kMaxChunks); });
    alloc_->Load(chunks);
  }
  void Commit() {
    pool_->Apply(*tx_);
    alloc_->Committed(++seq_);
  }
  uint64_t Alloc(uint64_t bytes) {
    auto offset = alloc_->AllocValue(*tx_, bytes);
    EXPECT_TRUE(offset.ok()) << offset.status();
    return offset.value_or(0);
  }
  uint64_t Word(uint64_t c) const { return pool_->Word(c); }
  uint64_t Chunk(uint64_t c) const { return sb_.heap_offset + c * kChunkSize; }
  uint64_t Page(uint64_t c, uint64_t page) const { return Chunk(c) + page * kValuePageSize; }

  std::unique_ptr<MemoryPool> pool_;
  Superblock sb_;
  std::unique_ptr<Transaction> tx_;
  std::unique_ptr<SpaceAllocator> alloc_;
  uint64_t seq_ = 0;
};

TEST_F(AllocatorTest, ValuesOfOneToTwoMiBTakePagesFirstFitAcrossAdjacentPageChunks) {
  Make(kFormatVersion, 4);
  const uint64_t a = Alloc(3 * kMiB / 2);  // 24 pages
  const uint64_t b = Alloc(3 * kMiB / 2);  // 8 pages of chunk 0, then 16 of chunk 1
  const uint64_t c = Alloc(kMiB);          // the 16 pages left in chunk 1
  Commit();
  EXPECT_EQ(a, Page(0, 0));
  EXPECT_EQ(b, Page(0, 24));
  EXPECT_EQ(c, Page(1, 16));
  EXPECT_EQ(Word(0), PageChunkWord(~0u));
  EXPECT_EQ(Word(1), PageChunkWord(~0u));
  EXPECT_EQ(Word(2), kChunkFree);
  const SpaceUsage usage = alloc_->Usage();
  EXPECT_EQ(usage.live_bytes, 4 * kMiB);
  EXPECT_EQ(usage.free_bytes, 2 * kChunkSize);
}

TEST_F(AllocatorTest, TailOfALargerValueIsTheFirstPagesAfterItsRunAndTheRestServesPageValues) {
  Make(kFormatVersion, 4);
  const uint64_t big = Alloc(2 * kChunkSize + kMiB / 10);  // two chunks, then 2 pages
  const uint64_t mid = Alloc(kMiB + 1);                     // 17 pages
  const uint64_t other = Alloc(kChunkSize + 1);             // another run: its tail cannot share
  Commit();
  EXPECT_EQ(big, Chunk(0));
  EXPECT_EQ(Word(0), RunHeadWord(2, 2));
  EXPECT_EQ(Word(1), kChunkLargeTail);
  EXPECT_EQ(mid, Page(2, 2));
  EXPECT_EQ(Word(2), PageChunkWord(PageMask(0, 19)));
  EXPECT_EQ(other, Chunk(3));
  EXPECT_EQ(Word(3), RunHeadWord(1, 1));
  EXPECT_EQ(Word(4), PageChunkWord(1));  // the pool grew for it
  EXPECT_TRUE(alloc_->IsRunHead(big));
  EXPECT_FALSE(alloc_->IsRunHead(mid));

  // Freeing the run frees its tail pages and leaves the page value alone.
  alloc_->FreeValue(*tx_, big, 2 * kChunkSize + kMiB / 10);
  Commit();
  EXPECT_EQ(Word(0), kChunkFree);
  EXPECT_EQ(Word(1), kChunkFree);
  EXPECT_EQ(Word(2), PageChunkWord(PageMask(2, 17)));
}

TEST_F(AllocatorTest, FreedPagesStayQuarantinedUntilReleasedAndAnEmptyPageChunkReturnsToFree) {
  Make(kFormatVersion, 2);
  const uint64_t a = Alloc(kMiB);
  const uint64_t b = Alloc(kMiB);
  Commit();
  alloc_->FreeValue(*tx_, a, kMiB);
  Commit();
  EXPECT_EQ(Word(0), PageChunkWord(PageMask(16, 16)));
  // Not reusable yet: a pinned reader or a crash may still need them.
  const uint64_t c = Alloc(kMiB);
  Commit();
  EXPECT_NE(c, a);
  EXPECT_EQ(c, Page(1, 0));
  alloc_->ReleaseThrough(seq_);
  EXPECT_EQ(Alloc(kMiB), a);
  Commit();

  // The last pages of a chunk freed: the chunk itself is free, and a run
  // may have it once the quarantine lets go.
  alloc_->FreeValue(*tx_, a, kMiB);
  alloc_->FreeValue(*tx_, b, kMiB);
  Commit();
  EXPECT_EQ(Word(0), kChunkFree);
  auto run = alloc_->AllocRun(*tx_, 1);
  ASSERT_TRUE(run.ok());
  EXPECT_NE(*run, Chunk(0));
  Commit();
  alloc_->ReleaseThrough(seq_);
  auto again = alloc_->AllocRun(*tx_, 1);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(*again, Chunk(0));
}

TEST_F(AllocatorTest, AbandonedTransactionLeavesNoPagesTaken) {
  Make(kFormatVersion, 2);
  const uint64_t a = Alloc(kMiB);
  tx_->Clear();
  alloc_->Abandoned();
  EXPECT_EQ(Alloc(kMiB), a);
}

TEST_F(AllocatorTest, GrowsForPagesAndRunsAndFailsCleanlyWhenFull) {
  Make(kFormatVersion, 1);
  for (int i = 0; i < 2 * static_cast<int>(kMaxChunks); ++i) Alloc(kMiB);
  Commit();
  EXPECT_EQ(alloc_->num_chunks(), kMaxChunks);
  auto full = alloc_->AllocValue(*tx_, kMiB);
  EXPECT_TRUE(absl::IsResourceExhausted(full.status())) << full.status();
}

TEST_F(AllocatorTest, UnsyncedRunKnowsThePagesItAllocated) {
  Make(kFormatVersion, 2);
  const uint64_t before = Alloc(kMiB);
  Commit();
  alloc_->BeginRun();
  const uint64_t fresh = Alloc(kMiB);
  EXPECT_TRUE(alloc_->FreshInRun(fresh));
  EXPECT_TRUE(alloc_->FreshInRun(fresh + kMiB - 64));
  EXPECT_FALSE(alloc_->FreshInRun(before));
  alloc_->EndRun();
  EXPECT_FALSE(alloc_->FreshInRun(fresh));
}

TEST_F(AllocatorTest, VersionOnePoolKeepsWholeRuns) {
  Make(1, 4);
  EXPECT_FALSE(alloc_->paged());
  const uint64_t a = Alloc(3 * kMiB / 2);
  const uint64_t b = Alloc(kChunkSize + kMiB / 10);
  Commit();
  EXPECT_EQ(a, Chunk(0));
  EXPECT_EQ(Word(0), RunHeadWord(1, 0));
  EXPECT_EQ(b, Chunk(1));
  EXPECT_EQ(Word(1), RunHeadWord(2, 0));
  for (uint64_t c = 0; c < alloc_->num_chunks(); ++c) EXPECT_NE(ChunkKind(Word(c)), kChunkPages) << c;
}

}  // namespace
}  // namespace pmstore::internal
