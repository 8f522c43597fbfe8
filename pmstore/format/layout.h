// pmstore/format/: what lies on the media, and nothing else. The layout of
// a pool and the codecs of each structure in it (doc/FORMAT.md is the
// prose version): this file's geometry, superblock, root line and chunk
// table words; key.h (key prefixes and hashes), record.h, leaf.h,
// redo_log.h, undo_log.h, image_layout.h (the separator image) and
// empty_pool.h (a new pool's first state). May use persist/ (the redo and
// undo logs persist what recovery writes) and env/ (the boot id), nothing
// above. A format version 3 changes files of this folder, and the readers
// above it only where the new structure is used.
//
//   0        Superblock      immutable after create; magic written last
//   4 KiB    Root line       head leaf, chunks in use, key count; changed
//                            only through the redo log
//   8 KiB    Redo log        two slots; commit N lives in slot N % 2
//   ...      Chunk table     one word per 2 MiB heap chunk
//   heap     2 MiB chunks    small chunks (4 KiB bitmap of 64 B units, then
//                            records and leaves), runs of large values, or
//                            page chunks (32 value pages of 64 KiB for
//                            values of 1-2 MiB and the tails of larger ones)
//
// Every multi-byte field is little-endian (x86-64 only). Offsets are from
// the start of the file, which is also the start of the mapping.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace pmstore::internal {

inline constexpr char kMagic[8] = {'P', 'M', 'S', 'T', 'O', 'R', 'E', '\0'};
// Version 2 (new pools) added leaf cells and page chunks. A version 1
// pool still opens with its own geometry (LeafGeometry, from the
// superblock) and is written as version 1 wrote it (no cells, no page
// chunks), since a version 1 build would misread them.
inline constexpr uint32_t kFormatVersion = 2;
inline constexpr uint32_t kOldestFormatVersion = 1;
inline constexpr uint32_t kFirstPagedVersion = 2;

inline constexpr uint64_t kUnitSize = 64;  // allocation unit and cache line
inline constexpr uint64_t kChunkSize = 2ull << 20;
inline constexpr uint64_t kUnitsPerChunk = kChunkSize / kUnitSize;  // 32768
inline constexpr uint64_t kBitmapWords = kUnitsPerChunk / 64;       // 512
inline constexpr uint64_t kBitmapUnits = kBitmapWords * 8 / kUnitSize;  // 64 units = 4 KiB
inline constexpr uint64_t kLogSlotSize = 1ull << 20;
inline constexpr uint64_t kRootOffset = 4096;
inline constexpr uint64_t kLogOffset = 8192;
inline constexpr uint64_t kChunkTableOffset = kLogOffset + 2 * kLogSlotSize;
// Values this large or larger live outside their record: in runs of
// whole chunks, 2 MiB aligned, and (version 2) in value pages of page chunks.
inline constexpr uint64_t kLargeValueThreshold = 1ull << 20;
// The unit of a page chunk: a format quantity, not a page of the MMU
// (base::kPageSize, 4 KiB, is that).
inline constexpr uint64_t kValuePageSize = 64ull << 10;
inline constexpr uint64_t kPagesPerChunk = kChunkSize / kValuePageSize;  // 32

// The mapped pool as the format's recovery code sees it: its bytes, and
// the file's name for messages.
struct PoolView {
  char* base;
  uint64_t length;
  std::string path;
};

struct Superblock {
  char magic[8];
  uint32_t version;
  uint32_t superblock_size;  // sizeof(Superblock) of the writer
  uint64_t unit_size;
  uint64_t chunk_size;
  uint64_t leaf_slots;
  uint64_t root_offset;
  uint64_t log_offset;
  uint64_t log_slot_size;
  uint64_t chunk_table_offset;
  uint64_t max_chunks;  // capacity of the chunk table: the most the pool may grow to
  uint64_t heap_offset;
  // Bytes of each leaf cell (version 2; a multiple of the unit). Version 1
  // superblocks lack the field (SuperblockV1); it reads 0 for them.
  uint64_t leaf_cell_bytes;
  uint64_t checksum;  // XXH3 of every byte before this field
};
// The version 1 superblock: the same fields without leaf_cell_bytes.
struct SuperblockV1 {
  char magic[8];
  uint32_t version;
  uint32_t superblock_size;
  uint64_t unit_size;
  uint64_t chunk_size;
  uint64_t leaf_slots;
  uint64_t root_offset;
  uint64_t log_offset;
  uint64_t log_slot_size;
  uint64_t chunk_table_offset;
  uint64_t max_chunks;
  uint64_t heap_offset;
  uint64_t checksum;
};
static_assert(sizeof(Superblock) == sizeof(SuperblockV1) + 8);

struct Root {
  uint64_t head_leaf;   // offset of the first leaf (never 0)
  uint64_t num_chunks;  // heap chunks the pool file holds at least
  uint64_t key_count;
  // Offset of the separator image (a large run; 0: none), written by a
  // clean close and valid only for the commit it names (image_layout.h).
  // Zero in pools written before the image existed.
  uint64_t separator_image;
  uint64_t reserved[3];
  uint64_t checksum;  // XXH3 of the 56 bytes before it
};
inline constexpr uint64_t kRootWords = sizeof(Root) / 8;
static_assert(sizeof(Root) == 64);
inline constexpr uint64_t kRootHeadLeafWord = kRootOffset + offsetof(Root, head_leaf);
inline constexpr uint64_t kRootImageWord = kRootOffset + offsetof(Root, separator_image);

// Chunk table words (doc/FORMAT.md, "Chunk table and heap").
inline constexpr uint64_t kChunkFree = 0;
inline constexpr uint64_t kChunkSmall = 1;
// | run length in whole chunks << 8 | tail pages << 40: a run of `run`
// chunks, then (tail pages > 0, version 2) the first `tail` pages of the
// page chunk right after it.
inline constexpr uint64_t kChunkLargeHead = 2;
inline constexpr uint64_t kChunkLargeTail = 3;
inline constexpr uint64_t kChunkPages = 4;  // | bitmap of pages in use << 32
inline uint64_t ChunkKind(uint64_t word) { return word & 0xff; }
inline uint64_t RunChunks(uint64_t word) { return (word >> 8) & 0xffffffffull; }
inline uint64_t RunTailPages(uint64_t word) { return (word >> 40) & 0xff; }
inline uint64_t RunHeadWord(uint64_t chunks, uint64_t tail_pages) {
  return kChunkLargeHead | (chunks << 8) | (tail_pages << 40);
}
inline uint32_t PageBits(uint64_t word) { return static_cast<uint32_t>(word >> 32); }
inline uint64_t PageChunkWord(uint32_t bits) { return kChunkPages | (static_cast<uint64_t>(bits) << 32); }
// Bits first .. first+count-1 of a page bitmap (first + count <= 32).
inline uint32_t PageMask(uint64_t first, uint64_t count) {
  return static_cast<uint32_t>(((1ull << count) - 1) << first);
}

// Where a large value of `bytes` lives: `chunks` whole chunks then
// `tail_pages` pages (a run, 2 MiB aligned), or, when `chunks` is 0,
// `pages` contiguous pages of page chunks (64 KiB aligned, possibly across
// adjacent page chunks). Version 1 pools use whole chunks only.
struct LargeLayout {
  uint64_t chunks = 0;
  uint64_t tail_pages = 0;
  uint64_t pages = 0;
};
inline LargeLayout LayoutFor(uint64_t bytes, bool paged) {
  LargeLayout layout;
  if (!paged) {
    layout.chunks = (bytes + kChunkSize - 1) / kChunkSize;
  } else if (bytes < kChunkSize) {
    layout.pages = (bytes + kValuePageSize - 1) / kValuePageSize;
  } else {
    layout.chunks = bytes / kChunkSize;
    layout.tail_pages = (bytes % kChunkSize + kValuePageSize - 1) / kValuePageSize;
  }
  return layout;
}

inline uint64_t UnitsFor(uint64_t bytes) { return (bytes + kUnitSize - 1) / kUnitSize; }

// XXH3-64, the checksum of every structure.
uint64_t Checksum(const void* data, size_t size);
uint64_t SuperblockChecksum(const Superblock& sb);
uint64_t RootChecksum(const Root& root);

}  // namespace pmstore::internal
