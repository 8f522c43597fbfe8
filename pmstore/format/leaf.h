// The leaf codec: a leaf of the ordered index holds up to kLeafSlots
// entries in any slots, kept in key order by the permutation in its
// header. The header is one cache line and changes only through the redo
// log; a slot (with its fingerprint and, in version 2, its cell) is
// written in place only while no committed header names it.
//
//   header (one cache line):  u64 next; u64 checksum; u8 count; u8 perm[47]
//   fingerprints:             u8 [64]    one byte of the key's hash per slot
//   slots:                    47 x { u64 prefix; u64 prefix2; u64 record }
//   cells (version 2):        47 x cell_bytes, from byte 1280
//
// One rule decides whether a leaf is sound (CheckLeaf), for every reader:
// open's walk of the chain, a lookup's first use of a leaf after an open
// from the separator image, recovery's verification of the newest commit,
// a write before it changes a leaf, and check.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <string_view>

#include "pmstore/format/key.h"
#include "pmstore/format/layout.h"
#include "pmstore/format/record.h"

namespace pmstore::internal {

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
// The leaf's version word (doc/FORMAT.md, "Reading a leaf that another
// process may be changing"), at leaf offset 112: fingerprint bytes 48-55,
// which no slot's fingerprint uses and no checksum covers. The writer
// stores there the number of each commit that changes the leaf's header,
// before it applies the commit in place; a reader of another process,
// which holds no lock of the writer's, reads the leaf between two loads
// of it (ReadStableLeaf): a seqlock per leaf. Memory the processes share,
// not state: never flushed, any value after a crash, 0 in a new leaf.
inline constexpr uint64_t kLeafVersionOffset = offsetof(Leaf, fingerprints) + 48;
static_assert(kLeafSlots <= 48, "the version word lies past the last fingerprint");
inline std::atomic_ref<uint64_t> LeafVersion(const char* base, uint64_t leaf) {
  return std::atomic_ref<uint64_t>(*reinterpret_cast<uint64_t*>(const_cast<char*>(base) + leaf + kLeafVersionOffset));
}

// The commit a version word names: its low 63 bits. The top bit makes a
// stamp differ from the word it replaces when that word names the same
// commit already: a word left ahead of the commits by a crash can, since
// the commit numbers after a power failure's rollback repeat, and a
// reader would then take a leaf changed under it for unchanged.
inline constexpr uint64_t kVersionFlip = 1ull << 63;
inline uint64_t VersionCommit(uint64_t word) { return word & ~kVersionFlip; }
// What the writer stores over `word` for commit `seq`.
inline uint64_t NextVersionWord(uint64_t word, uint64_t seq) {
  return VersionCommit(word) == seq ? word ^ kVersionFlip : seq;
}

// What ChangeRing::applying() holds while a writable open's recovery
// replays or undoes commits in place: it stamps no version word, so every
// leaf reads as being changed.
inline constexpr uint64_t kApplyingEveryLeaf = UINT64_MAX;

// Runs `read()` over the leaf at `offset` of the pool mapped at `base`
// for a reader that holds no lock of the writer's; `applying()` returns
// the commit a writer is applying now (0: none; share/change_ring.h).
// Returns the commit the leaf's version word names when what `read` saw
// is the leaf as one commit left it; nullopt when the leaf was being
// changed or changed meanwhile: read again. `read` must be safe over any
// bytes (a torn permutation, an offset out of bounds), since it may see a
// leaf half written. What the slots name stays valid only while the reader's pin
// holds the space (share/lock_region.h PinNewestPublished).
template <typename Applying, typename Read>
std::optional<uint64_t> ReadStableLeaf(const char* base, uint64_t offset, const Applying& applying, const Read& read) {
  const uint64_t version = LeafVersion(base, offset).load(std::memory_order_acquire);
  const uint64_t now = applying();
  if (now != 0 && (now == VersionCommit(version) || now == kApplyingEveryLeaf)) return std::nullopt;
  read();
  std::atomic_thread_fence(std::memory_order_acquire);
  if (LeafVersion(base, offset).load(std::memory_order_relaxed) != version) return std::nullopt;
  return VersionCommit(version);
}

// ReadStableLeaf that copies the leaf (its header, fingerprints and
// slots; not its cells): false when the copy must be made again.
template <typename Applying>
bool CopyStableLeaf(const char* base, uint64_t offset, Leaf* copy, const Applying& applying) {
  return ReadStableLeaf(base, offset, applying, [&] { std::memcpy(copy, base + offset, sizeof(Leaf)); }).has_value();
}

// The slot part of a leaf (all of a version 1 leaf).
inline constexpr uint64_t kLeafUnits = (sizeof(Leaf) + kUnitSize - 1) / kUnitSize;  // 20
inline constexpr uint64_t kLeafBytes = kLeafUnits * kUnitSize;
inline constexpr uint64_t SlotOffset(uint64_t leaf, uint64_t slot) {
  return leaf + offsetof(Leaf, slots) + slot * sizeof(LeafSlot);
}
inline constexpr uint64_t FingerprintOffset(uint64_t leaf, uint64_t slot) {
  return leaf + offsetof(Leaf, fingerprints) + slot;
}

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
    return record_bytes <= cell_bytes && !IsLargeValue(value_len);
  }
  // Whether `record`, named by slot `slot` of the leaf at `leaf`, lies in
  // that slot's cell (else it lies out of line).
  bool InCell(uint64_t leaf, uint64_t slot, uint64_t record) const {
    return cells() && record == CellOffset(leaf, slot);
  }
};

// A version 2 key's home slot: it takes that slot, or the first free one
// after it, so that a lookup can request the home slot and cell at once.
inline int HomeSlot(uint64_t hash) { return static_cast<int>((hash >> 32) % kLeafSlots); }

// Covers next, count, the permutation in use and the slots (and
// fingerprints) it names, so stale bytes in free slots do not matter.
// `header` may differ from leaf.header (a transaction's version).
uint64_t LeafChecksum(const LeafHeader& header, const Leaf& leaf);

// Why a leaf is not sound.
enum class LeafFault {
  kSound,
  kOutsideHeap,     // not whole inside the heap, or not on a unit boundary
  kBadPermutation,  // more than kLeafSlots entries, or a slot named twice or out of range
  kBadChecksum,
};
// The rule: the leaf at `offset` of the pool mapped at `base` (`length`
// bytes, the heap from `heap_offset`) lies whole in the heap, `header`
// (its own, or the one a commit would leave it) names at most kLeafSlots
// distinct slots, and its checksum covers them.
LeafFault CheckLeaf(const char* base, uint64_t length, uint64_t heap_offset, const LeafGeometry& geometry,
                    uint64_t offset, const LeafHeader& header);
// The same under the leaf's own header (which must lie in the pool).
LeafFault CheckLeaf(const char* base, uint64_t length, uint64_t heap_offset, const LeafGeometry& geometry,
                    uint64_t offset);
// The rule's two halves, for a reader that checks a copy of a leaf
// (LeafIndex's follower reads): where it lies, and what it holds.
bool LeafInHeap(uint64_t length, uint64_t heap_offset, const LeafGeometry& geometry, uint64_t offset);
LeafFault CheckLeafSlots(const LeafHeader& header, const Leaf& leaf);
// "checksum failure in index leaf at offset N" and the like.
std::string LeafFaultMessage(LeafFault fault, uint64_t offset);

// Bytewise order of `key` (with prefixes `prefix`, `prefix2`) against a
// slot's key, whose record lies in the pool mapped at `base`.
inline int CompareToSlot(const char* base, uint64_t length, std::string_view key, uint64_t prefix,
                         uint64_t prefix2, const LeafSlot& slot) {
  if (prefix != slot.prefix) return prefix < slot.prefix ? -1 : 1;
  if (prefix2 != slot.prefix2) return prefix2 < slot.prefix2 ? -1 : 1;
  const std::string_view other = RecordKey(base, length, slot.record);
  const int c = key.compare(other);
  return c < 0 ? -1 : (c > 0 ? 1 : 0);
}

// A new leaf, built in memory and written whole (into space nothing
// committed refers to): entries are added in key order, each into the
// slot it asks for or the first free one after it (wrapping); Finish
// seals the header.
class LeafImage {
 public:
  explicit LeafImage(uint64_t next);
  // Adds `slot` with its fingerprint, in key order; returns the slot taken.
  int Add(const LeafSlot& slot, uint8_t fingerprint, int wanted);
  // Points slot `slot`'s entry at `record` (a record copied into its cell).
  void SetRecord(int slot, uint64_t record) { leaf_.slots[slot].record = record; }
  // The leaf with its checksum; its header's checksum is the leaf's.
  const Leaf& Finish();

 private:
  Leaf leaf_;
  uint64_t used_ = 0;
};

}  // namespace pmstore::internal
