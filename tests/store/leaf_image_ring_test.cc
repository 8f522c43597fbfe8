// The leaf image ring (share/leaf_image_ring.h): a reader asking for a
// leaf as commit `seen` left it gets the image recorded by the first
// commit after `seen` that changed it, learns that a leaf was born after
// `seen` and which leaf it took its keys from, learns that nothing
// changed it, and, once the writer has overwritten what it needed, that
// it cannot know. The ring over a zeroed buffer laid out as the lock
// region (the region file's pages read as zeros when made).
#include "pmstore/share/leaf_image_ring.h"

#include <cstdlib>
#include <cstring>
#include <memory>

#include "gtest/gtest.h"
#include "pmstore/share/region_layout.h"

namespace pmstore::internal {
namespace {

using Found = LeafImageRing::Found;

struct FreeRegion {
  void operator()(void* region) const { std::free(region); }
};

std::unique_ptr<void, FreeRegion> ZeroedRegion() {
  void* region = std::aligned_alloc(4096, (region::kBytes + 4095) / 4096 * 4096);
  std::memset(region, 0, region::kBytes);
  return std::unique_ptr<void, FreeRegion>(region);
}

// A leaf whose header names `count` slots, as a commit before the
// recording one left it.
Leaf LeafWith(uint8_t count) {
  Leaf leaf;
  std::memset(&leaf, 0, sizeof(leaf));
  leaf.header.count = count;
  return leaf;
}

constexpr uint64_t kLeafA = 1 << 20, kLeafB = 2 << 20, kLeafC = 3 << 20;

TEST(LeafImageRingTest, AReaderGetsTheLeafAsItsCommitLeftIt) {
  auto region = ZeroedRegion();
  LeafImageRing ring(region.get());
  const Leaf before5 = LeafWith(1), before7 = LeafWith(2);
  ring.Record(5, kLeafA, &before5);
  ring.Record(6, kLeafB, nullptr, kLeafA);  // born from A's keys
  ring.Record(7, kLeafA, &before7);
  ring.Record(7, LeafImageRing::kChainHead, nullptr, kLeafA);
  LeafImageRing::Recorded();
  Leaf copy;
  uint64_t from = 0;
  EXPECT_EQ(ring.ImageAt(kLeafA, 4, &copy, &from), Found::kImage);
  EXPECT_EQ(copy.header.count, 1) << "the image of the first commit after 4";
  EXPECT_EQ(ring.ImageAt(kLeafA, 5, &copy, &from), Found::kImage);
  EXPECT_EQ(copy.header.count, 2);
  EXPECT_EQ(ring.ImageAt(kLeafA, 7, &copy, &from), Found::kNone);
  EXPECT_EQ(ring.ImageAt(kLeafB, 5, &copy, &from), Found::kBorn);
  EXPECT_EQ(from, kLeafA);
  EXPECT_EQ(ring.ImageAt(kLeafB, 6, &copy, &from), Found::kNone);
  EXPECT_EQ(ring.ImageAt(kLeafC, 0, &copy, &from), Found::kNone);
  EXPECT_EQ(ring.ImageAt(LeafImageRing::kChainHead, 6, nullptr, &from), Found::kBorn);
  EXPECT_EQ(from, kLeafA) << "the head before commit 7";
  EXPECT_EQ(ring.ImageAt(LeafImageRing::kChainHead, 7, nullptr, &from), Found::kNone);
}

TEST(LeafImageRingTest, AReaderWhoseImagesWereOverwrittenLearnsItCannotKnow) {
  auto region = ZeroedRegion();
  LeafImageRing ring(region.get());
  const Leaf before = LeafWith(3);
  ring.Record(5, kLeafA, &before);
  // A lap of other leaves' images, commits 10 on: A's entry is
  // overwritten, and with it everything of commits up to 5.
  for (uint64_t i = 0; i < kLeafImageSlots; ++i) ring.Record(10 + i, kLeafC + 64 * (i + 1), &before);
  LeafImageRing::Recorded();
  Leaf copy;
  uint64_t from = 0;
  EXPECT_EQ(ring.ImageAt(kLeafA, 4, &copy, &from), Found::kUnknown) << "commit 5's image is gone";
  // A reader at 9 lost nothing it needs: the overwritten entries were
  // all of commits at most 9 (the lap began at 10, kept whole).
  EXPECT_EQ(ring.ImageAt(kLeafA, 9, &copy, &from), Found::kNone);
  EXPECT_EQ(ring.ImageAt(kLeafC + 64 * kLeafImageSlots, 9, &copy, &from), Found::kImage);
  EXPECT_EQ(copy.header.count, 3);
}

}  // namespace
}  // namespace pmstore::internal
