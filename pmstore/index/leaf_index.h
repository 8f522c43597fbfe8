// pmstore/index/: the ordered index. The chain of leaves in the pool
// (format/leaf.h), the separators in memory (separator_map.h) or in the
// separator image a clean close wrote (separator_image.h), and the one
// writer of records (record_writer.h). May use space/, txn/, pool/,
// format/ and below.
//
// LeafIndex: a chain of leaves in the pool and, in memory, the least key
// of each leaf (the first leaf's is "") to find the right one quickly. A
// split and a delete keep that rule, so the map is a function of the
// chain: the one a walk builds, and the one every process that follows
// the writer's commits holds (separator_change.h).
//
// Only the leaves are persistent; the in-memory map is built at open by
// one walk of the chain (one record read per leaf, about one leaf per 30
// keys). After a clean close, open uses the separator image instead
// (separator_image.h): lookups search it in place until the first write
// builds the map from it (LeaveImage). An abandoned transaction undoes its
// own changes to the map (Abandoned), so no walk follows open.
//
// In a version 2 pool (format/leaf.h LeafGeometry) a key's slot is chosen
// from its hash (HomeSlot, or the next free one after it), and a small
// record lies in that slot's cell: a lookup requests the header, the
// fingerprints, the home slot and its cell at once, so a hit in its home
// cell waits for one miss. A cell freed (its record replaced or removed)
// is kept from reuse, like space the allocator quarantines, until no pin,
// snapshot or unsynced run may still read it (space/allocator.h HoldCell).
//
// Readers (const methods) need the store's read lock; writers its writer
// lock and a Transaction, through which every change to a committed leaf
// header goes.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "pmstore/base/prefetch.h"
#include "pmstore/format/key.h"
#include "pmstore/format/leaf.h"
#include "pmstore/index/record_writer.h"
#include "pmstore/index/separator_image.h"
#include "pmstore/index/separator_map.h"
#include "pmstore/pool/pool.h"
#include "pmstore/share/change_ring.h"
#include "pmstore/share/leaf_image_ring.h"
#include "pmstore/space/allocator.h"
#include "pmstore/txn/transaction.h"

namespace pmstore::internal {

class LeafIndex {
 public:
  LeafIndex(char* base, uint64_t heap_offset, const Pool* pool)
      : base_(base), heap_offset_(heap_offset), pool_(pool), geometry_(pool->leaf_geometry()), writer_(base, geometry_) {}

  const LeafGeometry& geometry() const { return geometry_; }

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

  // Visits records in key order from the first key >= `target` until
  // `visit` returns false. DataLoss when the scan reaches a leaf that
  // fails its check (the visits before it stand).
  absl::Status ScanFrom(std::string_view target, const std::function<bool(uint64_t record)>& visit) const;
  // The same in descending key order: from the last key <= `target` (<
  // when not `inclusive`), or from the greatest key of all (`from_end`).
  // The leaf chain links forward only: the leaf before is the separators'
  // entry before (or the image's).
  absl::Status ScanBackFrom(std::string_view target, bool inclusive, bool from_end,
                            const std::function<bool(uint64_t record)>& visit) const;

  // --- a follower's reads (leaf_index_follow.cc): a read-only open
  // beside a writer of another process, which changes leaves as they are
  // read (doc/FORMAT.md "Following a writer"). Each leaf is read stable
  // (format/leaf.h ReadStableLeaf: a point lookup in place, a scan or a
  // walk from a checked copy) and used only when no commit after `seen`
  // changed it; records are read in place, which the
  // caller's pin keeps (share/lock_region.h). The map must be at `seen` or
  // later: a leaf unchanged since `seen` that the map routes a key to is
  // that key's leaf at `seen` (a commit that moves keys between leaves
  // changes the headers of the leaves they leave and enter).
  struct Following {
    const ChangeRing* ring;
    uint64_t seen;  // the newest commit the read may see
    // Where a copy of a leaf changed after `seen` finds it as `seen` left
    // it (scans and snapshot reads); null: nowhere (kChanged).
    const LeafImageRing* images = nullptr;
  };
  // What a follower's read of a leaf found.
  enum class Copied {
    kStable,     // a copy as commit `seen` or an earlier one left it
    kFromImage,  // a later commit changed it: a copy as `seen` left it, from the image ring
    kBorn,       // a later commit wrote it whole: it was no leaf at `seen`
    kChanged,    // a later commit changed it, or it was changing: follow, then read again
    kDamaged,    // it fails its check
    kStuck,      // it has been mid-commit for over a second: its writer died inside the commit
  };
  // LookupFollowing's answers that are no record (records lie in the heap).
  static constexpr uint64_t kLeafChanged = 2;
  static constexpr uint64_t kLeafStuck = 3;
  // Lookup for a follower: the record, 0, kDamagedLeaf, kLeafChanged or
  // kLeafStuck.
  uint64_t LookupFollowing(std::string_view key, const Following& following) const;
  // Lookup for a follower's snapshot read (`following` with its images),
  // where LookupFollowing found the key's leaf changed after `seen`: a scan
  // from the key, over leaves as `seen` left them. The record, 0 or
  // kDamagedLeaf; Aborted or Unavailable as for ScanFromFollowing.
  absl::StatusOr<uint64_t> LookupAtSnapshot(std::string_view key, const Following& following) const;
  // Lookup for a follower that found the pool quiet (ChangeRing::Quiet):
  // the leaf read in place with no version check, every read in bounds
  // whatever it finds; the record, 0 or kDamagedLeaf, which the caller
  // uses only if the pool is still quiet after.
  uint64_t LookupQuiet(std::string_view key) const;
  // ScanFrom and ScanBackFrom for a follower: Aborted when the scan
  // reaches a leaf a commit after `seen` changed (a snapshot older than
  // the pool's state there), Unavailable when it is stuck mid-commit.
  absl::Status ScanFromFollowing(std::string_view target, const Following& following,
                                 const std::function<bool(uint64_t record)>& visit) const;
  absl::Status ScanBackFromFollowing(std::string_view target, bool inclusive, bool from_end, const Following& following,
                                     const std::function<bool(uint64_t record)>& visit) const;
  // Load for a follower: walks the chain from `head` while a writer
  // changes it, each leaf copied stable at whatever commit it is, and
  // builds the map from them. The map is then at no one commit until the
  // changes published since `ring` was read are forced onto it
  // (FollowChanges with `after_walk`). DataLoss for a damaged leaf or
  // record, Aborted when a leaf stays unreadable (the walk is retried).
  absl::Status LoadFollowing(uint64_t head, uint64_t length, const ChangeRing& ring);
  // Applies separator changes a follower read from the ring (kind
  // kSeparatorChangeKind payloads), checked (ApplySeparatorChange), or
  // forced after a walk (ForceSeparatorChange). FailedPrecondition: the
  // map did not follow; walk again.
  absl::Status ApplySeparatorChanges(const std::vector<ChangeRing::Change>& changes, bool after_walk);

  // Points `key` at a new record of `value`, written by the record writer
  // into the cell of the slot the key takes (when it fits one and the cell
  // is free) or out of line. *replaced: the record the key had (0: it was
  // absent), unlinked and freed (its cell held) by this transaction.
  absl::Status Upsert(Transaction& tx, SpaceAllocator& alloc, std::string_view key, std::string_view value,
                      uint64_t* replaced);
  // Unlinks `key` and frees its record; *removed: that record (0: absent).
  absl::Status Remove(Transaction& tx, SpaceAllocator& alloc, std::string_view key, uint64_t* removed);
  // Upsert and Remove fail with DataLoss, before changing anything, when
  // a leaf they would change fails its check (format/leaf.h CheckLeaf).

  uint64_t leaves() const { return on_image() ? image_.count() : separators_.size(); }

  // Whether the in-memory separators changed (a leaf split or left the
  // chain) since the last Load or Settle: readers would then find leaves
  // of the transaction not yet committed.
  bool edited() const { return !edits_.empty(); }
  // The transaction is committing: `visit` gets each separator its
  // changes to the map touched, once, with the leaf it named before the
  // transaction and the one it names now (0: none): what other processes
  // learn of them (separator_change.h).
  void ForEachChangedSeparator(
      const std::function<void(std::string_view separator, uint64_t before, uint64_t after)>& visit) const;
  // The committing transaction is about to be applied in place as commit
  // `seq`: the version word of every leaf whose header it changes takes
  // `seq` (format/leaf.h), so that a reader of another process copies no
  // header half applied. After ChangeRing::BeginApplying(seq).
  void StampChangedLeaves(uint64_t seq) const;
  // Before StampChangedLeaves, in a pool other processes read: into
  // `images` (share/leaf_image_ring.h), for their snapshots, the move of
  // the chain's head by commit `seq`, and while another process pins a
  // commit (`newest_pin`, the newest) each leaf the commit writes whole
  // and each it changes in place, as it is before the commit, unless no
  // pin reads it as it is: its last change came after `newest_pin` (the
  // image of that change serves the pins before it). A reader takes a
  // leaf missing from the ring for one lost, never a head.
  void RecordLeafImages(LeafImageRing& images, uint64_t seq, std::optional<uint64_t> newest_pin) const;
  // The transaction committed: its changes to the map are the index's.
  void Settle() {
    edits_.clear();
    changed_headers_.clear();
    old_head_ = 0;
  }
  // The transaction was abandoned: undoes its changes to the map, newest
  // first. Its leaf headers changed only in the transaction, and the
  // leaves it made are space nothing committed refers to.
  void Abandoned();

 private:
  const Leaf* LeafAt(uint64_t offset) const { return reinterpret_cast<const Leaf*>(base_ + offset); }
  // Drops the map, the image and what the transaction recorded: before a
  // Load or a LoadFollowing builds them anew.
  void Forget();
  // Starts loading [offset, offset + bytes) of the pool into the cache.
  void PrefetchBytes(uint64_t offset, uint64_t bytes) const {
    if (offset >= pool_->length()) return;  // a damaged offset: nothing worth loading
    base::PrefetchLines(base_ + offset, bytes);
  }
  void PrefetchLeaf(uint64_t offset) const { PrefetchBytes(offset, sizeof(Leaf)); }
  // A follower's `read()` of the leaf at `offset` (format/leaf.h
  // ReadStableLeaf), waited for while the leaf is busy (Following).
  template <typename Read>
  Copied ReadStable(uint64_t offset, const Following& following, const Read& read) const;
  // A follower's point lookup begins here: the leaf the map routes `key`
  // to, with what the lookup reads of it requested (PrefetchForKey), and
  // *hash the key's; 0 when the map names an offset out of bounds.
  uint64_t LeafToLookUp(std::string_view key, uint64_t* hash) const;
  // The record of `key` in `leaf`, a leaf of the pool that a writer of
  // another process may be changing: 0 when absent; reads in bounds
  // whatever the leaf holds (the caller validates what it found).
  uint64_t FindInPlace(const Leaf& leaf, std::string_view key, uint64_t hash) const;
  // A follower's copy of the leaf at `offset`, checked (Following).
  Copied CopyLeaf(uint64_t offset, const Following& following, Leaf* copy, uint64_t* born_from = nullptr) const;
  // The leaf a scan of `following.seen` from the map's entry `it` starts
  // at, copied, and its offset: the entry's, or for a leaf born after
  // `seen`, the one it took its keys from (from the head the chain had
  // then, for the first entry). kBorn: more than kMaxBornHops splits.
  Copied StartAt(SeparatorMap::const_iterator it, const Following& following, Leaf* copy, uint64_t* offset) const;
  static constexpr int kMaxBornHops = 64;
  // What a follower's read reports for a copy that is not stable (OK for
  // one that is).
  absl::Status FollowingFault(Copied copied, uint64_t offset, const Following& following) const;
  // What a point lookup of a key with `hash` requests of its leaf at once:
  // the whole slot part (version 1), or the header and fingerprint lines,
  // the home slot and the one after it, and the home cell (version 2).
  void PrefetchForKey(uint64_t leaf, uint64_t hash) const;
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
  // The map's changes, recorded for Abandoned (and edited()).
  void SetSeparator(std::string_view separator, uint64_t leaf);
  void RepointSeparator(SeparatorMap::iterator it, uint64_t leaf);
  SeparatorMap::iterator EraseSeparator(SeparatorMap::iterator it);
  LeafHeader LoadHeader(const Transaction& tx, uint64_t offset) const;
  void StoreHeader(Transaction& tx, uint64_t offset, LeafHeader header);
  // Position of `key` in header order by fingerprint, or -1.
  int Find(const LeafHeader& header, const Leaf& leaf, std::string_view key, uint8_t fingerprint) const;
  int Find(const LeafHeader& header, const Leaf& leaf, std::string_view key) const {
    return Find(header, leaf, key, KeyFingerprint(key));
  }
  // Position of the first key >= key in header order; *found when equal.
  int Search(const LeafHeader& header, const LeafSlot* slots, std::string_view key, bool* found) const;
  // A slot no header (the transaction's, nor the committed one) names,
  // the first from `from` on (wrapping); with `held_cells` (alloc's held
  // cells of this leaf), one whose cell is not held either. -1: none.
  int FreeSlot(const Transaction& tx, uint64_t offset, const LeafHeader& header, int from, uint64_t held_cells) const;
  // Makes room in the full leaf `leaf` for `key`, which would go at place
  // `pos` of it in key order (or is there, and its overwrite takes a new
  // slot).
  // Half of the entries move to a new leaf, the half the key goes to, and
  // the other half stays where it is: only the moved half is copied, and
  // the kept leaf changes only its header. The key lands in the new leaf,
  // whose slots are all free. Two cases keep other shapes:
  //   - an append (a key past the end of the last leaf, as a sequential
  //     load makes) moves only the last kAppendSpare entries, so that a
  //     sequential load leaves leaves nearly full (cells of free slots are
  //     space) and copies little;
  //   - a leaf this transaction changed already (or made) is replaced by
  //     two new halves: the kept half would have no slot the rest of the
  //     transaction could take (a committed header still names them).
  absl::Status Split(Transaction& tx, SpaceAllocator& alloc, SeparatorMap::iterator leaf, std::string_view key,
                     int pos);
  // Entries an append moves to the new leaf: free slots for overwrites in
  // the leaf it leaves nearly full.
  static constexpr int kAppendSpare = 4;
  void LinkAfter(Transaction& tx, SeparatorMap::iterator leaf, uint64_t next);

  char* base_;
  uint64_t heap_offset_;
  const Pool* pool_;  // its length bounds reads through slots (RecordKey)
  const LeafGeometry geometry_;
  RecordWriter writer_;
  SeparatorMap separators_;  // the least key of each leaf ("" for the first) -> leaf, as Load finds them
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
  // What this transaction changed in the map, oldest first: a separator
  // and the leaf it mapped to before (0: it was absent).
  struct Edit {
    std::string separator;
    uint64_t leaf;
  };
  std::vector<Edit> edits_;
  // The leaves whose headers this transaction changed or that it wrote
  // whole, born (StampChangedLeaves; a leaf may be listed more than once),
  // with the leaf a born one took its keys from.
  struct ChangedLeaf {
    uint64_t offset;
    bool born;
    uint64_t from;
  };
  std::vector<ChangedLeaf> changed_headers_;
  // The chain's head before this transaction moved it, 0: not moved.
  uint64_t old_head_ = 0;
};

}  // namespace pmstore::internal
