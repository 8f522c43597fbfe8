// The store's side of unsynced runs (undo_log.h, doc/FORMAT.md
// "Unsynced runs"): beginning one, saving the live lines it is about to
// change, and ending it.
#include "pmstore/base/status_macros.h"
#include "pmstore/src/persist_site.h"
#include "pmstore/src/store_impl.h"

namespace pmstore {

using internal::kUnitSize;

absl::Status StoreImpl::BeginRun() {
  if (last_record_.seq == 0) {
    // No commit record in the log (a new pool, or all recovery found was
    // torn): an empty one becomes the base, the state a crash returns to.
    internal::LogHeader empty;
    char* slot = internal::PutEmptyRecord(base_, next_seq_, &empty);
    const absl::Status flushed = PMSTORE_PERSIST(kRunBaseFlush, persister_->Flush(slot, sizeof(empty)));
    if (!flushed.ok()) return Poison(flushed);
    last_record_ = empty;
    next_seq_ = empty.seq + 1;
  }
  alloc_.BeginRun();
  const absl::Status begun = undo_.Begin(*persister_, last_record_.seq, last_record_.checksum);
  return begun.ok() ? begun : Poison(begun);
}

absl::Status StoreImpl::BeforeInPlace(std::initializer_list<InPlaceGuard::Range> ranges) {
  lines_.clear();
  for (const InPlaceGuard::Range& range : ranges) {
    for (uint64_t line = range.offset & ~(kUnitSize - 1); line < range.offset + range.size; line += kUnitSize) {
      if (!alloc_.FreshInRun(line)) lines_.push_back(line);
    }
  }
  return SaveLines(lines_);
}

absl::Status StoreImpl::SaveLines(const std::vector<uint64_t>& lines) {
  const absl::Status saved = undo_.Save(*persister_, lines);
  return saved.ok() || undo_.full() ? saved : Poison(saved);
}

void StoreImpl::MarkUnsynced(uint64_t offset, uint64_t size) {
  if (size == 0) return;
  const uint64_t pages = pool_->length() / 4096;
  if (unsynced_pages_.size() * 64 < pages) unsynced_pages_.resize((pages + 63) / 64, 0);
  for (uint64_t page = offset / 4096; page <= (offset + size - 1) / 4096; ++page) {
    unsynced_pages_[page / 64] |= 1ull << (page % 64);
  }
  any_unsynced_ = true;
}

absl::Status StoreImpl::FlushUnsynced() {
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

absl::Status StoreImpl::PersistRun() {
  // Everything the run wrote (and what the commit before it applied) is
  // durable before the base record goes: until then a crash returns to it.
  absl::Status status = FlushUnsynced();
  for (uint64_t line : unfenced_lines_) {
    if (!status.ok()) break;
    status = PMSTORE_PERSIST(kRunAppliedFlush, persister_->Flush(base_ + line, kUnitSize));
  }
  if (status.ok()) status = PMSTORE_PERSIST(kRunDataDrain, persister_->Drain());
  if (!status.ok()) return Poison(status);
  // An empty commit record over the base's closes the run: recovery finds
  // no base for the undo log, and no commit to replay over the run's
  // writes. Its sequence number follows the run's commits, in the base's
  // slot.
  const uint64_t base = undo_.base_seq();
  internal::LogHeader retired;
  char* slot = internal::PutEmptyRecord(base_, next_seq_ % 2 == base % 2 ? next_seq_ : next_seq_ + 1, &retired);
  status = PMSTORE_PERSIST(kRunEndFlush, persister_->Flush(slot, sizeof(retired)));
  if (status.ok()) status = PMSTORE_PERSIST(kRunEndDrain, persister_->Drain());
  if (!status.ok()) return Poison(status);
  last_record_ = retired;
  return absl::OkStatus();
}

void StoreImpl::ForgetRun() {
  next_seq_ = last_record_.seq + 1;
  unfenced_lines_.clear();  // durable since PersistRun
  undo_.End();
  alloc_.EndRun();
  ReleaseSpaceThrough(pins_.ReusableThrough(last_record_.seq));
}

}  // namespace pmstore
