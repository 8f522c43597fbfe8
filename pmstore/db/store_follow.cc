// Following a writer of another process: a read-only open that shares
// the pool (doc/FORMAT.md "Following a writer").
#include <atomic>
#include <chrono>
#include <thread>

#include "absl/strings/str_cat.h"
#include "pmstore/base/status_macros.h"
#include "pmstore/db/store_impl.h"
#include "pmstore/index/separator_change.h"

namespace pmstore {
namespace {

// Walks of the chain tried before a follower gives up: each fails only
// when a leaf it reached failed its check, as one a writer's recovery
// rewrites in place can for a moment.
constexpr int kWalks = 8;
// Reads of the root tried while the writer's apply tears it.
constexpr int kRootReads = 1000;
// Point reads tried again after a leaf failed its check, for the same
// reason as kWalks.
constexpr int kDamagedRetries = 3;

}  // namespace

absl::StatusOr<internal::Root> StoreImpl::FollowRoot() {
  absl::StatusOr<internal::Root> root;
  for (int tries = 0; tries < kRootReads; ++tries) {
    root = internal::ReadRoot(*pool_);
    if (root.ok()) break;
    // Torn by the writer's apply, or naming chunks its growth added since
    // this open last looked at the file's size.
    PMSTORE_RETURN_IF_ERROR(pool_->file->Refresh());
    std::this_thread::yield();
  }
  if (!root.ok()) return root.status();
  const uint64_t length = pool_->superblock.heap_offset + root->num_chunks * internal::kChunkSize;
  if (length > pool_->length()) PMSTORE_RETURN_IF_ERROR(pool_->mapping->Extend(*pool_->file, length));
  return root;
}

void StoreImpl::Followed(std::optional<uint64_t> commit, internal::ChangeRing::Cursor cursor, uint64_t key_count) {
  followed_ = commit;
  follow_cursor_ = cursor;
  key_count_ = key_count;
  // Snapshots, and the pins of reads, are at the followed commit.
  if (commit.has_value()) committer_.Recovered(*commit + 1, internal::LogHeader{});
  // The pin published for other processes may lag behind this open's
  // oldest (PinRegistry): made exact here, where a writer has moved on.
  pins_.ReusableThrough(0);
}

absl::Status StoreImpl::JoinWriter() { return WalkAgain(); }

bool StoreImpl::Behind() const {
  return change_ring_->published() != followed_ || change_ring_->Now().position != follow_cursor_.position;
}

absl::Status StoreImpl::WalkAgain() {
  const internal::ChangeRing& ring = *change_ring_;
  absl::Status walked;
  for (int walk = 0; walk < kWalks; ++walk) {
    // The cursor and the commit its changes end at, read together.
    std::optional<uint64_t> from;
    internal::ChangeRing::Cursor cursor;
    do {
      from = ring.published();
      cursor = ring.Now();
    } while (ring.published() != from);
    // Pinned before the root is read: whatever the walk reaches stays put
    // (the writer publishes before it reads the pins).
    const uint64_t pin = pins_.Pin(from.value_or(0));
    std::atomic_thread_fence(std::memory_order_seq_cst);
    absl::StatusOr<internal::Root> root = FollowRoot();
    walked = root.ok() ? index_.LoadFollowing(root->head_leaf, pool_->length(), ring) : root.status();
    if (walked.ok()) {
      // The leaves the walk copied are at commits from `from` to the
      // newest: the changes published since, forced, bring the map to it.
      const std::optional<uint64_t> newest = ring.published();
      std::vector<internal::ChangeRing::Change> changes;
      absl::StatusOr<internal::ChangeRing::Followed> followed = ring.Follow(&cursor, newest.value_or(0), &changes);
      if (!followed.ok()) {
        pins_.Unpin(pin);
        return followed.status();
      }
      bool again = *followed == internal::ChangeRing::Followed::kOverrun;
      for (const auto& change : changes) again = again || change.kind == internal::kWalkAgainKind;
      if (!again) walked = index_.ApplySeparatorChanges(changes, /*after_walk=*/true);
      if (!again && walked.ok()) {
        absl::StatusOr<internal::Root> now = FollowRoot();
        pins_.Unpin(pin);
        if (!now.ok()) return now.status();
        Followed(newest, cursor, now->key_count);
        return absl::OkStatus();
      }
      if (!again && !walked.ok()) {
        pins_.Unpin(pin);
        return walked;  // a change that is no change: the region is damaged
      }
      walked = absl::AbortedError("the ring was overrun during the walk");
    }
    pins_.Unpin(pin);
    if (!absl::IsAborted(walked)) return walked;
  }
  return absl::DataLossError(absl::StrCat(pool_->path, ": ", kWalks, " walks of the index leaves failed while another ",
                                          "process writes the pool; the last: ", walked.message()));
}

absl::Status StoreImpl::Follow() {
  if (!Behind()) return absl::OkStatus();
  const internal::ChangeRing& ring = *change_ring_;
  const std::optional<uint64_t> newest = ring.published();
  internal::ChangeRing::Cursor cursor = follow_cursor_;
  std::vector<internal::ChangeRing::Change> changes;
  PMSTORE_ASSIGN_OR_RETURN(const internal::ChangeRing::Followed followed,
                           ring.Follow(&cursor, newest.value_or(0), &changes));
  bool walk = followed == internal::ChangeRing::Followed::kOverrun;
  for (const auto& change : changes) walk = walk || change.kind == internal::kWalkAgainKind;
  if (!walk) {
    PMSTORE_ASSIGN_OR_RETURN(const internal::Root root, FollowRoot());
    const absl::Status applied = index_.ApplySeparatorChanges(changes, /*after_walk=*/false);
    if (applied.ok()) {
      Followed(newest, cursor, root.key_count);
      return absl::OkStatus();
    }
    if (!absl::IsFailedPrecondition(applied)) return applied;
  }
  return WalkAgain();
}

absl::Status StoreImpl::CatchUp() {
  {
    internal::SharedGuard lock(&mu_);
    if (closed_ || !Behind()) return absl::OkStatus();
  }
  // The writers' turn first: the gate is taken exclusively by one thread
  // at a time (reader_gate.h), and a follower's threads catch up in turns.
  internal::TurnGuard turn(&write_mu_);
  internal::ExclusiveGuard lock(&mu_);
  if (closed_) return absl::OkStatus();
  return internal::WithPath(Follow(), pool_->path);
}

void StoreImpl::LoadWritersSpace() {
  CatchUp().IgnoreError();  // a failure to follow is the reads' to report
  internal::TurnGuard turn(&write_mu_);
  internal::ExclusiveGuard lock(&mu_);
  if (closed_) return;
  alloc_.Load((pool_->length() - pool_->superblock.heap_offset) / internal::kChunkSize);
  space_loaded_.store(true, std::memory_order_release);
}

absl::Status StoreImpl::CheckNotRecoveredSince(const SnapshotImpl& snapshot) const {
  if (change_ring_->recoveries() == snapshot.recoveries_) return absl::OkStatus();
  return absl::AbortedError(absl::StrCat(
      pool_->path, ": the pool was recovered in place after this snapshot or iterator began at commit ",
      snapshot.sequence(), " (the process writing it died inside a commit, and the next writable open finished ",
      "it): begin it again"));
}

absl::Status StoreImpl::ReadFollowing(const ReadOptions& options, std::string_view key, bool take_pins,
                                      const std::function<void(std::string_view value, uint64_t seen)>& take) {
  // The quiet path: while no writer applies a commit (an idle writer, or
  // none), a read of the newest commit needs neither a pin nor a stable
  // leaf read: it reads in place, as the writer's process does, and keeps
  // what it read when the pool was quiet before and after (the value is
  // copied by then). A `take` that pins its value (PinnedValue) takes the
  // pinned path, which it must not enter twice.
  if (options.snapshot == nullptr && !take_pins) {
    internal::SharedGuard lock(&mu_);
    if (closed_) return ClosedError();
    if (!Behind() && change_ring_->Quiet(followed_)) {
      const uint64_t record = index_.LookupQuiet(key);
      internal::RecordView view;
      const absl::Status status = ReadValue(options, record, &view);
      if (status.ok()) take(view.value, SeenSeq(options));
      if (change_ring_->StillQuiet(followed_)) return status;
    }
  }
  for (int damaged = 0;;) {
    PMSTORE_RETURN_IF_ERROR(CatchUp());
    internal::SharedGuard lock(&mu_);
    if (closed_) return ClosedError();
    if (options.snapshot != nullptr) PMSTORE_RETURN_IF_ERROR(CheckSnapshot(options));
    const uint64_t seen = SeenSeq(options);
    // Pinned before the leaf is read: a record the copy names stays put
    // while the pin lasts (share/lock_region.h PinNewestPublished).
    const uint64_t pin = pins_.Pin(seen);
    std::atomic_thread_fence(std::memory_order_seq_cst);
    uint64_t record = index_.LookupFollowing(key, {&*change_ring_, seen});
    if (record == internal::LeafIndex::kLeafChanged && options.snapshot == nullptr) {
      pins_.Unpin(pin);
      continue;  // a newer commit: follow it
    }
    // A snapshot's read of a leaf changed since, or a miss in a leaf
    // unchanged since: the map, at a later commit, may route the key past
    // the leaf that held it then (its least key, deleted since: the
    // separator moved up). Both read the snapshot's commit from the leaves
    // as it left them.
    if (options.snapshot != nullptr && (record == internal::LeafIndex::kLeafChanged || record == 0)) {
      const internal::LeafIndex::Following at_snapshot{&*change_ring_, seen, leaf_images()};
      const absl::StatusOr<uint64_t> found = index_.LookupAtSnapshot(key, at_snapshot);
      if (!found.ok()) {
        pins_.Unpin(pin);
        return absl::Status(found.status().code(), absl::StrCat(pool_->path, ": ", found.status().message()));
      }
      record = *found;
    }
    if (record == internal::LeafIndex::kLeafStuck) {
      pins_.Unpin(pin);
      return absl::UnavailableError(
          absl::StrCat(pool_->path,
                       ": the key's index leaf has been mid-commit for over a second: the process writing the pool "
                       "died inside a commit (pmstore readers lists it); the next writable open recovers the pool"));
    }
    if (record == internal::LeafIndex::kDamagedLeaf && damaged++ < kDamagedRetries) {
      pins_.Unpin(pin);
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
      continue;
    }
    if (options.snapshot != nullptr) {
      const absl::Status current = CheckNotRecoveredSince(static_cast<const SnapshotImpl&>(*options.snapshot));
      if (!current.ok()) {
        pins_.Unpin(pin);
        return current;
      }
    }
    internal::RecordView view;
    const absl::Status status = ReadValue(options, record, &view);
    if (status.ok()) take(view.value, seen);
    pins_.Unpin(pin);
    return status;
  }
}

}  // namespace pmstore
