// pmstore/commit/: how a staged transaction (txn/) becomes a commit. May
// use space/ (which space an unsynced run allocated itself), txn/,
// format/ and persist/.
//
// Two protocols, chosen per write by WriteOptions::sync:
//   - the durable commit (doc/FORMAT.md, "Commit protocol"): the commit's
//     redo log record and its in-place writes are flushed and fenced once,
//     the commit point (Seal, then Drain); then its words are applied in
//     place, their flush left to the next commit's fence (or Sync, or
//     close);
//   - the unsynced run (doc/FORMAT.md, "Unsynced runs"): no log record, no
//     fence; the live lines a commit is about to change are saved in the
//     run's undo log first and its words journalled for a kill (Stage),
//     then applied; the run's end makes everything durable and retires
//     its base record (EndRun).
// The Committer owns what the two share: the sequence numbers, the newest
// record in the log (a run's base), the lines the last durable commit
// applied and left unflushed, the pages a run dirtied, and the first
// persistence failure, which poisons it: a store that failed to persist
// refuses every later write (store.h).
//
// Thread-compatible: the store's writer calls it while it holds its turn.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "pmstore/format/redo_log.h"
#include "pmstore/format/undo_log.h"
#include "pmstore/persist/persist_site.h"
#include "pmstore/persist/persister.h"
#include "pmstore/space/allocator.h"
#include "pmstore/txn/transaction.h"

namespace pmstore::internal {

class Committer final : public InPlaceGuard {
 public:
  // `path` names the pool in the failures it returns.
  Committer(char* base, std::string path, Persister* persister, SpaceAllocator* alloc)
      : base_(base), path_(std::move(path)), persister_(persister), alloc_(alloc), undo_(base) {}

  // What recovery found: the next commit's number and the newest commit
  // record in the log (seq 0: none).
  void Recovered(uint64_t next_seq, const LogHeader& last) {
    next_seq_ = next_seq;
    last_record_ = last;
  }
  uint64_t next_seq() const { return next_seq_; }

  // OK while nothing failed to persist; else the first failure, named
  // with the file, which every later write returns.
  const absl::Status& poisoned() const { return poisoned_; }
  // Records `failure` (a persistence failure) as the poison, unless one
  // is recorded already; returns it, named with the file.
  absl::Status Poison(const absl::Status& failure);

  // --- the durable commit ---
  // Writes `tx`'s words (`entries`, from tx.Entries) as the next commit's
  // record and flushes its in-place writes, its cells, the record and the
  // lines the previous commit applied: all but the fence. InvalidArgument,
  // with nothing written, when the commit has more words than the log
  // holds; a persistence failure poisons.
  absl::Status Seal(const Transaction& tx);
  // The fence: the sealed commit is durable, and may be acknowledged, once
  // this returns OK. A failure poisons.
  absl::Status Drain();

  // --- the unsynced run ---
  bool in_run() const { return undo_.open(); }
  // Whether the last Stage found the run's undo log full: the run must
  // end, and the write be made durable instead.
  bool run_full() const { return undo_.full(); }
  // Begins a run whose base is the newest commit record in the log (an
  // empty record is written first when the log holds none).
  absl::Status BeginRun();
  // Saves the live lines `tx`'s words will change in the undo log and
  // journals the words, so that the commit can be applied in place.
  // ResourceExhausted (run_full()) when the undo log has no room; a
  // persistence failure poisons.
  absl::Status Stage(const Transaction& tx);
  // InPlaceGuard: saves the lines of `ranges` (a free slot of a live
  // leaf, and the leaf's header) that the run did not allocate itself.
  absl::Status BeforeInPlace(std::initializer_list<Range> ranges) override;
  // Ends the run: makes everything it wrote durable, then retires its
  // base record (which closes it on the media). Readers may go on
  // meanwhile. A failure poisons.
  absl::Status EndRun();
  // After EndRun (with readers kept out): forgets the run.
  void ForgetRun();

  // --- both ---
  // Applies the sealed or staged commit's words in place; returns its
  // sequence number.
  uint64_t Apply();
  // Outside a run: flushes the last commit's applied lines and fences;
  // everything acknowledged is then durable with no replay needed (Sync,
  // close). `flush` and `drain` name the sites. A failure poisons.
  absl::Status PersistApplied(PersistSite flush, PersistSite drain);
  // The newest commit whose freed space readers outside the run no longer
  // see, given the last commit `seq`: `seq`, or inside a run its base
  // (what a run frees stays until it ends: a power failure returns to it).
  uint64_t ReleasableThrough(uint64_t seq) const {
    return undo_.open() && undo_.base_seq() < seq ? undo_.base_seq() : seq;
  }
  // The last commit's sequence number (0: none yet).
  uint64_t last_seq() const { return next_seq_ - 1; }

 private:
  absl::Status SaveLines(const std::vector<uint64_t>& lines);
  void MarkUnsynced(uint64_t offset, uint64_t size);
  absl::Status FlushUnsynced();

  char* const base_;
  const std::string path_;
  Persister* const persister_;
  SpaceAllocator* const alloc_;
  uint64_t next_seq_ = 1;
  // The newest commit record in the log (seq 0: none): an unsynced run's base.
  LogHeader last_record_ = {};
  // The sealed or staged commit's words, and whether it is durable.
  std::vector<LogEntry> entries_;  // kept for its capacity: no allocation per put
  bool sealed_ = false;
  LogHeader sealed_record_ = {};  // the sealed commit's header, the newest once drained
  // Lines applied by the last durable commit, not yet flushed: the next
  // commit flushes them before its fence (as do Sync, close and a run's end).
  std::vector<uint64_t> unfenced_lines_;
  // The unsynced run: its undo log, and the pages it wrote, one bit each.
  UndoLog undo_;
  std::vector<uint64_t> unsynced_pages_;
  bool any_unsynced_ = false;
  std::vector<uint64_t> lines_;  // SaveLines' argument, kept for its capacity
  absl::Status poisoned_;
};

}  // namespace pmstore::internal
