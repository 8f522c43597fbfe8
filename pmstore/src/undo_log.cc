#include "pmstore/src/undo_log.h"

#include <algorithm>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "pmstore/base/status_macros.h"
#include "pmstore/src/persist_site.h"

namespace pmstore::internal {
namespace {

char* SlotAt(char* base, uint64_t slot) { return base + kLogOffset + slot * kLogSlotSize; }

// The undo slot is the one the base commit's record is not in.
uint64_t UndoSlotOf(uint64_t base_seq) { return (base_seq + 1) % 2; }

}  // namespace

char* UndoLog::Slot() const { return SlotAt(base_, UndoSlotOf(base_seq_)); }

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

void UndoLog::End() {
  open_ = false;
  full_ = false;
  count_ = 0;
  saved_.clear();
}

absl::Status UndoLog::Recover(Pool& pool, Persister& persister, uint64_t* min_next_seq) {
  char* base = pool.base();
  const uint64_t length = pool.length();
  for (uint64_t slot = 0; slot < 2; ++slot) {
    UndoHeader header;
    std::memcpy(&header, SlotAt(base, slot), sizeof(header));
    if (header.magic != kUndoMagic || header.checksum != UndoHeaderChecksum(header)) continue;
    if (UndoSlotOf(header.base_seq) != slot) continue;
    // Sequence numbers never come back to an old run's base, so that its
    // header can never again find "its" base record. (Only just past it:
    // the next commit must go to the other slot, as after any commit, so
    // that the base record stays until that commit's fence.)
    *min_next_seq = std::max(*min_next_seq, header.base_seq + 1);
    LogHeader record;
    std::memcpy(&record, SlotAt(base, header.base_seq % 2), sizeof(record));
    if (record.seq != header.base_seq || record.checksum != header.base_checksum) continue;  // the run ended
    for (uint64_t i = 0; i < kUndoCapacity; ++i) {
      UndoEntry entry;
      std::memcpy(&entry, SlotAt(base, slot) + kUndoEntriesOffset + i * sizeof(UndoEntry), sizeof(entry));
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
  return absl::OkStatus();
}

}  // namespace pmstore::internal
