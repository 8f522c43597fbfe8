#include "pmstore/format/undo_log.h"

#include <algorithm>
#include <atomic>
#include <cstring>

#define XXH_STATIC_LINKING_ONLY  // XXH3_state_t on the stack
#include <xxhash.h>

#include "absl/strings/str_cat.h"
#include "pmstore/base/status_macros.h"
#include "pmstore/env/boot_id.h"
#include "pmstore/persist/persist_site.h"

namespace pmstore::internal {
namespace {

// The undo slot is the one the base commit's record is not in.
char* UndoSlotOf(char* base, uint64_t base_seq) { return RedoLog::SlotOf(base, base_seq + 1); }

// The apply journal needs only program order: it is read back in the same
// boot, after the process died, when every store it made is visible in the
// order made (x86-TSO). These keep the compiler from reordering them.
void CompilerOrder() { std::atomic_signal_fence(std::memory_order_seq_cst); }

}  // namespace

uint64_t UndoHeaderChecksum(const UndoHeader& header) { return Checksum(&header, offsetof(UndoHeader, checksum)); }

uint64_t UndoEntryChecksum(uint64_t run_id, uint64_t index, const UndoEntry& entry) {
  XXH3_state_t state;
  XXH3_64bits_reset(&state);
  XXH3_64bits_update(&state, &run_id, 8);
  XXH3_64bits_update(&state, &index, 8);
  XXH3_64bits_update(&state, &entry.offset, 8);
  XXH3_64bits_update(&state, entry.line, sizeof(entry.line));
  return XXH3_64bits_digest(&state);
}

char* UndoLog::Slot() const { return UndoSlotOf(base_, base_seq_); }

ApplyJournal* UndoLog::journal() const { return reinterpret_cast<ApplyJournal*>(Slot() + kApplyJournalOffset); }

absl::Status UndoLog::Begin(Persister& persister, uint64_t base_seq, uint64_t base_checksum) {
  base_seq_ = base_seq;
  run_id_ = run_ids_();
  count_ = 0;
  full_ = false;
  saved_.clear();
  UndoHeader header = {};
  header.magic = kUndoMagic;
  header.base_seq = base_seq;
  header.base_checksum = base_checksum;
  header.run_id = run_id_;
  header.checksum = UndoHeaderChecksum(header);
  const BootId boot = CurrentBootId();
  std::memcpy(header.boot_id, boot.words, sizeof(header.boot_id));
  // Over whatever the other slot holds: the commit before the base, whose
  // words the base's fence made durable, or a record recovery discarded.
  std::memcpy(Slot(), &header, sizeof(header));
  open_ = true;
  return PMSTORE_PERSIST(kRunBeginFlush, persister.Flush(Slot(), sizeof(header)));
}

absl::Status UndoLog::Save(Persister& persister, const std::vector<uint64_t>& lines) {
  const uint64_t first = count_;
  for (uint64_t line : lines) {
    if (saved_.contains(line)) continue;
    if (count_ == kUndoCapacity) {
      full_ = true;
      return absl::ResourceExhaustedError(absl::StrCat("the undo log of the unsynced run is full (", kUndoCapacity,
                                                       " lines)"));
    }
    UndoEntry entry;
    entry.offset = line;
    std::memcpy(entry.line, base_ + line, sizeof(entry.line));
    entry.checksum = UndoEntryChecksum(run_id_, count_, entry);
    std::memcpy(Slot() + kUndoEntriesOffset + count_ * sizeof(UndoEntry), &entry, sizeof(entry));
    saved_.insert(line);
    ++count_;
  }
  if (count_ == first) return absl::OkStatus();
  char* from = Slot() + kUndoEntriesOffset + first * sizeof(UndoEntry);
  PMSTORE_RETURN_IF_ERROR(
      PMSTORE_PERSIST(kUndoSaveFlush, persister.Flush(from, (count_ - first) * sizeof(UndoEntry))));
  return PMSTORE_PERSIST(kUndoSaveDrain, persister.Drain());
}

absl::Status UndoLog::Journal(const std::vector<LogEntry>& entries) {
  const uint64_t bytes = entries.size() * sizeof(LogEntry);
  if (kUndoEntriesOffset + count_ * sizeof(UndoEntry) + bytes > kApplyJournalOffset) {
    full_ = true;
    return absl::ResourceExhaustedError(absl::StrCat("an unsynced commit of ", entries.size(),
                                                     " metadata words does not fit beside the run's undo log"));
  }
  ApplyJournal* j = journal();
  // Unsealed before the words change: a kill in between finds no journal,
  // and the previous commit was applied whole.
  j->sealed = 0;
  CompilerOrder();
  std::memcpy(Slot() + kApplyJournalOffset - bytes, entries.data(), bytes);
  j->run_id = run_id_;
  j->count = entries.size();
  CompilerOrder();
  j->sealed = kApplyingMagic;
  CompilerOrder();
  return absl::OkStatus();
}

void UndoLog::Applied() {
  CompilerOrder();
  journal()->sealed = 0;
}

void UndoLog::End() {
  open_ = false;
  full_ = false;
  count_ = 0;
  saved_.clear();
}

absl::Status UndoLog::Recover(const PoolView& pool, Persister& persister, uint64_t* min_next_seq,
                              bool verify_only) {
  char* base = pool.base;
  const RedoLog redo(base);
  for (uint64_t slot = 0; slot < 2; ++slot) {
    char* at = RedoLog::SlotOf(base, slot);
    UndoHeader header;
    std::memcpy(&header, at, sizeof(header));
    if (header.magic != kUndoMagic || header.checksum != UndoHeaderChecksum(header)) continue;
    if (UndoSlotOf(base, header.base_seq) != at) continue;
    // Sequence numbers never come back to an old run's base, so that its
    // header can never again find "its" base record. (Only just past it:
    // the next commit must go to the other slot, as after any commit, so
    // that the base record stays until that commit's fence.)
    *min_next_seq = std::max(*min_next_seq, header.base_seq + 1);
    if (!redo.Holds(header.base_seq, header.base_checksum)) continue;  // the run ended
    if (verify_only) {
      return absl::FailedPreconditionError(absl::StrCat(
          pool.path, ": a run of unsynced writes was cut short by a crash or a kill and is still to be recovered, "
          "which an open that may not write the pool cannot do; open the pool for writing once"));
    }
    BootId began;
    std::memcpy(began.words, header.boot_id, sizeof(began.words));
    const BootId now = CurrentBootId();
    if (now.known() && began == now) return KeepRun(pool, persister, at, header, min_next_seq);
    return RollBack(pool, persister, at, header);
  }
  return absl::OkStatus();
}

// The process that ran it died in this boot: the pool's bytes (in memory)
// are the state after the run's last commit, or in the middle of applying
// one, which its journal then completes (its words are absolute, so
// applying them twice is harmless). Then as at a run's end: everything
// durable, and the base record retired.
absl::Status UndoLog::KeepRun(const PoolView& pool, Persister& persister, char* slot, const UndoHeader& header,
                              uint64_t* min_next_seq) {
  char* base = pool.base;
  const uint64_t length = pool.length;
  auto* j = reinterpret_cast<ApplyJournal*>(slot + kApplyJournalOffset);
  if (j->sealed == kApplyingMagic && j->run_id == header.run_id) {
    if (j->count > (kApplyJournalOffset - kUndoEntriesOffset) / sizeof(LogEntry)) {
      return absl::DataLossError(absl::StrCat(pool.path, ": the apply journal of an unsynced run holds ", j->count,
                                              " words, more than fit"));
    }
    const auto* entries = reinterpret_cast<const LogEntry*>(slot + kApplyJournalOffset - j->count * sizeof(LogEntry));
    for (uint64_t i = 0; i < j->count; ++i) {
      if ((entries[i].offset & kVerifyMask) == 0 && !IsLoggableWord(entries[i].offset, length)) {
        return absl::DataLossError(absl::StrCat(pool.path, ": the apply journal of an unsynced run writes outside ",
                                                "the pool's metadata (offset ", entries[i].offset, ")"));
      }
    }
    for (uint64_t i = 0; i < j->count; ++i) {
      if ((entries[i].offset & kVerifyMask) == 0) std::memcpy(base + entries[i].offset, &entries[i].value, 8);
    }
    j->sealed = 0;
  }
  // Lines of the run may be anywhere (page granularity: msync writes back
  // only the dirty pages; cache-line granularity: a write-back of every
  // line of the mapping, doc/STORE.md has its cost).
  PMSTORE_RETURN_IF_ERROR(PMSTORE_PERSIST(kRunCompleteFlush, persister.Flush(base, length)));
  PMSTORE_RETURN_IF_ERROR(PMSTORE_PERSIST(kRunCompleteDrain, persister.Drain()));
  // An empty record in the base's slot closes the run (base + 2: the run
  // wrote no record of its own).
  LogHeader retired;
  const RedoLog::Written record = RedoLog(base).WriteEmpty(header.base_seq + 2, &retired);
  PMSTORE_RETURN_IF_ERROR(PMSTORE_PERSIST(kRunCompleteEndFlush, persister.Flush(record.at, record.bytes)));
  *min_next_seq = std::max(*min_next_seq, retired.seq + 1);
  return PMSTORE_PERSIST(kRunCompleteEndDrain, persister.Drain());
}

// A power failure or kernel crash: any line of the run may have reached
// the media, so every live line it changed goes back to its saved contents.
absl::Status UndoLog::RollBack(const PoolView& pool, Persister& persister, char* slot, const UndoHeader& header) {
  char* base = pool.base;
  const uint64_t length = pool.length;
  for (uint64_t i = 0; i < kUndoSlotEntries; ++i) {
    UndoEntry entry;
    std::memcpy(&entry, slot + kUndoEntriesOffset + i * sizeof(UndoEntry), sizeof(entry));
    if (entry.checksum != UndoEntryChecksum(header.run_id, i, entry)) break;  // the rest was never written
    const uint64_t offset = entry.offset;
    const bool in_root = offset == kRootOffset;
    const bool in_tables = offset >= kChunkTableOffset && offset <= length - sizeof(entry.line);
    if (offset % sizeof(entry.line) != 0 || !(in_root || in_tables)) {
      return absl::DataLossError(absl::StrCat(pool.path, ": the undo log of an unsynced run names offset ", offset,
                                              ", outside the pool's metadata and heap"));
    }
    std::memcpy(base + offset, entry.line, sizeof(entry.line));
    PMSTORE_RETURN_IF_ERROR(PMSTORE_PERSIST(kUndoRestoreFlush, persister.Flush(base + offset, sizeof(entry.line))));
  }
  return PMSTORE_PERSIST(kUndoRestoreDrain, persister.Drain());
}

}  // namespace pmstore::internal
