// The leaf image ring (share/leaf_image_ring.h): a reader asking for a
// leaf as commit `seen` left it gets the image recorded by the first
// commit after `seen` that changed it, learns that a leaf was born after
// `seen` and which leaf it took its keys from, learns that nothing
// changed it, and, once the writer has overwritten what it needed, that
// it cannot know. The ring over a zeroed buffer laid out as the lock
// region (the region file's pages read as zeros when made), and over a
// real region, whose pages the writer reserves as it reaches them.
#include "pmstore/share/leaf_image_ring.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <memory>

#include "gtest/gtest.h"
#include "pmstore/share/lock_region.h"
#include "pmstore/share/region_layout.h"
#include "store/lock_region_test_util.h"
#include "support/fault_injection_env.h"

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
  LeafImageRing ring(region.get(), nullptr, -1);
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
  LeafImageRing ring(region.get(), nullptr, -1);
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

// The region file is sparse: a writer reserves the ring's pages a run of
// entries at a time (a page of a full /dev/shm made by a write would
// raise SIGBUS). Where no room is left, the ring wraps over the entries
// it has, and a reader of an entry overwritten so learns it cannot know.
class LeafImageRingRegionTest : public testing::LockRegionTest {
 protected:
  // A writable slot in the pool's region, attached through `env_`.
  std::unique_ptr<ReaderSlot> AttachThroughEnv() {
    const int fd = open(pool_.c_str(), O_RDWR | O_CLOEXEC);
    if (fd < 0) return nullptr;
    auto slot = ReaderSlot::Attach(&env_, fd, /*writable=*/true);
    close(fd);
    return slot.ok() ? std::move(*slot) : nullptr;
  }
  size_t Fallocates() const {
    size_t calls = 0;
    for (const auto& record : env_.trace()) calls += record.call == testing::FaultInjectionEnv::Call::kFallocate;
    return calls;
  }
  // Bytes of the region's file that hold pages.
  uint64_t RegionBytes(const ReaderSlot& slot) const {
    struct stat st;
    return stat(slot.region_path().c_str(), &st) == 0 ? uint64_t{512} * st.st_blocks : 0;
  }

  testing::FaultInjectionEnv env_;
};

TEST_F(LeafImageRingRegionTest, AWriterWrapsTheRingEarlyWhereDevShmHasNoRoomForMoreEntries) {
  auto slot = AttachThroughEnv();
  ASSERT_NE(slot, nullptr);
  EXPECT_EQ(Fallocates(), 1u) << "the region's making reserves its first pages";
  const uint64_t made = RegionBytes(*slot);
  EXPECT_GE(made, region::kImageEntriesOffset + kLeafImageReserveRun * sizeof(region::ImageEntry));
  EXPECT_LT(made, region::kBytes / 4);
  LeafImageRing ring = slot->leaf_images();
  const Leaf before = LeafWith(4);
  const auto leaf = [](uint64_t i) { return kLeafA + 64 * i; };
  // No room for a second run: the entry after the first run overwrites
  // the first entry.
  env_.Reset();
  env_.FailAt(0, ENOSPC);
  for (uint64_t i = 0; i <= kLeafImageReserveRun; ++i) ring.Record(10 + i, leaf(i), &before);
  LeafImageRing::Recorded();
  EXPECT_EQ(Fallocates(), 1u) << "one try, at the run's end";
  EXPECT_EQ(RegionBytes(*slot), made);
  Leaf copy;
  uint64_t from = 0;
  EXPECT_EQ(ring.ImageAt(leaf(0), 9, &copy, &from), Found::kUnknown) << "overwritten by the entry after the run";
  EXPECT_EQ(ring.ImageAt(leaf(1), 10, &copy, &from), Found::kImage);
  EXPECT_EQ(copy.header.count, 4);
  // Room again: the next round reserves the second run when it reaches
  // it, and the ring holds more than a run from then on.
  env_.Reset();
  for (uint64_t i = 0; i <= kLeafImageReserveRun; ++i) ring.Record(1000 + i, leaf(i), &before);
  LeafImageRing::Recorded();
  EXPECT_EQ(Fallocates(), 1u);
  EXPECT_GE(RegionBytes(*slot), made + kLeafImageReserveRun * sizeof(region::ImageEntry));
  EXPECT_EQ(ring.ImageAt(leaf(0), 999, &copy, &from), Found::kImage)
      << "the round's first entry is still there: the ring went on past the first run";
  EXPECT_EQ(ring.ImageAt(leaf(kLeafImageReserveRun), 999, &copy, &from), Found::kImage);
}

}  // namespace
}  // namespace pmstore::internal
