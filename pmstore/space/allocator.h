// pmstore/space/: space in the heap, and the quarantine that keeps freed
// space from reuse while a reader may still see it. May use txn/ and
// format/.
//
// The allocator hands out 64 B units inside small chunks (records,
// leaves), runs of whole 2 MiB chunks (large values, 2 MiB aligned) and,
// in version 2 pools, 64 KiB value pages of page chunks (values of 1-2
// MiB, and the tails of larger values right after their runs;
// allocator_pages.cc). It also keeps leaf cells (format/leaf.h) whose
// record was unlinked from taking a new one while a reader may still read
// the old: a cell is space inside its leaf, quarantined like the rest.
//
// The pool holds the truth: the chunk table (with each page chunk's page
// bitmap in its word) and one bitmap per small chunk, changed only through
// a Transaction. This class keeps a copy in memory to search quickly,
// where space freed but not yet reusable stays marked (quarantine.h):
// until the freeing commit is sealed, and while a pinned reader, a
// snapshot or an unsynced run may still look at it.
//
// Where several processes write one pool, each keeps its own view and
// quarantine: the writer of a commit hands the others what it changed
// (space_journal.h), and the next writer applies it before it allocates
// (FollowCommit), or, when it has missed some, holds all free space
// until no pin can read what it missed (LoseTrack).
//
// Thread-compatible: used by the one writer holding the store's lock.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "pmstore/format/layout.h"
#include "pmstore/space/quarantine.h"
#include "pmstore/space/space_journal.h"
#include "pmstore/txn/transaction.h"

namespace pmstore::internal {

// Start of `units` (<= 64) clear bits inside `word`, lowest first, or -1:
// bit i of `starts` stays set while bits i..i+units-1 are all clear.
int RunInWord(uint64_t word, uint64_t units);

struct SpaceUsage {
  uint64_t live_bytes = 0;
  uint64_t free_bytes = 0;
  uint64_t free_in_partial_chunks = 0;
};

class SpaceAllocator {
 public:
  // Grows the pool so that it holds at least `chunks` heap chunks;
  // returns how many it holds now.
  using GrowFn = std::function<absl::StatusOr<uint64_t>(uint64_t chunks)>;

  SpaceAllocator(char* base, const Superblock& sb, GrowFn grow) : base_(base), sb_(sb), grow_(std::move(grow)) {}

  // (Re)reads the chunk table and bitmaps of `num_chunks` chunks; keeps
  // the quarantine.
  void Load(uint64_t num_chunks);

  // Offset of `units` free units, marked used in `tx`. ResourceExhausted
  // when neither a small chunk nor a new chunk (after growth) has room.
  absl::StatusOr<uint64_t> AllocUnits(Transaction& tx, uint64_t units);
  // Offset of a run of `chunks` whole chunks (2 MiB aligned).
  absl::StatusOr<uint64_t> AllocRun(Transaction& tx, uint64_t chunks);
  // Offset of contiguous space for a large value of `bytes` (LayoutFor:
  // pages, a run with a tail, or, in a version 1 pool, a run).
  absl::StatusOr<uint64_t> AllocValue(Transaction& tx, uint64_t bytes);
  void FreeUnits(Transaction& tx, uint64_t offset, uint64_t units);
  // Frees a run (and its tail pages, which the head word names).
  void FreeRun(Transaction& tx, uint64_t offset);
  // Frees what AllocValue(tx, bytes) returned as `offset`.
  void FreeValue(Transaction& tx, uint64_t offset, uint64_t bytes);
  // Whether `offset` is the start of an allocated run (as committed, or
  // allocated by this transaction).
  bool IsRunHead(uint64_t offset) const;

  // Keeps the cell of slot `slot` of the leaf at `leaf`, whose record the
  // open transaction unlinked, from taking a new record until the
  // quarantine releases it.
  void HoldCell(uint64_t leaf, int slot);
  // The slots of the leaf at `leaf` whose cells are held, one bit each
  // (all, while free space is held for commits this view missed).
  uint64_t HeldCells(uint64_t leaf) const {
    if (hold_all_through_ != 0) return ~uint64_t{0};
    const auto held = held_cells_.find(leaf);
    return held == held_cells_.end() ? 0 : held->second;
  }

  // Returns small chunks that hold nothing (no live or quarantined unit)
  // to the free state, so large values can use them; how many. (Page
  // chunks return to free as their last page is freed.)
  uint64_t FreeEmptySmallChunks(Transaction& tx);

  // The transaction committed as `seq` (the journal starts afresh); or
  // was abandoned (what it allocated and freed is forgotten: the view is
  // loaded again; the journal keeps the release before it).
  void Committed(uint64_t seq) {
    quarantine_.Committed(seq);
    journal_.ClearChanges();  // keeps the lists' room: a commit journals a few entries
    journal_.released_through = 0;
  }
  void Abandoned();
  // Makes quarantined space of commits <= `seq` reusable, and journals
  // it for the other writers' views.
  void ReleaseThrough(uint64_t seq);

  // --- writers in several processes (space_journal.h) ---
  // What the open transaction changed, for the writers of other
  // processes: read it after the transaction's last allocation or free,
  // before Committed.
  const SpaceJournal& journal() {
    journal_.num_chunks = num_chunks();
    journal_.freed = quarantine_.pending();  // what it freed waits there for the commit
    return journal_;
  }
  // Another process's commit `seq` changed the space as `journal` (or one
  // part of it) says, and the pool holds that commit (its mapping covers
  // journal.num_chunks): this view releases what that writer released
  // before it, what it took is used here, and what it freed is
  // quarantined here as if this process had freed it. Called between
  // transactions, in commit order.
  void FollowCommit(uint64_t seq, const SpaceJournal& journal);
  // This view missed the journals of other processes' commits through
  // `seq` (the change ring overran, or it joined writers that published
  // none): loads the pool's `num_chunks` chunks and holds every piece free
  // there until ReleaseThrough(seq), since a pin may read what they freed;
  // meanwhile allocations grow the pool and no free cell takes a record.
  void LoseTrack(uint64_t seq, uint64_t num_chunks);
  // Pieces of space that commits freed and the quarantine still holds.
  size_t quarantined() const { return quarantine_.held(); }

  // An unsynced run (the store's undo log, undo_log.h) wants to know which
  // space it allocated itself: that space was free when the run began, so
  // changing it needs no undo. (Space the run frees stays quarantined
  // until the run ends: the store passes ReleaseThrough no later commit
  // than the run's base.)
  void BeginRun() { in_run_ = true; }
  void EndRun();
  // Whether `offset` lies in a small chunk's units, a page, or a chunk,
  // allocated since BeginRun.
  bool FreshInRun(uint64_t offset) const;

  uint64_t num_chunks() const { return chunk_words_.size(); }
  // Whether large values may use page chunks (a version 2 pool).
  bool paged() const { return paged_; }
  SpaceUsage Usage() const;

 private:
  struct SmallChunk {
    std::array<uint64_t, kBitmapWords> bits;
    uint64_t used = 0;  // units marked, bitmap and quarantine included
    uint64_t hint = kBitmapUnits;  // where the next search starts (after the last allocation)
    // Smallest request a full search failed since the last release: larger
    // ones skip this chunk instead of scanning 32768 bits again.
    uint64_t failed_units = kUnitsPerChunk;
  };

  uint64_t ChunkOffset(uint64_t chunk) const { return sb_.heap_offset + chunk * kChunkSize; }
  uint64_t ChunkWordOffset(uint64_t chunk) const { return sb_.chunk_table_offset + chunk * 8; }
  uint64_t ChunkOf(uint64_t offset) const { return (offset - sb_.heap_offset) / kChunkSize; }
  int64_t FindRun(const SmallChunk& chunk, uint64_t units) const;
  int64_t FindRunFrom(const SmallChunk& chunk, uint64_t units, uint64_t from) const;
  void MarkUnits(SmallChunk& chunk, uint64_t first, uint64_t units, bool used);
  // ReleaseThrough without journaling it (a release followed).
  void Release(uint64_t seq);
  // Chunk `c`'s small chunk view read from the pool as it is (null
  // unless the view's word is small); what the quarantine holds in it is
  // the caller's to mark.
  void LoadSmallChunk(uint64_t c);
  // Takes chunks [num_chunks(), chunks) into the view as the pool has them.
  void AdoptChunks(uint64_t chunks);
  // Marks every piece free in the pool held (LoseTrack).
  void HoldAllFree();
  void HoldAllUnits(SmallChunk& chunk);
  // Sets chunk `c`'s table word in the view and in `tx`, and journals it.
  void SetChunkWord(Transaction& tx, uint64_t c, uint64_t word);
  void SetPersistentBits(Transaction& tx, uint64_t chunk, uint64_t first, uint64_t units, bool used);
  absl::StatusOr<uint64_t> ClaimSmallChunk(Transaction& tx);
  absl::Status EnsureChunks(uint64_t chunks);
  // Marks `item`'s space quarantined (held) or reusable again.
  void MarkHeld(const Quarantine::Item& item, bool held);
  void Unhold(uint64_t leaf, int slot);
  // Free on media and in memory: nothing quarantined in it.
  bool ChunkAvailable(uint64_t c) const {
    return chunk_words_[c] == kChunkFree && !chunk_busy_[c] && page_busy_[c] == 0;
  }
  // Pages of chunk `c` a new value may take (a free chunk counts whole
  // when `claim` allows making it a page chunk).
  uint32_t AvailablePages(uint64_t c, bool claim) const;
  // First global page (chunk * 32 + page) of `pages` available ones, or -1.
  int64_t FindPages(uint64_t pages, bool claim) const;
  // Chunk c0 of `chunks` available chunks followed by a chunk whose first
  // `tail` pages are available, or -1.
  int64_t FindRunWithTail(uint64_t chunks, uint64_t tail) const;
  void TakePages(Transaction& tx, uint64_t first_page, uint64_t pages);
  void FreePages(Transaction& tx, uint64_t offset, uint64_t pages);
  absl::StatusOr<uint64_t> AllocPages(Transaction& tx, uint64_t pages);
  absl::StatusOr<uint64_t> AllocRunWithTail(Transaction& tx, uint64_t chunks, uint64_t tail);
  uint64_t TrailingAvailableChunks() const;
  void ForEachPageChunk(uint64_t first_page, uint64_t pages,
                        const std::function<void(uint64_t chunk, uint32_t mask)>& fn) const;

  char* base_;
  Superblock sb_;
  GrowFn grow_;
  bool paged_ = sb_.version >= kFirstPagedVersion;
  std::vector<uint64_t> chunk_words_;  // as committed, plus this transaction's
  std::vector<bool> chunk_busy_;       // free on media but quarantined
  std::vector<uint32_t> page_busy_;    // pages free on media but quarantined
  std::vector<std::unique_ptr<SmallChunk>> small_;
  uint64_t current_ = 0;
  Quarantine quarantine_;
  SpaceJournal journal_;  // the open transaction's (its frees: the quarantine's pending)
  // Nonzero: 1 + the commit through which every free piece is held
  // (LoseTrack).
  uint64_t hold_all_through_ = 0;
  // Held cells: per leaf, a bit per slot.
  absl::flat_hash_map<uint64_t, uint64_t> held_cells_;
  // Since BeginRun: per chunk, its units allocated (a bitmap, made on
  // first use), or the whole chunk.
  bool in_run_ = false;
  std::vector<std::unique_ptr<std::array<uint64_t, kBitmapWords>>> run_units_;
  std::vector<bool> run_chunks_;
  std::vector<uint32_t> run_pages_;  // and per page chunk, its pages allocated
};

}  // namespace pmstore::internal
