// Snapshots: a pin at the snapshot's sequence (so its records keep their
// space) and an overlay of pre-images in snapshots_ (snapshot_list.h);
// reads that name one consult the overlays before the index.
#include <atomic>
#include <chrono>
#include <thread>

#include "absl/strings/str_cat.h"
#include "pmstore/db/store_impl.h"
#include "pmstore/db/transaction_impl.h"

namespace pmstore {

std::unique_ptr<Snapshot> StoreImpl::GetSnapshot() {
  // A forked child's snapshot belongs to no store: reads through it fail
  // as the store's own do there (ForkedError), and it releases nothing.
  if (Forked()) return std::make_unique<SnapshotImpl>(nullptr, 0, 0);
  // The writer's turn: no write is staged or half applied, so the index
  // is exactly the state after the last commit, and every later write
  // sees the new overlay.
  internal::TurnGuard turn(&write_mu_);
  internal::ExclusiveGuard lock(&mu_);
  // A follower's snapshot is at the newest commit published; when it
  // cannot follow, at the last it followed, and reads through it fail
  // as this Follow did.
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(1);
  uint64_t seq, pin, recoveries = 0;
  for (;;) {
    // Loaded before the pool is found quiet: a recovery announces itself
    // (kApplyingEveryLeaf) before it counts, so a quiet pool's count is
    // from before any recovery this snapshot's commit may meet.
    if (following_) recoveries = change_ring_->recoveries();
    const bool followed = following_ && !closed_ && Follow().ok();
    seq = committer_.last_seq();
    pin = pins_.Pin(seq);
    if (!followed) break;
    // A follower reads leaves the writer of another process may free: the
    // pin is stored before any of them is loaded (store_follow.cc). And a
    // writer copies the leaves a commit changes, for this snapshot, only
    // when it sees a pin after it has announced the commit
    // (ReaderSlot::NewestOtherPin): a commit being applied now may have looked
    // before this pin, so the snapshot is taken at its commit instead.
    // A writer that died inside a commit leaves it announced: after a
    // second the snapshot keeps its commit (its reads say Unavailable).
    std::atomic_thread_fence(std::memory_order_seq_cst);
    if (change_ring_->Quiet(followed_)) break;
    if (std::chrono::steady_clock::now() > give_up) {
      // Taken during a recovery in place, which may have counted already:
      // its reads say Aborted once it is done.
      if (change_ring_->applying() == internal::kApplyingEveryLeaf) recoveries = SnapshotImpl::kUnknownRecoveries;
      break;
    }
    pins_.Unpin(pin);
    std::this_thread::yield();
  }
  auto snapshot = std::make_unique<SnapshotImpl>(this, seq, pin);
  snapshot->recoveries_ = recoveries;
  snapshot->handle_ = snapshots_.Add(snapshot.get());
  return snapshot;
}

void StoreImpl::DetachSnapshots() {
  if (Forked()) {
    // The gate may be held by a thread that stayed in the parent; in the
    // child no call reaches snapshots_ any more (ReleaseSnapshot returns
    // at once), so the list is read without it.
    ForgetSnapshotsInChild();
    return;
  }
  internal::SharedGuard lock(&mu_);
  for (const auto& entry : snapshots_.entries()) static_cast<SnapshotImpl*>(entry.owner)->store_ = nullptr;
}

void StoreImpl::ForgetSnapshotsInChild() ABSL_NO_THREAD_SAFETY_ANALYSIS {
  for (const auto& entry : snapshots_.entries()) static_cast<SnapshotImpl*>(entry.owner)->store_ = nullptr;
}

void StoreImpl::ReleaseSnapshot(internal::SnapshotList::Handle handle, uint64_t pin_id) {
  if (Forked()) return;  // the parent's to release
  internal::TurnGuard turn(&write_mu_);
  ForgetSnapshot(handle, pin_id);
}

void StoreImpl::ForgetSnapshot(internal::SnapshotList::Handle handle, uint64_t pin_id) {
  {
    internal::ExclusiveGuard lock(&mu_);
    snapshots_.Remove(handle);
  }
  // Space the snapshot kept is reused from the next commit on, as for a
  // PinnedValue.
  pins_.Unpin(pin_id);
}

void StoreImpl::ReleaseTransactionSnapshots(const Ops* writes, size_t count) {
  for (size_t w = 0; w < count; ++w) {
    if (writes[w].transaction == nullptr) continue;
    SnapshotImpl* snapshot = writes[w].transaction->SnapshotNoIteratorReads();
    if (snapshot == nullptr || snapshot->store_ == nullptr) continue;
    ForgetSnapshot(snapshot->handle_, snapshot->pin_id_);
    // Its destructor (when the transaction ends) finds nothing to release.
    snapshot->store_ = nullptr;
  }
}

absl::Status StoreImpl::CheckSnapshot(const ReadOptions& options) const {
  if (static_cast<const SnapshotImpl*>(options.snapshot)->store() == this) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat(path_, ": the snapshot belongs to another store"));
}

uint64_t StoreImpl::LookupAt(const ReadOptions& options, std::string_view key) const {
  uint64_t record;
  if (options.snapshot != nullptr &&
      snapshots_.Find(static_cast<const SnapshotImpl*>(options.snapshot)->handle(), key, &record)) {
    return record;
  }
  return index_.Lookup(key);
}

uint64_t StoreImpl::SeenSeq(const ReadOptions& options) const {
  return options.snapshot != nullptr ? options.snapshot->sequence() : committer_.last_seq();
}

}  // namespace pmstore
