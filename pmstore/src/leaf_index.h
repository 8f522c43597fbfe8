// The ordered index: a chain of leaves in the pool (format.h) and, in
// memory, the lowest key of each leaf to find the right one quickly.
//
// Only the leaves are persistent; the in-memory map is built at open by
// one walk of the chain (one record read per leaf, about one leaf per 30
// keys). After a clean close, open uses the separator image instead
// (separator_image.h): lookups search it in place until the first write
// builds the map from it (LeaveImage). An abandoned transaction undoes its
// own changes to the map (Abandoned), so no walk follows open.
//
// Readers (const methods) need the store's read lock; writers its writer
// lock and a Transaction, through which every change to a committed leaf
// header goes.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "pmstore/src/allocator.h"
#include "pmstore/src/format.h"
#include "pmstore/src/pool.h"
#include "pmstore/src/separator_image.h"
#include "pmstore/src/separator_map.h"
#include "pmstore/src/transaction.h"

namespace pmstore::internal {

class LeafIndex {
 public:
  LeafIndex(char* base, uint64_t heap_offset, const Pool* pool) : base_(base), heap_offset_(heap_offset), pool_(pool) {}

  // Walks the chain from `head`, verifying each leaf's checksum and bounds
  // within `length` bytes of pool. DataLoss naming the leaf otherwise.
  absl::Status Load(uint64_t head, uint64_t length);
  // Finds leaves through `image` (valid for the pool as it is) instead of
  // the map, until LeaveImage.
  void UseImage(const SeparatorImage& image);
  bool on_image() const { return !image_.empty(); }
  // Builds the map from the image and stops using it: before the first
  // change to the index, and before the image is freed. Leaves that no
  // read has checked yet stay unchecked: each is checked at its first use
  // through the map, by a read or a write, as through the image.
  void LeaveImage();
  // What Lookup and MultiLookup give for a key whose leaf, found through
  // the image, fails its check (no record lies at offset 1).
  static constexpr uint64_t kDamagedLeaf = 1;
  // The map, for the image a clean close writes (not while on_image()).
  const SeparatorMap& separators() const { return separators_; }

  // Offset of the record for `key`, or 0.
  uint64_t Lookup(std::string_view key) const;

  // Lookup for each of `count` keys: records[i] for keys[i] (0: absent).
  // The keys go in chunks of kMultiLookupChunk, whose memory accesses are
  // issued stage by stage across the chunk (leaf, fingerprint-matched
  // slot, record) before any is waited on.
  void MultiLookup(const std::string_view* keys, size_t count, uint64_t* records) const;
  // Keys per MultiLookup stage: enough misses in flight to cover the
  // latency of one, few enough that a chunk's lines (about six per key)
  // stay in L1. Batches of 32 took 7.0, 5.8 and 5.5 us with chunks of 8,
  // 16 and 32 (1 M keys, doc/STORE.md "MultiGet").
  static constexpr size_t kMultiLookupChunk = 32;

  // Starts loading the leaf that holds `key` into the cache, so that a
  // writer's work before its Upsert overlaps the leaf's cache misses.
  void Prefetch(std::string_view key) const { PrefetchLeaf(FindLeaf(key)); }

  // Visits records in key order from the first key >= `target` until
  // `visit` returns false. DataLoss when the scan reaches a leaf that
  // fails its check (the visits before it stand).
  absl::Status ScanFrom(std::string_view target, const std::function<bool(uint64_t record)>& visit) const;

  // Points `key` at `record`. *replaced: the record it pointed at, or 0.
  absl::Status Upsert(Transaction& tx, SpaceAllocator& alloc, std::string_view key, uint64_t record,
                      uint64_t* replaced);
  // Unlinks `key`. *removed: its record, or 0 when absent.
  absl::Status Remove(Transaction& tx, SpaceAllocator& alloc, std::string_view key, uint64_t* removed);
  // Upsert and Remove fail with DataLoss, before changing anything, when
  // a leaf they would change fails its check.

  uint64_t leaves() const { return on_image() ? image_.count() : separators_.size(); }

  // Whether the in-memory separators changed (a leaf split or left the
  // chain) since the last Load or Settle: readers would then find leaves
  // of the transaction not yet committed.
  bool edited() const { return edited_; }
  // The transaction committed: its changes to the map are the index's.
  void Settle() {
    edited_ = false;
    edits_.clear();
  }
  // The transaction was abandoned: undoes its changes to the map, newest
  // first. Its leaf headers changed only in the transaction, and the
  // leaves it made are space nothing committed refers to.
  void Abandoned();

 private:
  const Leaf* LeafAt(uint64_t offset) const { return reinterpret_cast<const Leaf*>(base_ + offset); }
  // Starts loading [offset, offset + bytes) of the pool into the cache.
  void PrefetchBytes(uint64_t offset, uint64_t bytes) const;
  void PrefetchLeaf(uint64_t offset) const { PrefetchBytes(offset, sizeof(Leaf)); }
  // What a lookup or a scan prefetches of a record: the header, the key
  // and about 130 bytes of value (db_bench's 16 B keys and 100 B values).
  static constexpr uint64_t kSmallRecordBytes = 192;
  // One key's prefixes, as a leaf slot holds them.
  struct KeyPrefixes {
    explicit KeyPrefixes(std::string_view key) : prefix(KeyPrefix(key)), prefix2(KeyPrefix(key, 8)) {}
    uint64_t prefix;
    uint64_t prefix2;
  };
  // Slots of `leaf` whose fingerprint byte is `fingerprint`.
  static uint64_t Candidates(const Leaf& leaf, uint8_t fingerprint);
  // The first of *candidates (cleared as they are tried) whose prefixes
  // are the key's and which the header names, or -1; *pos: its place in
  // key order.
  static int NextNamed(const LeafHeader& header, const Leaf& leaf, const KeyPrefixes& key, uint64_t* candidates,
                       int* pos);
  void MultiLookupChunk(const std::string_view* keys, size_t count, uint64_t* records) const;
  // The leaf for `key`; 0 when it is found through the image and fails
  // its check.
  uint64_t FindLeaf(std::string_view key) const {
    return on_image() ? CheckedImageLeaf(image_.FloorIndex(key)) : CheckedLeaf(separators_.Floor(key));
  }
  // The walk checked every leaf at open; after an open from the image each
  // is checked the first time it is used instead: in bounds, a sane
  // permutation, its checksum, and linked to the next leaf in key order.
  // Image entry i's leaf once checked, or 0 when it fails.
  uint64_t CheckedImageLeaf(uint64_t i) const;
  // The same for the map's entry `it`, after LeaveImage.
  uint64_t CheckedLeaf(SeparatorMap::const_iterator it) const;
  // Whether image entry i's leaf, at `offset`, passes the check (once;
  // later calls return the first answer).
  bool Checked(uint64_t i, uint64_t offset, uint64_t next) const;
  // DataLoss naming the leaf of `it` when it fails its check.
  absl::Status CheckBeforeChange(SeparatorMap::const_iterator it) const;
  // The map's changes, recorded for Abandoned.
  void SetSeparator(std::string_view separator, uint64_t leaf);
  SeparatorMap::iterator EraseSeparator(SeparatorMap::iterator it);
  LeafHeader LoadHeader(const Transaction& tx, uint64_t offset) const;
  void StoreHeader(Transaction& tx, uint64_t offset, LeafHeader header);
  // Position of `key` in header order by fingerprint, or -1.
  int Find(const LeafHeader& header, const Leaf& leaf, std::string_view key) const;
  // Position of the first key >= key in header order; *found when equal.
  int Search(const LeafHeader& header, const LeafSlot* slots, std::string_view key, bool* found) const;
  int FreeSlot(const Transaction& tx, uint64_t offset, const LeafHeader& header) const;
  absl::Status Split(Transaction& tx, SpaceAllocator& alloc, SeparatorMap::iterator leaf);
  void LinkAfter(Transaction& tx, SeparatorMap::iterator leaf, uint64_t next);

  char* base_;
  uint64_t heap_offset_;
  const Pool* pool_;  // its length bounds reads through slots (RecordKey)
  SeparatorMap separators_;  // lowest possible key of each leaf ("" for the first) -> leaf
  SeparatorImage image_;     // while not empty, the separators, and separators_ is empty
  // Per image entry: 0 unchecked, 1 sound, 2 damaged. Readers set them
  // (the same answer from any of them: a leaf changes only after a write
  // checked it).
  std::unique_ptr<std::atomic<uint8_t>[]> checked_;
  // After LeaveImage: the leaves no read had checked, by offset, with
  // their image entry (index into checked_). Never changed until the next
  // Load or UseImage, so readers look it up freely. A listed leaf stays
  // in place until a write, having checked it, frees it.
  absl::flat_hash_map<uint64_t, uint32_t> unchecked_;
  bool edited_ = false;
  // What this transaction changed in the map, oldest first: a separator
  // and the leaf it mapped to before (0: it was absent).
  struct Edit {
    std::string separator;
    uint64_t leaf;
  };
  std::vector<Edit> edits_;
};

}  // namespace pmstore::internal
