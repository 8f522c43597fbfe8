// The separator image's life in the store: written at a clean close,
// found at open (store_impl.cc, Recover), freed by the first write.
#include <cstddef>
#include <cstdint>

#include "pmstore/base/status_macros.h"
#include "pmstore/db/store_impl.h"

namespace pmstore {

void StoreImpl::LoadSpace() {
  if (space_loaded_.load(std::memory_order_relaxed)) return;
  alloc_.Load(pool_->file_chunks());
  space_loaded_.store(true, std::memory_order_release);
}

void StoreImpl::EnsureSpaceLoaded() {
  if (space_loaded_.load(std::memory_order_acquire)) return;
  // The gate is taken exclusively by one thread at a time, the one that
  // holds the writers' turn (reader_gate.h): without the turn, this could
  // load the allocator's view beside a writer, or beside another Stats.
  internal::TurnGuard turn(&write_mu_);
  internal::ExclusiveGuard lock(&mu_);
  if (!closed_) LoadSpace();
}

absl::Status StoreImpl::DropSeparatorImage() {
  index_.LeaveImage();
  const uint64_t image = tx_.Read(internal::kRootImageWord);
  if (image == 0) return absl::OkStatus();
  // A word damaged into naming no run frees nothing.
  if (alloc_.IsRunHead(image)) alloc_.FreeRun(tx_, image);
  tx_.Write(internal::kRootImageWord, 0);
  return absl::OkStatus();
}

absl::Status StoreImpl::WriteSeparatorImage() {
  // A commit: taken in turns with other processes' checks (WriteTogether).
  internal::TurnHeld turn(region_turn());
  PMSTORE_RETURN_IF_ERROR(internal::WithPath(turn.status(), path_));
  if (turn.holder_died()) turn.Recovered();
  internal::ExclusiveGuard lock(&mu_);
  // Opened from the image and nothing written since: it is still current.
  if (index_.on_image()) return absl::OkStatus();
  LoadSpace();
  PMSTORE_RETURN_IF_ERROR(DropSeparatorImage());  // a stale one
  // Abandon() would walk the chain again; this transaction changed no leaf.
  const auto forget = [this]() ABSL_NO_THREAD_SAFETY_ANALYSIS {
    tx_.Clear();
    alloc_.Abandoned();
  };
  const internal::SeparatorMap& map = index_.separators();
  const uint64_t bytes = internal::SeparatorImage::BytesFor(map);
  // Tails are placed by 32-bit offsets (format.h): an image that large
  // (millions of long separators) is not written; open walks instead.
  if (bytes > UINT32_MAX) {
    forget();
    return absl::OkStatus();
  }
  auto run = alloc_.AllocRun(tx_, (bytes + internal::kChunkSize - 1) / internal::kChunkSize);
  if (!run.ok()) {
    // No room: the next open walks the chain, as after a crash.
    forget();
    return absl::OkStatus();
  }
  const auto* root = reinterpret_cast<const internal::Root*>(base_ + internal::kRootOffset);
  // The image describes the commit that writes it: that commit changes
  // only the chunk table and the root's image word, never a leaf.
  internal::SeparatorImage::Write(map, {committer_.next_seq(), root->head_leaf, key_count_}, base_ + *run);
  // Durable before the commit that names it: recovery verifies only the
  // records and leaves a commit names, and would otherwise keep a commit
  // whose image is torn (open would walk, correctly, but on every open).
  absl::Status persisted = PMSTORE_PERSIST(kCloseImageFlush, persister_->Flush(base_ + *run, bytes));
  if (persisted.ok()) persisted = PMSTORE_PERSIST(kCloseImageDrain, persister_->Drain());
  if (!persisted.ok()) {
    forget();
    return committer_.Poison(persisted);
  }
  tx_.Write(internal::kRootImageWord, *run);
  PMSTORE_RETURN_IF_ERROR(Commit(true));
  return committer_.PersistApplied(internal::PersistSite::kCloseAppliedFlush, internal::PersistSite::kCloseDrain);
}

}  // namespace pmstore
