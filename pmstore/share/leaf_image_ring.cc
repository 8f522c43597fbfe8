#include "pmstore/share/leaf_image_ring.h"

#include <atomic>
#include <cstring>

#include "pmstore/share/region_layout.h"

namespace pmstore::internal {
namespace {

// Leaves lie on unit boundaries: the offset's low bits say nothing.
size_t BucketOf(uint64_t leaf) { return ((leaf >> 6) * 0x9e3779b97f4a7c15ull) >> 49; }
static_assert(kLeafImageBuckets == size_t{1} << 15, "BucketOf keeps 15 bits");
static_assert(kLeafImageSlots % kLeafImageReserveRun == 0, "the ring ends with a run");

}  // namespace

bool LeafImageRing::ReserveMore() {
  region::ImageWords* words = region::ImageWordsOf(region_);
  const uint64_t reserved = words->reserved.load(std::memory_order_relaxed);
  if (env_ != nullptr) {
    const off_t offset = region::kImageEntriesOffset + reserved * sizeof(region::ImageEntry);
    if (env_->Fallocate(fd_, offset, kLeafImageReserveRun * sizeof(region::ImageEntry)) != 0) return false;
  }
  words->reserved.store(env_ != nullptr ? reserved + kLeafImageReserveRun : kLeafImageSlots, std::memory_order_relaxed);
  return true;
}

void LeafImageRing::Record(uint64_t commit, uint64_t leaf, const Leaf* before, uint64_t from) {
  region::ImageWords* words = region::ImageWordsOf(region_);
  std::atomic<uint64_t>& bucket = region::ImageBucketsOf(region_)[BucketOf(leaf)];
  uint64_t position = words->next.load(std::memory_order_relaxed);
  // The entries past the reserved ones are reached in order, once, on the
  // ring's first round; with no room for them, the round ends early (the
  // positions skipped are no entry's, and no chain names them).
  const uint64_t slot = position % kLeafImageSlots;
  if (slot >= words->reserved.load(std::memory_order_relaxed) && !ReserveMore()) {
    position += kLeafImageSlots - slot;
  }
  region::ImageEntry& entry = region::ImageEntriesOf(region_)[position % kLeafImageSlots];
  if (position >= kLeafImageSlots && entry.commit > words->lost_through.load(std::memory_order_relaxed)) {
    words->lost_through.store(entry.commit, std::memory_order_relaxed);
  }
  std::atomic_thread_fence(std::memory_order_release);
  // A seqlock's writer: the entry reads as being written before any of
  // its words change.
  entry.position.store(0, std::memory_order_relaxed);
  std::atomic_thread_fence(std::memory_order_release);
  entry.leaf = leaf;
  entry.commit = commit;
  entry.born = before == nullptr ? 1 : 0;
  entry.from = from;
  entry.previous = bucket.load(std::memory_order_relaxed);
  if (before != nullptr) std::memcpy(&entry.image, before, sizeof(Leaf));
  entry.position.store(position + 1, std::memory_order_release);
  bucket.store(position + 1, std::memory_order_release);
  words->next.store(position + 1, std::memory_order_relaxed);
}

void LeafImageRing::Recorded() { std::atomic_thread_fence(std::memory_order_release); }

LeafImageRing::Found LeafImageRing::ImageAt(uint64_t leaf, uint64_t seen, Leaf* copy, uint64_t* from) const {
  const region::ImageEntry* entries = region::ImageEntriesOf(region_);
  Found found = Found::kNone;
  // An entry overwritten (or being overwritten): what it and the entries
  // before it held is lost, which matters only for a commit after `seen`.
  const auto lost = [&] {
    std::atomic_thread_fence(std::memory_order_acquire);
    return region::ImageWordsOf(region_)->lost_through.load(std::memory_order_relaxed) <= seen ? found
                                                                                               : Found::kUnknown;
  };
  // Newest first, so the commits only go down: the last entry of `leaf`
  // above `seen` is of the first commit after it, and holds the leaf as
  // `seen` left it. The chain may end (0) only where the bucket began.
  for (uint64_t at = region::ImageBucketsOf(region_)[BucketOf(leaf)].load(std::memory_order_acquire); at != 0;) {
    const region::ImageEntry& entry = entries[(at - 1) % kLeafImageSlots];
    if (entry.position.load(std::memory_order_acquire) != at) return lost();
    const uint64_t entry_leaf = entry.leaf, commit = entry.commit, born = entry.born, previous = entry.previous;
    const uint64_t born_from = entry.from;
    const bool mine = entry_leaf == leaf && commit > seen;
    if (mine && born == 0 && copy != nullptr) std::memcpy(copy, &entry.image, sizeof(Leaf));
    std::atomic_thread_fence(std::memory_order_acquire);
    // (A copy made from it may have overwritten the one found before.)
    if (entry.position.load(std::memory_order_relaxed) != at) return mine ? Found::kUnknown : lost();
    if (commit <= seen) break;
    if (mine) found = born != 0 ? Found::kBorn : Found::kImage;
    if (mine) *from = born_from;
    at = previous;
  }
  return found;
}

}  // namespace pmstore::internal
