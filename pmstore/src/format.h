// The on-media layout of a pool (doc/FORMAT.md is the prose version).
//
//   0        Superblock      immutable after create; magic written last
//   4 KiB    Root line       head leaf, chunks in use, key count; changed
//                            only through the redo log
//   8 KiB    Redo log        two slots; commit N lives in slot N % 2
//   ...      Chunk table     one word per 2 MiB heap chunk
//   heap     2 MiB chunks    small chunks (4 KiB bitmap of 64 B units, then
//                            records and leaves), runs of large values, or
//                            page chunks (32 pages of 64 KiB for values of
//                            1-2 MiB and the tails of larger ones)
//
// Every multi-byte field is little-endian (x86-64 only). Offsets are from
// the start of the file, which is also the start of the mapping.
#pragma once

#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string_view>

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
// whole chunks, 2 MiB aligned, and (version 2) in pages of page chunks.
inline constexpr uint64_t kLargeValueThreshold = 1ull << 20;
inline constexpr uint64_t kPageSize = 64ull << 10;
inline constexpr uint64_t kPagesPerChunk = kChunkSize / kPageSize;  // 32

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
  // clean close and valid only for the commit it names (see below).
  // Zero in pools written before the image existed.
  uint64_t separator_image;
  uint64_t reserved[3];
  uint64_t checksum;  // XXH3 of the 56 bytes before it
};
inline constexpr uint64_t kRootWords = sizeof(Root) / 8;
static_assert(sizeof(Root) == 64);

// One commit: `count` (offset, value) word writes, applied after the
// header and entries are durable. Valid when the checksum matches.
struct LogHeader {
  uint64_t seq;
  uint64_t count;
  uint64_t checksum;  // XXH3 of seq, count and the entries
  uint64_t reserved[5];
};
struct LogEntry {
  uint64_t offset;
  uint64_t value;
};
inline constexpr uint64_t kLogCapacity = (kLogSlotSize - sizeof(LogHeader)) / sizeof(LogEntry);
// Log entries whose offset carries one of these bits are not writes: they
// name an object the commit wrote in place (a record, a new leaf), which
// recovery verifies by its checksum before it trusts the newest commit.
inline constexpr uint64_t kVerifyRecord = 1ull << 63;
inline constexpr uint64_t kVerifyLeaf = 1ull << 62;
inline constexpr uint64_t kVerifyMask = kVerifyRecord | kVerifyLeaf;

// An unsynced run (doc/FORMAT.md, "Unsynced runs") keeps an undo log in
// the log slot that the commit it started from does not use: the header
// in the slot's first line (its first word where a LogHeader has seq),
// then one entry per 64-byte line the run changed that was live before
// it, holding that line's contents from before the run. The run is open
// while the header is valid and the other slot still holds the commit it
// names (seq and checksum; seq 0 and checksum 0: a pool with no commit).
inline constexpr uint64_t kUndoMagic = 0x31304f444e554d50ull;  // "PMUNDO01"
struct UndoHeader {
  uint64_t magic;
  uint64_t base_seq;       // the commit a power failure inside the run returns to
  uint64_t base_checksum;  // its LogHeader::checksum
  uint64_t run_id;         // tells this run's entries from an earlier run's
  uint64_t checksum;       // XXH3 of the four words before it
  // The kernel's boot id when the run began (boot_id.h). Recovery in the
  // same boot keeps the run (a killed process); in another it rolls back.
  // Outside the checksum, so that a run begun by a build without it still
  // recovers: there it reads zero, which names no boot, and rolls back.
  // Written in the header's line before the run changes anything.
  uint64_t boot_id[2];
  uint64_t reserved;
};
static_assert(sizeof(UndoHeader) == 64);
struct UndoEntry {
  uint64_t offset;    // of the line in the pool
  uint64_t checksum;  // UndoEntryChecksum()
  char line[64];
};
inline constexpr uint64_t kUndoEntriesOffset = sizeof(UndoHeader);

// The commit an unsynced run is applying in place, for recovery in the
// same boot: the undo slot's last line, with the commit's words (as
// LogEntry, `count` of them) just below it. Never flushed: after a power
// failure it is ignored, and within a boot memory holds it as written.
inline constexpr uint64_t kApplyingMagic = 0x31594c5050414d50ull;  // "PMAPPLY1"
struct ApplyJournal {
  uint64_t sealed;  // kApplyingMagic from before the apply to its end; else 0
  uint64_t run_id;  // the run's (UndoHeader::run_id)
  uint64_t count;
  uint64_t reserved[5];
};
static_assert(sizeof(ApplyJournal) == 64);
inline constexpr uint64_t kApplyJournalOffset = kLogSlotSize - sizeof(ApplyJournal);  // in the undo slot
// Undo entries a run may write: below the journal's line. Recovery reads
// on to the end of the slot (a pool written before the journal existed may
// use that line too); the first entry whose checksum fails ends the log.
inline constexpr uint64_t kUndoCapacity = (kApplyJournalOffset - kUndoEntriesOffset) / sizeof(UndoEntry);
inline constexpr uint64_t kUndoSlotEntries = (kLogSlotSize - kUndoEntriesOffset) / sizeof(UndoEntry);

// The separator image: the in-memory separator map (separator_map.h) as
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
    layout.pages = (bytes + kPageSize - 1) / kPageSize;
  } else {
    layout.chunks = bytes / kChunkSize;
    layout.tail_pages = (bytes % kChunkSize + kPageSize - 1) / kPageSize;
  }
  return layout;
}

// A leaf of the ordered index: up to kLeafSlots entries in any slots, kept
// in key order by the permutation in the header. The header is one cache
// line and changes only through the log; a slot is written in place only
// while no committed header refers to it.
inline constexpr uint64_t kLeafSlots = 47;
struct LeafHeader {
  uint64_t next;      // offset of the next leaf in key order, 0 = last
  uint64_t checksum;  // LeafChecksum()
  uint8_t count;
  uint8_t perm[kLeafSlots];
};
static_assert(sizeof(LeafHeader) == 64);
inline constexpr uint64_t kLeafHeaderWords = 8;
struct LeafSlot {
  // Key bytes 0-7 and 8-15 (KeyPrefix): comparisons of keys that differ
  // in their first 16 bytes end here, without reading the record.
  uint64_t prefix;
  uint64_t prefix2;
  uint64_t record;  // offset of the record
};
struct Leaf {
  LeafHeader header;
  // One byte of each slot's key hash: a point lookup reads a record only
  // where the fingerprint matches. Written in place with its slot.
  uint8_t fingerprints[64];
  LeafSlot slots[kLeafSlots];
};
// The slot part of a leaf (all of a version 1 leaf).
inline constexpr uint64_t kLeafUnits = (sizeof(Leaf) + kUnitSize - 1) / kUnitSize;  // 20
inline constexpr uint64_t kLeafBytes = kLeafUnits * kUnitSize;

// Version 2: the slot part is followed by one cell per slot. A record
// that fits (RecordBytes <= cell bytes, never a large one) lies in the
// cell of the slot that names it, in the ordinary record format, and the
// slot's `record` is the cell's own offset; bigger records lie out of line
// as in version 1. 192 bytes hold a 16 B key and a 100 B value (140 B).
inline constexpr uint64_t kLeafCellBytes = 192;
// A pool's leaf layout, from its superblock.
struct LeafGeometry {
  uint64_t cell_bytes = 0;  // 0: no cells (version 1)
  uint64_t units = kLeafUnits;

  static LeafGeometry Of(const Superblock& sb) {
    LeafGeometry g;
    g.cell_bytes = sb.version >= 2 ? sb.leaf_cell_bytes : 0;
    g.units = kLeafUnits + kLeafSlots * g.cell_bytes / kUnitSize;
    return g;
  }
  bool cells() const { return cell_bytes != 0; }
  uint64_t bytes() const { return units * kUnitSize; }
  uint64_t CellOffset(uint64_t leaf, uint64_t slot) const { return leaf + kLeafBytes + slot * cell_bytes; }
  // Whether a record of `bytes` (RecordBytes) of a small value fits a cell.
  bool Fits(uint64_t record_bytes, uint64_t value_len) const {
    return record_bytes <= cell_bytes && value_len < kLargeValueThreshold;
  }
  // Whether `record`, named by slot `slot` of the leaf at `leaf`, lies in
  // that slot's cell (else it lies out of line).
  bool InCell(uint64_t leaf, uint64_t slot, uint64_t record) const {
    return cells() && record == CellOffset(leaf, slot);
  }
};

// A record: header, [value offset when large], key, [value when inline].
inline constexpr uint32_t kRecordLargeValue = 1;
struct RecordHeader {
  uint64_t checksum;  // XXH3 of everything after this field, the large value included
  uint32_t key_len;
  uint32_t flags;
  uint64_t value_len;
};
static_assert(sizeof(RecordHeader) == 24);

inline uint64_t RecordBytes(uint64_t key_len, uint64_t value_len) {
  return value_len >= kLargeValueThreshold ? sizeof(RecordHeader) + 8 + key_len
                                           : sizeof(RecordHeader) + key_len + value_len;
}
inline uint64_t UnitsFor(uint64_t bytes) { return (bytes + kUnitSize - 1) / kUnitSize; }

// Key bytes [from, from+8) as a big-endian number, zero padded: comparing
// prefixes orders keys like memcmp whenever the prefixes differ.
inline uint64_t KeyPrefix(std::string_view key, size_t from = 0) {
  if (std::endian::native == std::endian::little && key.size() >= from + 8) {  // one load and a byte swap
    uint64_t v;
    std::memcpy(&v, key.data() + from, 8);
    return __builtin_bswap64(v);
  }
  unsigned char bytes[8] = {0};
  if (key.size() > from) std::memcpy(bytes, key.data() + from, key.size() - from < 8 ? key.size() - from : 8);
  uint64_t v = 0;
  for (unsigned char b : bytes) v = (v << 8) | b;
  return v;
}

uint64_t Checksum(const void* data, size_t size);
uint64_t SuperblockChecksum(const Superblock& sb);
uint64_t RootChecksum(const Root& root);
uint64_t SeparatorImageHeaderChecksum(const SeparatorImageHeader& header);
// Covers next, count, the permutation in use and the slots (and
// fingerprints) it names, so stale bytes in free slots do not matter.
// `header` may differ from leaf.header (a transaction's version).
uint64_t LeafChecksum(const LeafHeader& header, const Leaf& leaf);
// XXH3 of the key: its low byte is the fingerprint, and bits 32 and up
// choose the key's home slot in a version 2 leaf.
uint64_t KeyHash(std::string_view key);
inline uint8_t FingerprintOf(uint64_t hash) { return static_cast<uint8_t>(hash); }
inline uint8_t KeyFingerprint(std::string_view key) { return FingerprintOf(KeyHash(key)); }
inline int HomeSlot(uint64_t hash) { return static_cast<int>((hash >> 32) % kLeafSlots); }
uint64_t LogChecksum(const LogHeader& header, const LogEntry* entries);
// Writes an empty commit record (no words) with sequence number `seq` into
// its slot (seq % 2) of the pool at `base`; returns the slot (flush
// sizeof(LogHeader) from there) and the record in *record.
char* PutEmptyRecord(char* base, uint64_t seq, LogHeader* record);
// Whether a logged word at `offset` may be replayed into a pool of
// `length` bytes: 8-aligned, in the root line or the chunk table and heap.
inline bool IsLoggableWord(uint64_t offset, uint64_t length) {
  const bool in_root = offset >= kRootOffset && offset < kRootOffset + sizeof(Root);
  const bool in_tables = offset >= kChunkTableOffset && offset < length - 8;
  return offset % 8 == 0 && (in_root || in_tables);
}
uint64_t UndoHeaderChecksum(const UndoHeader& header);
// Covers the run, the entry's place in the log, its offset and its line.
uint64_t UndoEntryChecksum(uint64_t run_id, uint64_t index, const UndoEntry& entry);
// Of the record at `record` whose header is filled in (value at
// `large_value` when the record says it is large).
uint64_t RecordChecksum(const char* record, const char* large_value);

}  // namespace pmstore::internal
