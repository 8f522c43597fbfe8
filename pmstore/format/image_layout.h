// The separator image's layout (doc/FORMAT.md, "Separator image");
// index/separator_image.h writes and searches it.
#pragma once

#include <cstdint>

#include "pmstore/format/layout.h"

namespace pmstore::internal {

// The separator image: the in-memory separator map (index/separator_map.h) as
// of one commit, so that an open after a clean close need not walk the
// leaf chain. A sorted array of fixed-size entries, searched in place,
// and every kImageFenceStride-th entry's first 16 key bytes again in a
// small fence array that narrows the search to one stride of entries.
//   header | entries[count] | fences[ceil(count / stride)] | tails
// Advisory: open uses it only when both checksums match and `seq`, the
// head leaf and the key count are the root's and the last commit's; else
// it walks the chain. The first write after open frees it.
inline constexpr uint64_t kImageMagic = 0x314d495045534d50ull;  // "PMSEPIM1"
inline constexpr uint64_t kImageFenceStride = 16;
struct SeparatorImageHeader {
  uint64_t magic;
  uint64_t seq;        // the commit that wrote it (and the state it describes)
  uint64_t head_leaf;  // the root's, at that commit
  uint64_t key_count;  // the root's, at that commit
  uint64_t count;      // entries (leaves)
  uint64_t bytes;      // the whole image, header included
  uint64_t body_checksum;  // XXH3 of bytes [64, bytes)
  uint64_t checksum;       // XXH3 of the 56 bytes before it
};
static_assert(sizeof(SeparatorImageHeader) == 64);
struct SeparatorImageEntry {
  uint64_t hi;      // KeyPrefix(separator)
  uint64_t lo;      // KeyPrefix(separator, 8)
  uint32_t length;  // of the separator
  uint32_t tail;    // offset in the image of its bytes from 16 on (length > 16)
  uint64_t leaf;
};
static_assert(sizeof(SeparatorImageEntry) == 32);
struct SeparatorImageFence {
  uint64_t hi;
  uint64_t lo;
};

uint64_t SeparatorImageHeaderChecksum(const SeparatorImageHeader& header);

}  // namespace pmstore::internal
