// Turns fuzz input into a damaged pool: the bytes are edits applied to the
// image of a valid reference pool (damage_harness.h), aimed at the
// metadata recovery and check read, so mutations reach replay, the leaf
// walk and the checker instead of dying at the superblock's magic.
//
// Input format (every byte sequence is valid; leftovers are ignored):
//   byte 0        fix-ups: bit 0 superblock checksum, bit 1 root checksum,
//                 bit 2 both log slot checksums, bit 3 leaf checksums
//                 along the chain; a hostile writer can compute them, so
//                 the code behind each checksum must stand on its own
//   then edits    u8 region, u16 offset (little-endian), u8 length (1..32
//                 after % 32 + 1), `length` bytes written at
//                 region start + offset % region size
#pragma once

#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

#include "pmstore/format/layout.h"
#include "pmstore/format/leaf.h"
#include "pmstore/format/redo_log.h"

namespace pmstore::damage {

struct Region {
  uint64_t start;
  uint64_t size;
};

// The metadata of the reference pool worth editing: superblock, root,
// the head of both log slots, the chunk table, the first chunk's bitmap
// and the leaves and records after it, and a pool's head leaf.
inline int Regions(const std::string& image, Region* out) {
  using namespace internal;  // NOLINT
  Superblock sb;
  std::memcpy(&sb, image.data(), sizeof(sb));
  Root root;
  std::memcpy(&root, image.data() + kRootOffset, sizeof(root));
  int n = 0;
  out[n++] = {0, sizeof(Superblock)};
  out[n++] = {kRootOffset, sizeof(Root)};
  out[n++] = {kLogOffset, 4096};
  out[n++] = {kLogOffset + kLogSlotSize, 4096};
  out[n++] = {kChunkTableOffset, 8 * 16};
  out[n++] = {sb.heap_offset, 64 * 1024};
  out[n++] = {root.head_leaf, kLeafBytes};
  return n;
}

inline void FixChecksums(uint8_t flags, std::string* image) {
  using namespace internal;  // NOLINT
  char* base = image->data();
  const uint64_t length = image->size();
  if (flags & 1) {
    Superblock sb;
    std::memcpy(&sb, base, sizeof(sb));
    sb.checksum = SuperblockChecksum(sb);
    std::memcpy(base, &sb, sizeof(sb));
  }
  if (flags & 2) {
    Root root;
    std::memcpy(&root, base + kRootOffset, sizeof(root));
    root.checksum = RootChecksum(root);
    std::memcpy(base + kRootOffset, &root, sizeof(root));
  }
  if (flags & 4) {
    for (uint64_t slot = 0; slot < 2; ++slot) {
      auto* header = reinterpret_cast<LogHeader*>(base + kLogOffset + slot * kLogSlotSize);
      if (header->count > kLogCapacity) continue;
      header->checksum = LogChecksum(*header, reinterpret_cast<const LogEntry*>(header + 1));
    }
  }
  if (flags & 8) {
    Root root;
    std::memcpy(&root, base + kRootOffset, sizeof(root));
    uint64_t offset = root.head_leaf;
    for (int n = 0; n < 64 && offset != 0 && offset % 8 == 0 && offset <= length - kLeafBytes && length > kLeafBytes;
         ++n) {
      auto* leaf = reinterpret_cast<Leaf*>(base + offset);
      bool sane = leaf->header.count <= kLeafSlots;
      for (int i = 0; sane && i < leaf->header.count; ++i) sane = leaf->header.perm[i] < kLeafSlots;
      if (!sane) break;
      leaf->header.checksum = LeafChecksum(leaf->header, *leaf);
      offset = leaf->header.next;
    }
  }
}

// Makes `*image` the reference image with the edits of `input` applied.
// It reuses the string's buffer: a fresh 8 MiB allocation a run costs
// thousands of page faults, most of a fuzz run's time.
inline void ApplyEdits(const std::string& reference, std::string_view input, std::string* out) {
  std::string& image = *out;
  image.assign(reference);
  if (input.empty()) return;
  Region regions[8];
  const int count = Regions(reference, regions);
  const uint8_t flags = static_cast<uint8_t>(input[0]);
  size_t i = 1;
  while (i + 4 <= input.size()) {
    const Region& r = regions[static_cast<uint8_t>(input[i]) % count];
    const uint64_t offset = static_cast<uint8_t>(input[i + 1]) | (static_cast<uint8_t>(input[i + 2]) << 8);
    const size_t length = static_cast<uint8_t>(input[i + 3]) % 32 + 1;
    i += 4;
    for (size_t j = 0; j < length && i < input.size(); ++j, ++i) {
      const uint64_t at = r.start + (offset + j) % r.size;
      if (at < image.size()) image[at] = input[i];
    }
  }
  FixChecksums(flags, &image);
}

}  // namespace pmstore::damage
