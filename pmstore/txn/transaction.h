// pmstore/txn/: one commit being staged. May use format/ only.
//
// Transaction: word writes to live metadata, which go through
// the redo log, and writes made in place to space nothing committed refers
// to (new records, new leaves, free leaf slots), which only need flushing
// before the log record is sealed.
//
// Reads through a transaction see its own writes. Nothing in the pool
// changes for other readers until the commit (commit/committer.h) applies
// its words.
//
// Rules that make replaying the last two commits after a crash safe (see
// doc/FORMAT.md, "Why replaying two commits is safe"):
//   - a transaction never writes in place into space a committed structure
//     refers to;
//   - space it frees is not reused before it has committed;
//   - it logs no write into space it frees (DropWritesInto drops such
//     writes, and requests to verify objects there).
//
// Thread-compatible: used by the one writer holding the store's lock.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <utility>
#include <vector>

#include "absl/status/status.h"

#include "pmstore/format/redo_log.h"

namespace pmstore::internal {

// Told before a write in place into a leaf that a committed header may
// refer to (a free slot of a live leaf, and that leaf's header, which the
// commit then changes): an unsynced run saves those lines for its undo log
// first (undo_log.h). Not OK: the write must not happen.
class InPlaceGuard {
 public:
  struct Range {
    uint64_t offset;
    uint64_t size;
  };
  virtual absl::Status BeforeInPlace(std::initializer_list<Range> ranges) = 0;

 protected:
  ~InPlaceGuard() = default;
};

class Transaction {
 public:
  explicit Transaction(char* base) : base_(base) { Clear(); }

  uint64_t Read(uint64_t offset) const {
    const int64_t i = Find(offset);
    return i >= 0 ? table_[i].value : *reinterpret_cast<const uint64_t*>(base_ + offset);
  }

  // A logged write of the 8-byte word at `offset` (8-aligned), or an
  // in-place one when the word lies in space this transaction allocated.
  void Write(uint64_t offset, uint64_t value);

  // Asks recovery to verify the object at `offset` (kVerifyRecord or
  // kVerifyLeaf) before trusting this commit: its stored checksum must be
  // `checksum` (so stale bytes of an object once freed there do not pass)
  // and match its contents. A later call for the same object replaces it.
  void Verify(uint64_t kind, uint64_t offset, uint64_t checksum) { Write(kind | offset, checksum); }

  // The guard asked before in-place writes into live leaves (none: no
  // one is asked). Kept across Clear.
  void set_guard(InPlaceGuard* guard) { guard_ = guard; }
  absl::Status BeforeInPlace(std::initializer_list<InPlaceGuard::Range> ranges) {
    return guard_ != nullptr ? guard_->BeforeInPlace(ranges) : absl::OkStatus();
  }

  // [offset, offset+size) was written in place and must be flushed before
  // the commit is sealed.
  void WroteInPlace(uint64_t offset, uint64_t size) { in_place_.emplace_back(offset, size); }
  // The same for a record written into a leaf cell (format.h
  // LeafGeometry), kept apart so that its flush is a persistence site of
  // its own (persist_site.h).
  void WroteInCell(uint64_t offset, uint64_t size) { in_cells_.emplace_back(offset, size); }

  // Space allocated by this transaction: writes into it go in place.
  void MarkFresh(uint64_t offset, uint64_t size);
  bool IsFresh(uint64_t offset) const;

  // Space this transaction frees: any logged write into it, and any
  // request to verify an object in it, is dropped.
  void DropWritesInto(uint64_t offset, uint64_t size);

  bool empty() const { return order_.empty() && in_place_.empty() && in_cells_.empty(); }
  size_t logged_words() const { return order_.size(); }
  // The logged writes, in first-write order, into *entries (its capacity
  // is kept from commit to commit: no allocation on the put path).
  void Entries(std::vector<LogEntry>* entries) const;
  const std::vector<std::pair<uint64_t, uint64_t>>& in_place() const { return in_place_; }
  const std::vector<std::pair<uint64_t, uint64_t>>& in_cells() const { return in_cells_; }

  void Clear();

 private:
  struct Slot {
    uint64_t offset;  // kEmpty when unused
    uint64_t value;
    bool live;        // false once dropped
  };
  static constexpr uint64_t kEmpty = ~0ull;

  int64_t Find(uint64_t offset) const;
  void Grow();

  char* base_;
  InPlaceGuard* guard_ = nullptr;
  std::vector<Slot> table_;      // open addressing, power of two
  std::vector<uint32_t> order_;  // indexes into table_, first-write order
  std::vector<std::pair<uint64_t, uint64_t>> in_place_;
  std::vector<std::pair<uint64_t, uint64_t>> in_cells_;
  std::vector<std::pair<uint64_t, uint64_t>> fresh_;
};

}  // namespace pmstore::internal
