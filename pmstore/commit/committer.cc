#include "pmstore/commit/committer.h"

#include <cstring>

#include "absl/strings/str_cat.h"
#include "pmstore/base/status_macros.h"
#include "pmstore/pool/pool.h"

namespace pmstore::internal {

absl::Status Committer::Poison(const absl::Status& failure) {
  const absl::Status named = WithPath(failure, path_);
  if (poisoned_.ok()) poisoned_ = named;
  return named;
}

// One fence for data and log together, the commit point. The log record
// may reach the media before the data written in place; it names that
// data (kVerifyRecord, kVerifyLeaf, and the leaf headers it changes cover
// their slots), and recovery drops a newest commit whose data does not
// verify. The fence also covers the previous commit's applied lines: its
// log slot is the next one this store overwrites.
absl::Status Committer::Seal(const Transaction& tx) {
  tx.Entries(&entries_);
  if (entries_.size() > kLogCapacity) {
    return absl::InvalidArgumentError(absl::StrCat(path_, ": a commit of ", entries_.size(),
                                                   " metadata words exceeds the log (", kLogCapacity,
                                                   "); split the batch"));
  }
  sealed_ = true;
  const RedoLog::Written record = RedoLog(base_).Write(next_seq_, entries_, &sealed_record_);
  absl::Status status;
  for (const auto& [offset, size] : tx.in_place()) {
    if (status.ok()) status = PMSTORE_PERSIST(kCommitInPlaceFlush, persister_->Flush(base_ + offset, size));
  }
  for (const auto& [offset, size] : tx.in_cells()) {
    if (status.ok()) status = PMSTORE_PERSIST(kCommitCellFlush, persister_->Flush(base_ + offset, size));
  }
  if (status.ok()) status = PMSTORE_PERSIST(kCommitLogFlush, persister_->Flush(record.at, record.bytes));
  for (uint64_t line : unfenced_lines_) {
    if (status.ok()) status = PMSTORE_PERSIST(kCommitAppliedFlush, persister_->Flush(base_ + line, kUnitSize));
  }
  return status.ok() ? status : Poison(status);
}

absl::Status Committer::Drain() {
  const absl::Status drained = PMSTORE_PERSIST(kCommitDrain, persister_->Drain());
  if (!drained.ok()) return Poison(drained);
  last_record_ = sealed_record_;
  return absl::OkStatus();
}

absl::Status Committer::BeginRun() {
  if (last_record_.seq == 0) {
    // No commit record in the log (a new pool, or all recovery found was
    // torn): an empty one becomes the base, the state a crash returns to.
    LogHeader empty;
    const RedoLog::Written record = RedoLog(base_).WriteEmpty(next_seq_, &empty);
    const absl::Status flushed = PMSTORE_PERSIST(kRunBaseFlush, persister_->Flush(record.at, record.bytes));
    if (!flushed.ok()) return Poison(flushed);
    last_record_ = empty;
    next_seq_ = empty.seq + 1;
  }
  alloc_->BeginRun();
  const absl::Status begun = undo_.Begin(*persister_, last_record_.seq, last_record_.checksum);
  return begun.ok() ? begun : Poison(begun);
}

absl::Status Committer::Stage(const Transaction& tx) {
  tx.Entries(&entries_);
  lines_.clear();
  for (const LogEntry& entry : entries_) {
    if (entry.offset & kVerifyMask) continue;
    const uint64_t line = entry.offset & ~(kUnitSize - 1);
    if ((lines_.empty() || lines_.back() != line) && !alloc_->FreshInRun(line)) lines_.push_back(line);
  }
  PMSTORE_RETURN_IF_ERROR(SaveLines(lines_));
  // A process killed while the words are applied leaves half a commit in
  // memory; recovery in the same boot completes it from the journal.
  PMSTORE_RETURN_IF_ERROR(undo_.Journal(entries_));
  sealed_ = false;
  // The commit before the run may have been durable, its applied words
  // still unflushed (unfenced_lines_): the run's end flushes them.
  for (uint64_t line : unfenced_lines_) MarkUnsynced(line, kUnitSize);
  for (const auto& [offset, size] : tx.in_place()) MarkUnsynced(offset, size);
  for (const auto& [offset, size] : tx.in_cells()) MarkUnsynced(offset, size);
  return absl::OkStatus();
}

absl::Status Committer::BeforeInPlace(std::initializer_list<Range> ranges) {
  lines_.clear();
  for (const Range& range : ranges) {
    for (uint64_t line = range.offset & ~(kUnitSize - 1); line < range.offset + range.size; line += kUnitSize) {
      if (!alloc_->FreshInRun(line)) lines_.push_back(line);
    }
  }
  return SaveLines(lines_);
}

absl::Status Committer::SaveLines(const std::vector<uint64_t>& lines) {
  const absl::Status saved = undo_.Save(*persister_, lines);
  return saved.ok() || undo_.full() ? saved : Poison(saved);
}

uint64_t Committer::Apply() {
  unfenced_lines_.clear();
  for (const LogEntry& entry : entries_) {
    if (entry.offset & kVerifyMask) continue;
    std::memcpy(base_ + entry.offset, &entry.value, 8);
    const uint64_t line = entry.offset & ~(kUnitSize - 1);
    if (unfenced_lines_.empty() || unfenced_lines_.back() != line) unfenced_lines_.push_back(line);
  }
  // The applied lines of a durable commit are flushed by the next commit,
  // just before its fence (or by Sync or close). Flushing them now would
  // cost a third fence in effect: the locked instruction that releases
  // the writer's lock waits for outstanding write-backs. A run's are
  // flushed at its end.
  if (!sealed_) {
    for (uint64_t line : unfenced_lines_) MarkUnsynced(line, kUnitSize);
    unfenced_lines_.clear();
    undo_.Applied();
  }
  return next_seq_++;
}

void Committer::MarkUnsynced(uint64_t offset, uint64_t size) {
  if (size == 0) return;
  const uint64_t last_page = (offset + size - 1) / 4096;
  if (unsynced_pages_.size() * 64 <= last_page) unsynced_pages_.resize(last_page / 64 + 1, 0);
  for (uint64_t page = offset / 4096; page <= last_page; ++page) unsynced_pages_[page / 64] |= 1ull << (page % 64);
  any_unsynced_ = true;
}

absl::Status Committer::FlushUnsynced() {
  if (!any_unsynced_) return absl::OkStatus();
  for (uint64_t w = 0; w < unsynced_pages_.size(); ++w) {
    for (uint64_t bits = unsynced_pages_[w]; bits != 0; bits &= bits - 1) {
      const uint64_t page = w * 64 + static_cast<uint64_t>(__builtin_ctzll(bits));
      PMSTORE_RETURN_IF_ERROR(PMSTORE_PERSIST(kUnsyncedPagesFlush, persister_->Flush(base_ + page * 4096, 4096)));
    }
    unsynced_pages_[w] = 0;
  }
  any_unsynced_ = false;
  return absl::OkStatus();
}

absl::Status Committer::EndRun() {
  // Everything the run wrote (and what the commit before it applied) is
  // durable before the base record goes: until then a crash returns to it.
  absl::Status status = FlushUnsynced();
  for (uint64_t line : unfenced_lines_) {
    if (status.ok()) status = PMSTORE_PERSIST(kRunAppliedFlush, persister_->Flush(base_ + line, kUnitSize));
  }
  if (status.ok()) status = PMSTORE_PERSIST(kRunDataDrain, persister_->Drain());
  if (!status.ok()) return Poison(status);
  // An empty commit record over the base's closes the run: recovery finds
  // no base for the undo log, and no commit to replay over the run's
  // writes. Its sequence number follows the run's commits, in the base's
  // slot.
  const uint64_t base = undo_.base_seq();
  LogHeader retired;
  const RedoLog::Written record =
      RedoLog(base_).WriteEmpty(next_seq_ % 2 == base % 2 ? next_seq_ : next_seq_ + 1, &retired);
  status = PMSTORE_PERSIST(kRunEndFlush, persister_->Flush(record.at, record.bytes));
  if (status.ok()) status = PMSTORE_PERSIST(kRunEndDrain, persister_->Drain());
  if (!status.ok()) return Poison(status);
  last_record_ = retired;
  return absl::OkStatus();
}

void Committer::ForgetRun() {
  next_seq_ = last_record_.seq + 1;
  unfenced_lines_.clear();  // durable since EndRun
  undo_.End();
  alloc_->EndRun();
}

absl::Status Committer::PersistApplied(PersistSite flush, PersistSite drain) {
  absl::Status status;
  for (uint64_t line : unfenced_lines_) {
    if (status.ok()) status = PMSTORE_PERSIST_AT(flush, persister_->Flush(base_ + line, kUnitSize));
  }
  if (status.ok()) status = PMSTORE_PERSIST_AT(drain, persister_->Drain());
  return status.ok() ? status : Poison(status);
}

}  // namespace pmstore::internal
