// The write path: every Put, Delete and WriteBatch is staged as one
// transaction (txn/), then committed by the protocol its WriteOptions
// choose (commit/committer.h) and applied. A persistence failure poisons
// the store.
#include <algorithm>
#include <chrono>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "pmstore/base/status_macros.h"
#include "pmstore/db/store_impl.h"
#include "pmstore/db/transaction_impl.h"
#include "pmstore/index/separator_change.h"
#include "pmstore/persist/persist_site.h"

namespace pmstore {

using internal::PersistSite;

absl::Status StoreImpl::Put(const WriteOptions& options, std::string_view key, std::string_view value) {
  const Op op{WriteBatch::OpKind::kPut, key, value};
  return WriteOps(options, Ops{&op, 1});
}

absl::Status StoreImpl::Delete(const WriteOptions& options, std::string_view key) {
  const Op op{WriteBatch::OpKind::kDelete, key, {}};
  return WriteOps(options, Ops{&op, 1});
}

absl::Status StoreImpl::Write(const WriteOptions& options, const WriteBatch& batch) {
  std::vector<Op> ops;
  ops.reserve(batch.Count());
  for (const WriteBatch::Op& op : batch.ops()) ops.push_back(Op{op.kind, op.key, op.value});
  return WriteOps(options, Ops{ops.data(), ops.size()});
}

absl::Status StoreImpl::CommitTransaction(const WriteOptions& options, const TransactionImpl& transaction) {
  std::vector<Op> ops;
  ops.reserve(transaction.staged().size());
  for (const auto& [key, value] : transaction.staged()) {
    ops.push_back(value ? Op{WriteBatch::OpKind::kPut, key, *value} : Op{WriteBatch::OpKind::kDelete, key, {}});
  }
  return WriteOps(options, Ops{ops.data(), ops.size(), &transaction});
}

absl::Status StoreImpl::CheckKey(std::string_view key) const {
  if (key.size() <= kMaxKeySize) return absl::OkStatus();
  return absl::InvalidArgumentError(
      absl::StrCat(path_, ": key of ", key.size(), " bytes exceeds the limit of ", kMaxKeySize));
}

absl::Status StoreImpl::WriteOps(const WriteOptions& options, const Ops& write) {
  if (Forked()) return ForkedError();
  for (size_t i = 0; i < write.count; ++i) PMSTORE_RETURN_IF_ERROR(CheckKey(write.ops[i].key));
  if (options.sync && group_commits_) return WriteInGroup(write);
  internal::TurnGuard turn(&write_mu_);
  const absl::Status status = WriteTogether(options.sync, &write, 1);
  ReleaseTransactionSnapshots(&write, 1);
  return status;
}

absl::Status StoreImpl::WriteInGroup(const Ops& ops) {
  // A group holds this many writes at most: enough to share an msync among
  // every thread likely to wait for one, few enough that a group's words
  // stay far below the redo log's capacity.
  constexpr size_t kGroupWrites = 64;
  constexpr size_t kGroupOps = 4096;
  Waiter me;
  me.ops = ops;
  std::unique_lock<std::mutex> queue(queue_mu_);
  queue_.push_back(&me);
  // The head may be waiting for the rest of its group (below).
  if (queue_.front() != &me) queue_.front()->wake.notify_one();
  while (!me.done && queue_.front() != &me) me.wake.wait(queue);
  if (me.done) return me.status;
  // The head of the queue: it writes what waits behind it with its own.
  // Writers that took turns with it last time come back a moment after
  // their acknowledgement; without a wait for them, two threads would
  // alternate, each commit holding one write. It waits a fraction of a
  // commit, and only when others have been writing.
  if (queue_.size() < group_writers_) {
    const auto deadline = std::chrono::steady_clock::now() + commit_time_ / 8;
    me.wake.wait_until(queue, deadline, [&] { return queue_.size() >= group_writers_; });
  }
  std::vector<Waiter*> group;
  std::vector<Ops> writes;
  size_t group_ops = 0;
  for (Waiter* waiter : queue_) {
    if (!group.empty() && (group.size() == kGroupWrites || group_ops + waiter->ops.count > kGroupOps)) break;
    group.push_back(waiter);
    writes.push_back(waiter->ops);
    group_ops += waiter->ops.count;
  }
  queue.unlock();
  const auto start = std::chrono::steady_clock::now();
  {
    internal::TurnGuard turn(&write_mu_);
    const absl::Status status = WriteTogether(true, writes.data(), writes.size());
    if (status.ok() || group.size() == 1 || !committer_.poisoned().ok()) {
      for (Waiter* waiter : group) waiter->status = status;
    } else {
      // One write's failure (the pool full, a batch past the log) is not
      // the others': the group wrote nothing, so each writes alone.
      for (Waiter* waiter : group) waiter->status = WriteTogether(true, &waiter->ops, 1);
    }
    ReleaseTransactionSnapshots(writes.data(), writes.size());
  }
  queue.lock();
  commit_time_ = std::min<std::chrono::steady_clock::duration>(std::chrono::steady_clock::now() - start,
                                                               std::chrono::milliseconds(10));
  // The writers of the next group: this one's, and those that queued meanwhile.
  group_writers_ = std::min(kGroupWrites, queue_.size());
  for (Waiter* waiter : group) {
    queue_.pop_front();
    waiter->done = true;
    if (waiter != &me) waiter->wake.notify_one();
  }
  if (!queue_.empty()) queue_.front()->wake.notify_one();
  return me.status;
}

absl::Status StoreImpl::WriteTogether(bool sync, const Ops* writes, size_t count) {
  PMSTORE_RETURN_IF_ERROR(Writable());
  // The writers' turn across processes: a check of another process holds
  // it while it checks, and no commit changes the pool under the check.
  internal::TurnHeld turn(region_turn());
  PMSTORE_RETURN_IF_ERROR(internal::WithPath(turn.status(), path_));
  // Its holder died: a check (nothing to recover), or the writer before
  // this open, whose commit this open's recovery settled.
  if (turn.holder_died()) turn.Recovered();
  internal::ExclusiveGuard lock(&mu_);
  LoadSpace();
  for (int attempt = 0;; ++attempt) {
    // A durable write ends the unsynced run first: it writes in place
    // where the run's base may still be the state a crash returns to.
    absl::Status status;
    if (sync && committer_.in_run()) {
      status = committer_.EndRun();
      if (status.ok()) {
        committer_.ForgetRun();
        ReleaseSpaceThrough(committer_.last_seq());
      }
    } else if (!sync && !committer_.in_run()) {
      status = committer_.BeginRun();
    }
    if (!status.ok()) return status;
    tx_.set_guard(sync ? nullptr : &committer_);
    status = Stage(writes, count);
    status = status.ok() ? Commit(sync) : status;
    tx_.set_guard(nullptr);
    if (!status.ok()) Abandon();
    if (status.ok() || attempt > 0 || !committer_.poisoned().ok()) return internal::WithPath(status, path_);
    PMSTORE_RETURN_IF_ERROR(MakeRoom(status, &sync));  // then once more
  }
}

absl::Status StoreImpl::Stage(const Ops* writes, size_t count) {
  if (separator_image_ != 0 || index_.on_image()) PMSTORE_RETURN_IF_ERROR(DropSeparatorImage());
  for (size_t w = 0; w < count; ++w) {
    // A transaction is checked against every commit before it, the
    // writes staged ahead of it in this group included: their keys are in
    // the overlays already (and leave them if the group is abandoned).
    if (writes[w].transaction != nullptr) PMSTORE_RETURN_IF_ERROR(writes[w].transaction->Validate(snapshots_));
    for (size_t i = 0; i < writes[w].count; ++i) {
      const Op& op = writes[w].ops[i];
      PMSTORE_RETURN_IF_ERROR(op.kind == WriteBatch::OpKind::kDelete ? StageDelete(op.key)
                                                                       : StagePut(op.key, op.value));
    }
  }
  return absl::OkStatus();
}

absl::Status StoreImpl::StagePut(std::string_view key, std::string_view value) {
  uint64_t replaced;
  PMSTORE_RETURN_IF_ERROR(index_.Upsert(tx_, alloc_, key, value, &replaced));
  // A snapshot keeps what the key had (Abandon takes it back out).
  if (!snapshots_.empty()) snapshots_.WillChange(key, replaced);
  if (replaced == 0) ++key_delta_;
  return absl::OkStatus();
}

absl::Status StoreImpl::StageDelete(std::string_view key) {
  uint64_t removed;
  PMSTORE_RETURN_IF_ERROR(index_.Remove(tx_, alloc_, key, &removed));
  if (removed != 0) {
    if (!snapshots_.empty()) snapshots_.WillChange(key, removed);
    --key_delta_;
  }
  return absl::OkStatus();
}

void StoreImpl::StageRoot() {
  uint64_t words[internal::kRootWords];
  for (uint64_t i = 0; i < internal::kRootWords; ++i) words[i] = tx_.Read(internal::kRootOffset + 8 * i);
  internal::Root root;
  std::memcpy(&root, words, sizeof(root));
  root.key_count = key_count_ + key_delta_;
  root.num_chunks = alloc_.num_chunks();
  root.checksum = internal::RootChecksum(root);
  std::memcpy(words, &root, sizeof(root));
  for (uint64_t i = 0; i < internal::kRootWords; ++i) {
    if (tx_.Read(internal::kRootOffset + 8 * i) != words[i]) tx_.Write(internal::kRootOffset + 8 * i, words[i]);
  }
}

void StoreImpl::Abandon() {
  // Everything written in place went to space nothing committed refers
  // to; only the in-memory views need to forget this transaction.
  tx_.Clear();
  key_delta_ = 0;
  alloc_.Abandoned();
  index_.Abandoned();
  snapshots_.Abandoned();
}

absl::Status StoreImpl::MakeRoom(const absl::Status& failure, bool* sync) {
  if (committer_.run_full()) {
    // The run touched more live lines than its undo log holds: it ends
    // here, and this write is made durable itself (a durable commit needs
    // no undo).
    PMSTORE_RETURN_IF_ERROR(committer_.EndRun());
    committer_.ForgetRun();
    ReleaseSpaceThrough(committer_.last_seq());
    *sync = true;
    return absl::OkStatus();
  }
  if (!absl::IsResourceExhausted(failure)) return internal::WithPath(failure, path_);
  if (committer_.in_run()) {
    // What the run freed is reusable once it ended.
    PMSTORE_RETURN_IF_ERROR(committer_.EndRun());
    committer_.ForgetRun();
    ReleaseSpaceThrough(committer_.last_seq());
    return absl::OkStatus();
  }
  if (ReclaimHeldSpace()) return absl::OkStatus();
  // A commit of its own that frees empty small chunks, so that large
  // values can use them.
  if (alloc_.FreeEmptySmallChunks(tx_) == 0) {
    Abandon();
    return internal::WithPath(failure, path_);
  }
  const absl::Status freed = Commit(true);
  if (!freed.ok()) Abandon();
  return freed;
}

bool StoreImpl::ReclaimHeldSpace() {
  const size_t held = alloc_.quarantined();
  if (reader_slot_ != nullptr) {
    const std::optional<uint64_t> oldest = reader_slot_->OldestPinned();
    // Clearing is best effort: where it fails, the pins stay as they are.
    if (oldest.has_value() && *oldest < committer_.last_seq()) reader_slot_->ClearStale().IgnoreError();
  }
  ReleaseSpaceThrough(committer_.last_seq());
  return alloc_.quarantined() < held;
}

absl::StatusOr<uint64_t> StoreImpl::Grow(uint64_t chunks) {
  const uint64_t now = alloc_.num_chunks();
  const uint64_t target = std::min(pool_->superblock.max_chunks, std::max(chunks, now + now / 4 + 1));
  const absl::Status grown = internal::GrowPool(*pool_, *persister_, target);
  if (grown.ok()) return target;
  // A full file system refuses cleanly (the file kept its size); anything
  // else is a file system that fails, and the length on the media unknown.
  if (absl::IsResourceExhausted(grown)) return grown;
  return committer_.Poison(grown);
}

absl::Status StoreImpl::Commit(bool sync) {
  StageRoot();
  if (tx_.empty()) return absl::OkStatus();
  if (!sync) {
    // When the undo log is full the run ends and the write is made durable (MakeRoom).
    PMSTORE_RETURN_IF_ERROR(committer_.Stage(tx_));
  } else {
    PMSTORE_RETURN_IF_ERROR(committer_.Seal(tx_));
    // An msync takes milliseconds: readers go on meanwhile, unless this
    // write changed the in-memory index (readers would find the new
    // leaves, which hold it, before it is durable). A fence is over before
    // the gate could be handed over and back.
    if (pool_->mapping->granularity() == mapping::Granularity::kPage && !index_.edited()) {
      internal::GateOpen readers_in(&mu_);
      PMSTORE_RETURN_IF_ERROR(committer_.Drain());
    } else {
      PMSTORE_RETURN_IF_ERROR(committer_.Drain());
    }
  }
  Apply();
  return absl::OkStatus();
}

void StoreImpl::Apply() {
  if (change_ring_.has_value()) {
    // Readers of other processes copy no leaf header this commit changes
    // while it is applied (format/leaf.h ReadStableLeaf).
    change_ring_->BeginApplying(committer_.next_seq());
    // The leaves as they were, for the snapshots of other processes: the
    // copies those pins may read, the moves of the chain's head always (a
    // reader takes a missing copy for a lost one).
    if (leaf_images_.has_value()) {
      index_.RecordLeafImages(*leaf_images_, committer_.next_seq(), reader_slot_->NewestOtherPin());
    }
    index_.StampChangedLeaves(committer_.next_seq());
  }
  const uint64_t seq = committer_.Apply();
  PublishCommit(seq);
  index_.Settle();
  separator_image_ = reinterpret_cast<const internal::Root*>(base_ + internal::kRootOffset)->separator_image;
  key_count_ += key_delta_;
  key_delta_ = 0;
  tx_.Clear();
  snapshots_.Committed();
  alloc_.Committed(seq);
  ReleaseSpaceThrough(seq);
}

void StoreImpl::PublishCommit(uint64_t seq) {
  if (reader_slot_ == nullptr) return;
  if (change_ring_.has_value()) {
    // Every process that follows the ring keeps its own separator map
    // (the leaves themselves are in the pool, which it maps). A separator
    // is a key, so a change is far below the ring's payload limit, the
    // one reason Stage fails.
    static_assert(kMaxKeySize + 2 * sizeof(uint64_t) <= internal::kMaxChangePayload);  // two leaves, the key
    index_.ForEachChangedSeparator([&](std::string_view separator, uint64_t before, uint64_t after) {
      change_ring_
          ->Stage(seq, internal::kSeparatorChangeKind, internal::EncodeSeparatorChange(separator, before, after))
          .IgnoreError();
    });
    change_ring_->Publish(seq);
  }
  reader_slot_->PublishLastCommit(seq);
}

void StoreImpl::ReleaseSpaceThrough(uint64_t seq) {
  uint64_t through = pins_.ReusableThrough(committer_.ReleasableThrough(seq));
  // The pins of every open of the pool, in any process: this open's own
  // slot was just made exact by ReusableThrough.
  if (reader_slot_ != nullptr) {
    const std::optional<uint64_t> oldest = reader_slot_->OldestPinned();
    if (oldest.has_value() && *oldest < through) through = *oldest;
  }
  alloc_.ReleaseThrough(through);
}

absl::Status StoreImpl::MakeDurable(PersistSite applied_site, PersistSite drain_site) {
  if (!committer_.in_run()) return committer_.PersistApplied(applied_site, drain_site);
  PMSTORE_RETURN_IF_ERROR(committer_.EndRun());
  internal::ExclusiveGuard lock(&mu_);
  committer_.ForgetRun();
  ReleaseSpaceThrough(committer_.last_seq());
  return absl::OkStatus();
}

absl::Status StoreImpl::Sync() {
  if (Forked()) return ForkedError();
  internal::TurnGuard turn(&write_mu_);
  PMSTORE_RETURN_IF_ERROR(Writable());
  return MakeDurable(PersistSite::kSyncAppliedFlush, PersistSite::kSyncDrain);
}

absl::Status StoreImpl::Writable() const {
  if (ABSL_TS_UNCHECKED_READ(closed_)) return ClosedError();  // changes only under write_mu_
  if (pool_->read_only) {
    return absl::PermissionDeniedError(
        absl::StrCat(path_, ": the store is open read-only (Options::read_only); open it writable to write"));
  }
  const absl::Status& poisoned = committer_.poisoned();
  if (poisoned.ok()) return absl::OkStatus();
  return absl::Status(poisoned.code(),
                      absl::StrCat(poisoned.message(), " (an earlier write failed there; the store refuses writes "
                                                       "until the pool is reopened)"));
}

}  // namespace pmstore
