// The undo log of an unsynced run (doc/FORMAT.md, "Unsynced runs").
//
// sync=false commits change the pool in place and flush nothing, so the
// hardware (or the page cache) may write any of their lines back in any
// order. For a power failure to find the pool exactly as the last durable
// commit left it, the first time a run changes a 64-byte line that was
// live when the run began, that line's contents are made durable here
// first (one flush and drain per commit that reaches new lines); recovery
// writes them back. Lines the run allocated itself need nothing: they
// were free when it began, and the allocator holds what the run frees
// until it ends.
//
// A killed process is not a power failure: memory (the page cache, or the
// persistent media behind coherent CPU caches) keeps every store it made.
// So the header records the boot the run began in, and recovery in that
// same boot keeps the run instead: it completes the commit the process may
// have been applying (its words are kept, unflushed, in an apply journal
// at the end of the undo slot), makes the whole pool durable and retires
// the base record, as the end of a run does.
//
// Owns the undo header, entries and apply journal in the log slot the
// run's base commit does not use, and in memory the set of lines saved.
// Depends on the pool's mapping, the persister and the boot id; the store
// decides which lines to save and ends the run (it retires the base
// commit's log record, which closes the run on the media).
//
// Thread-compatible: the store's writer calls it (and open, to recover).
#pragma once

#include <cstdint>
#include <random>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "pmstore/format/layout.h"
#include "pmstore/format/redo_log.h"
#include "pmstore/persist/persister.h"

namespace pmstore::internal {

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

uint64_t UndoHeaderChecksum(const UndoHeader& header);
// Covers the run, the entry's place in the log, its offset and its line.
uint64_t UndoEntryChecksum(uint64_t run_id, uint64_t index, const UndoEntry& entry);


class UndoLog {
 public:
  explicit UndoLog(char* base) : base_(base) {}

  bool open() const { return open_; }
  // The commit a crash inside the run returns to.
  uint64_t base_seq() const { return base_seq_; }
  // Whether the last Save failed for want of room: the run must end.
  bool full() const { return full_; }

  // Starts a run whose base is the newest commit record in the log, seq
  // `base_seq` (in slot base_seq % 2) with checksum `base_checksum`.
  // Writes and flushes the header in the other slot; the first Save's
  // drain makes it durable before anything the run changes can be.
  absl::Status Begin(Persister& persister, uint64_t base_seq, uint64_t base_checksum);

  // Makes the contents of `lines` (64-byte aligned offsets, live when the
  // run began) durable in the log, those not saved before; then they may
  // change. ResourceExhausted when they do not fit (full() is then true);
  // a persister failure as is.
  absl::Status Save(Persister& persister, const std::vector<uint64_t>& lines);

  // Before an unsynced commit applies `entries` in place (after Save):
  // keeps them where recovery in the same boot finds them, should the
  // process die halfway through the apply. Plain stores, no flush.
  // ResourceExhausted when they do not fit beside the undo entries (full()
  // is then true). Applied() once the apply is over.
  absl::Status Journal(const std::vector<LogEntry>& entries);
  void Applied();

  // The store made the run durable and retired the base commit's record;
  // forgets the run.
  void End();

  // At open, before the log is replayed, when a run was open (its header
  // valid and the base commit's record still in its slot). Begun in this
  // boot: completes the commit its journal holds, makes the whole pool
  // durable and retires the base record (the run is kept). Else (a power
  // failure or kernel crash, or an unknown boot): writes every saved line
  // back and makes them durable (the pool is at the base again).
  // *min_next_seq: the next commit's sequence number must be at least this
  // (past the base of any old run). With `verify_only` (a pool mapped
  // without write permission) a run to recover is FailedPrecondition.
  static absl::Status Recover(const PoolView& pool, Persister& persister, uint64_t* min_next_seq,
                              bool verify_only = false);

 private:
  char* Slot() const;
  ApplyJournal* journal() const;
  static absl::Status KeepRun(const PoolView& pool, Persister& persister, char* slot, const UndoHeader& header,
                              uint64_t* min_next_seq);
  static absl::Status RollBack(const PoolView& pool, Persister& persister, char* slot, const UndoHeader& header);

  char* base_;
  bool open_ = false;
  bool full_ = false;
  uint64_t base_seq_ = 0;
  uint64_t run_id_ = 0;
  uint64_t count_ = 0;  // entries written
  absl::flat_hash_set<uint64_t> saved_;
  std::mt19937_64 run_ids_{std::random_device()()};
};

}  // namespace pmstore::internal
