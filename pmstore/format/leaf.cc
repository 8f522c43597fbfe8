#include "pmstore/format/leaf.h"

#include <cstring>

#include "absl/strings/str_cat.h"

namespace pmstore::internal {

uint64_t LeafChecksum(const LeafHeader& header, const Leaf& leaf) {
  // next, count, perm[0..count), then the slots and fingerprints in key order.
  const LeafSlot* slots = leaf.slots;
  unsigned char buffer[8 + 1 + kLeafSlots + kLeafSlots * (sizeof(LeafSlot) + 1)];
  size_t n = 0;
  std::memcpy(buffer, &header.next, 8);
  n += 8;
  const uint8_t count = header.count > kLeafSlots ? kLeafSlots : header.count;
  buffer[n++] = header.count;
  std::memcpy(buffer + n, header.perm, count);
  n += count;
  for (uint8_t i = 0; i < count; ++i) {
    const uint8_t slot = header.perm[i] < kLeafSlots ? header.perm[i] : 0;
    std::memcpy(buffer + n, &slots[slot], sizeof(LeafSlot));
    n += sizeof(LeafSlot);
    buffer[n++] = leaf.fingerprints[slot];
  }
  return Checksum(buffer, n);
}

bool LeafInHeap(uint64_t length, uint64_t heap_offset, const LeafGeometry& geometry, uint64_t offset) {
  return offset >= heap_offset && offset % kUnitSize == 0 && length >= geometry.bytes() &&
         offset <= length - geometry.bytes();
}

LeafFault CheckLeafSlots(const LeafHeader& header, const Leaf& leaf) {
  if (header.count > kLeafSlots) return LeafFault::kBadPermutation;
  uint64_t seen = 0;
  for (int i = 0; i < header.count; ++i) {
    const uint8_t slot = header.perm[i];
    if (slot >= kLeafSlots || (seen & (1ull << slot)) != 0) return LeafFault::kBadPermutation;
    seen |= 1ull << slot;
  }
  return LeafChecksum(header, leaf) == header.checksum ? LeafFault::kSound : LeafFault::kBadChecksum;
}

LeafFault CheckLeaf(const char* base, uint64_t length, uint64_t heap_offset, const LeafGeometry& geometry,
                    uint64_t offset, const LeafHeader& header) {
  if (!LeafInHeap(length, heap_offset, geometry, offset)) return LeafFault::kOutsideHeap;
  return CheckLeafSlots(header, *reinterpret_cast<const Leaf*>(base + offset));
}

LeafFault CheckLeaf(const char* base, uint64_t length, uint64_t heap_offset, const LeafGeometry& geometry,
                    uint64_t offset) {
  if (!LeafInHeap(length, heap_offset, geometry, offset)) return LeafFault::kOutsideHeap;
  return CheckLeaf(base, length, heap_offset, geometry, offset, reinterpret_cast<const Leaf*>(base + offset)->header);
}

std::string LeafFaultMessage(LeafFault fault, uint64_t offset) {
  switch (fault) {
    case LeafFault::kSound: return absl::StrCat("index leaf at offset ", offset, " is sound");
    case LeafFault::kOutsideHeap: return absl::StrCat("index leaf offset ", offset, " is outside the heap");
    case LeafFault::kBadPermutation: return absl::StrCat("index leaf at offset ", offset, " has a bad slot permutation");
    case LeafFault::kBadChecksum: return absl::StrCat("checksum failure in index leaf at offset ", offset);
  }
  return absl::StrCat("index leaf at offset ", offset, " is damaged");
}

LeafImage::LeafImage(uint64_t next) {
  std::memset(&leaf_, 0, sizeof(leaf_));
  leaf_.header.next = next;
}

int LeafImage::Add(const LeafSlot& slot, uint8_t fingerprint, int wanted) {
  int s = wanted % static_cast<int>(kLeafSlots);
  while (used_ & (1ull << s)) s = (s + 1) % static_cast<int>(kLeafSlots);
  used_ |= 1ull << s;
  leaf_.slots[s] = slot;
  leaf_.fingerprints[s] = fingerprint;
  leaf_.header.perm[leaf_.header.count++] = static_cast<uint8_t>(s);
  return s;
}

const Leaf& LeafImage::Finish() {
  leaf_.header.checksum = LeafChecksum(leaf_.header, leaf_);
  return leaf_;
}

}  // namespace pmstore::internal
