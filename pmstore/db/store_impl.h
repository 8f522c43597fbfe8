// The store: one pool, its allocator and index, one writer at a time.
//
// Locking (store.h states the contract): writers take turns on write_mu_
// for the whole of a write. Readers (Get, Contains, iterator refills,
// Stats, Check) hold mu_, a ReaderGate, shared; a writer holds it
// exclusively while it changes what readers see: while it stages a write
// (which may split index leaves and grow the mapping) and while it
// applies a commit. It lets readers in while it waits for an msync, unless
// the write changed the in-memory index (a leaf split or removed); Sync
// and Close take the gate only for the bookkeeping after their write-back.
// At cache-line granularity the fence is shorter than handing the gate
// over twice, so the writer keeps it. Readers therefore never see a
// half-applied or unacknowledged commit and never block one another.
//
// Snapshots (snapshot_list.h): a snapshot is a pin at its sequence plus
// an overlay of pre-images that the write path fills while any snapshot
// lives; GetSnapshot and its release take the writer's turn and the gate,
// so no write is staged meanwhile.
//
// Following (store_follow.cc): a read-only open that shares the pool
// with a writer of another process follows its commits through the
// change ring: every read call first catches up (one shared load when
// nothing changed; else the gate exclusively, while the separator changes
// are applied), then reads leaves as stable copies under a pin
// (LeafIndex's follower reads), and retries when a leaf changed after the
// commit it followed.
//
// Files: store_impl.cc (open, recovery, close), store_write.cc (the write
// path; the commit protocols are commit/'s), store_read.cc (reads),
// store_snapshot.cc (snapshots and reads through them), transaction_impl.cc
// (transactions; their commit is a write like any other, checked when it
// is staged), store_image.cc
// (the separator image), store_check.cc (Check), store_copy.cc (CopyTo).
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "pmstore/space/allocator.h"
#include "pmstore/index/leaf_index.h"
#include "pmstore/persist/persist_site.h"
#include "pmstore/db/pin_registry.h"
#include "pmstore/pool/pool.h"
#include "pmstore/share/lock_region.h"
#include "pmstore/format/record.h"
#include "pmstore/format/redo_log.h"
#include "pmstore/db/reader_gate.h"
#include "pmstore/commit/committer.h"
#include "pmstore/env/fork_generation.h"
#include "pmstore/db/snapshot_list.h"
#include "pmstore/txn/transaction.h"
#include "pmstore/store.h"

namespace pmstore {

class SnapshotImpl;
class TransactionImpl;

class StoreImpl final : public Store {
 public:
  // Open with a chosen persistence seam (tests model the CPU cache with it,
  // or a device that fails) and operating system seam (tests fail its
  // system calls); a copy's destination gets the same `env`.
  static absl::StatusOr<std::unique_ptr<StoreImpl>> OpenWith(const std::string& path, const Options& options,
                                                             internal::PersisterFactory make_persister,
                                                             env::Env* env = env::Env::Default());
  ~StoreImpl() override;
  using Store::Delete;  // the overloads with default options
  using Store::Get;
  using Store::Put;
  using Store::Write;
  using Store::CopyTo;
  using Store::BeginTransaction;

  absl::Status Put(const WriteOptions& options, std::string_view key, std::string_view value) override;
  absl::Status Delete(const WriteOptions& options, std::string_view key) override;
  absl::Status Write(const WriteOptions& options, const WriteBatch& batch) override;
  absl::Status Get(const ReadOptions& options, std::string_view key, std::string* value) override;
  absl::Status Get(const ReadOptions& options, std::string_view key, PinnedValue* pinned) override;
  std::vector<absl::Status> MultiGet(const ReadOptions& options, std::span<const std::string_view> keys,
                                     std::vector<std::string>* values) override;
  void MultiGet(const ReadOptions& options, size_t count, const std::string_view* keys, PinnedValue* values,
                absl::Status* statuses) override;
  absl::StatusOr<bool> Contains(std::string_view key) override;
  std::unique_ptr<Iterator> NewIterator(const ReadOptions& options, const IterateOptions& range) override;
  std::unique_ptr<Snapshot> GetSnapshot() override;
  std::unique_ptr<Transaction> BeginTransaction(const TransactionOptions& options) override;
  absl::Status Sync() override;
  absl::Status Close() override;
  Stats GetStats() override;
  CheckReport CheckNow() override;
  // store_copy.cc
  absl::Status CopyTo(const ReadOptions& options, const std::string& dest_path,
                      const CopyProgress& progress) override;

  // An entry an iterator hands out: views into the mapped pool, valid
  // while the snapshot it was read at lives (that snapshot pins its
  // records' space, and the mapping never moves).
  struct ScanEntry {
    std::string_view key;
    std::string_view value;
  };
  // For iterators: up to `max_entries` entries in range as of `snapshot`,
  // in the walk's order from `start` (forward or backward). *end: nothing
  // further that way.
  absl::Status ScanBatch(const Snapshot& snapshot, const internal::SnapshotList::Start& start,
                         const IterateOptions& range, size_t max_entries, std::vector<ScanEntry>* out, bool* end);

  // --- transactions (transaction_impl.cc; the commit in store_write.cc) ---
  // Commits `transaction`'s staged writes as one write, once its
  // Validate passes with the writer's turn held.
  absl::Status CommitTransaction(const WriteOptions& options, const TransactionImpl& transaction);
  // InvalidArgument, naming the pool, for a key over kMaxKeySize.
  absl::Status CheckKey(std::string_view key) const;

  // --- snapshots (store_snapshot.cc) ---
  // What a SnapshotImpl's destructor calls.
  void ReleaseSnapshot(internal::SnapshotList::Handle handle, uint64_t pin_id);
  // At the store's destruction: the live snapshots forget it.
  void DetachSnapshots();
  // DetachSnapshots in a forked child, without the gate.
  void ForgetSnapshotsInChild();

 protected:
  WriteOptions DefaultWrite() const override { return WriteOptions{default_sync_}; }

 private:
  // One operation of a write: Put and Delete make one, a WriteBatch one per
  // entry; all go through WriteOps.
  struct Op {
    WriteBatch::OpKind kind;
    std::string_view key;
    std::string_view value;
  };
  // The ops of one write (a Put, a Delete, a WriteBatch's, a
  // transaction's, which must still be valid when it is staged).
  struct Ops {
    const Op* ops;
    size_t count;
    const TransactionImpl* transaction = nullptr;
  };
  // A durable write waiting for its turn (group commit).
  struct Waiter {
    Ops ops;
    absl::Status status;
    bool done = false;
    std::condition_variable wake;
  };

  // --- reads through snapshots (store_snapshot.cc) ---
  // InvalidArgument when options.snapshot is another store's.
  absl::Status CheckSnapshot(const ReadOptions& options) const;
  // The record of `key` as `options` sees it (0: absent).
  uint64_t LookupAt(const ReadOptions& options, std::string_view key) const ABSL_SHARED_LOCKS_REQUIRED(mu_);
  // The last commit a read with `options` sees, for the pin of a value it
  // returns: the snapshot's, else the latest.
  uint64_t SeenSeq(const ReadOptions& options) const ABSL_SHARED_LOCKS_REQUIRED(mu_);
  // With the writers' turn held, after `writes` were committed (or
  // refused): releases the snapshots of the transactions among them that
  // no iterator reads through, which would otherwise each take the turn
  // again to do so (with two writing threads, a hand-over each).
  void ReleaseTransactionSnapshots(const Ops* writes, size_t count) ABSL_EXCLUSIVE_LOCKS_REQUIRED(write_mu_);
  // What both releases do with the turn held: the snapshot leaves the
  // overlays and its pin goes.
  void ForgetSnapshot(internal::SnapshotList::Handle handle, uint64_t pin_id) ABSL_EXCLUSIVE_LOCKS_REQUIRED(write_mu_);
  // ScanBatch's walk as of `snapshot`: the index's records merged with
  // the overlays from it on, in key order (or its reverse) from `start`;
  // `take` gets each record until it returns false. DataLoss when a
  // record is damaged.
  absl::Status ScanAt(const SnapshotImpl& snapshot, const internal::SnapshotList::Start& start,
                      const std::function<bool(const internal::RecordView&)>& take) const
      ABSL_SHARED_LOCKS_REQUIRED(mu_);

  // --- reads (store_read.cc) ---
  // The value of the record at `record` (0: NotFound), checked as
  // `options` asks.
  absl::Status ReadValue(const ReadOptions& options, uint64_t record, internal::RecordView* view) const
      ABSL_SHARED_LOCKS_REQUIRED(mu_);
  // MultiGet's lookups, a chunk of keys per turn of the read lock:
  // statuses[i] for keys[i], and take(i, value, seen_seq) under the lock
  // for each key found (seen_seq: the last commit it could see, for a pin).
  // `take_pins` as ReadFollowing's.
  template <typename Take>
  void MultiGetWith(const ReadOptions& options, size_t count, const std::string_view* keys, absl::Status* statuses,
                    bool take_pins, Take take);

  StoreImpl(std::unique_ptr<internal::Pool> pool, std::unique_ptr<internal::Persister> persister, bool sync,
            env::Env* env);
  // *in_memory: a read-only open of a file found a crash's commit and
  // recovered it into its private mapping (it may then follow no writer).
  absl::Status Recover(bool* in_memory);

  // --- following a writer of another process (store_follow.cc) ---
  // The open found a writer: what it reads comes from the chain as the
  // writer changes it (a walk), never from the logs, which are the
  // writer's.
  absl::Status JoinWriter() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // The ring holds a commit or a change this open has not followed.
  bool Behind() const ABSL_SHARED_LOCKS_REQUIRED(mu_);
  // Follows the ring to the newest published commit: its separator
  // changes, or a walk of the chain when the ring was overrun, refused a
  // change or says to walk (WalkAgain); the mapping grows with the pool.
  absl::Status Follow() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  absl::Status WalkAgain() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Before a follower's read call takes the gate: Follow when Behind,
  // holding the writers' turn and the gate.
  absl::Status CatchUp() ABSL_LOCKS_EXCLUDED(write_mu_, mu_);
  // The root as some commit left it (read again while the writer's apply
  // tears it), with the mapping grown to the chunks it names.
  absl::StatusOr<internal::Root> FollowRoot() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // The newest commit this open has followed, as the follower's reads
  // and snapshots see it.
  void Followed(std::optional<uint64_t> commit, internal::ChangeRing::Cursor cursor, uint64_t key_count)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // A follower's allocator view (Stats, Check): caught up, then the
  // bitmaps loaded as they are now, which the writer's process owns.
  void LoadWritersSpace() ABSL_LOCKS_EXCLUDED(write_mu_, mu_);
  // OK unless the pool was recovered in place (ChangeRing::CountRecovery)
  // after a follower's `snapshot` began: then Aborted, which its reads
  // return once they have read (the check comes after the reads).
  absl::Status CheckNotRecoveredSince(const SnapshotImpl& snapshot) const;
  // A follower's point read of `key` as `options` sees it: `take` gets
  // the value, and the commit it was read at, while the read's pin (or a
  // quiet pool) holds the value's space; NotFound when it is absent.
  // `take_pins`: take pins the value for later use (then it is called
  // once); else it copies it, and may be called again for a read retried.
  absl::Status ReadFollowing(const ReadOptions& options, std::string_view key, bool take_pins,
                             const std::function<void(std::string_view value, uint64_t seen)>& take)
      ABSL_LOCKS_EXCLUDED(write_mu_, mu_);

  // --- the write path (store_write.cc) ---
  absl::Status WriteOps(const WriteOptions& options, const Ops& write);
  // Where a commit costs a system call (page granularity: an msync), a
  // durable write joins the queue; its head writes every write waiting
  // behind it with its own, as one commit, and each is acknowledged once
  // that commit is durable.
  absl::Status WriteInGroup(const Ops& ops) ABSL_LOCKS_EXCLUDED(write_mu_);
  // `writes`, as one commit made by the protocol `sync` chooses.
  absl::Status WriteTogether(bool sync, const Ops* writes, size_t count) ABSL_EXCLUSIVE_LOCKS_REQUIRED(write_mu_);
  absl::Status Stage(const Ops* writes, size_t count) ABSL_EXCLUSIVE_LOCKS_REQUIRED(write_mu_, mu_);
  absl::Status StagePut(std::string_view key, std::string_view value) ABSL_EXCLUSIVE_LOCKS_REQUIRED(write_mu_, mu_);
  absl::Status StageDelete(std::string_view key) ABSL_EXCLUSIVE_LOCKS_REQUIRED(write_mu_, mu_);
  void StageRoot() ABSL_EXCLUSIVE_LOCKS_REQUIRED(write_mu_, mu_);
  // Commits the staged transaction by the protocol `sync` chooses and
  // applies it. Not OK: nothing of it was applied (the caller abandons it).
  absl::Status Commit(bool sync) ABSL_EXCLUSIVE_LOCKS_REQUIRED(write_mu_, mu_);
  void Apply() ABSL_EXCLUSIVE_LOCKS_REQUIRED(write_mu_, mu_);
  void Abandon() ABSL_EXCLUSIVE_LOCKS_REQUIRED(write_mu_, mu_);
  // After a failed try: OK when a second try may succeed (the unsynced run
  // ended, empty chunks were reclaimed; *sync: make it a durable commit),
  // else the status to return.
  absl::Status MakeRoom(const absl::Status& failure, bool* sync) ABSL_EXCLUSIVE_LOCKS_REQUIRED(write_mu_, mu_);
  absl::StatusOr<uint64_t> Grow(uint64_t chunks) ABSL_EXCLUSIVE_LOCKS_REQUIRED(write_mu_, mu_);
  // For a write that found the pool full: releases the space that pins
  // held back and hold no more. The pins of other processes are read only
  // at commits, and a write that finds the pool full makes none; and when
  // a pin older than the last commit holds space back, the reader table's
  // slots of dead processes are freed first (LMDB's writer runs
  // mdb_reader_check). Whether any space came back.
  bool ReclaimHeldSpace() ABSL_EXCLUSIVE_LOCKS_REQUIRED(write_mu_, mu_);
  // Everything written so far durable, without keeping readers out: ends
  // the unsynced run, or else flushes the last commit's applied lines
  // (Sync, Close).
  absl::Status MakeDurable(internal::PersistSite applied_site, internal::PersistSite drain_site)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(write_mu_);
  // Tells the other processes that have the pool open about commit `seq`,
  // just applied: the separators it changed, through the change ring, then
  // the commit itself (doc/FORMAT.md, "Many processes on one pool"); and
  // this open's newest commit, in its slot.
  void PublishCommit(uint64_t seq) ABSL_EXCLUSIVE_LOCKS_REQUIRED(write_mu_, mu_);
  // Space the allocator quarantines (leaf cells included), freed by
  // commits <= seq, becomes reusable once no pin, snapshot or unsynced run
  // may still read it.
  void ReleaseSpaceThrough(uint64_t seq) ABSL_EXCLUSIVE_LOCKS_REQUIRED(write_mu_, mu_);

  // --- the separator image (store_image.cc, doc/FORMAT.md "Separator image") ---
  // At a clean close: writes the image of the index and commits it, unless
  // the index was opened from one and is unchanged. A full pool closes
  // without one; a persistence failure poisons the store and is returned.
  absl::Status WriteSeparatorImage() ABSL_EXCLUSIVE_LOCKS_REQUIRED(write_mu_);
  // Before the first change to the index: leaves the image (the leaves
  // no read has checked are checked when first used), and frees it in
  // this transaction when the root names one.
  absl::Status DropSeparatorImage() ABSL_EXCLUSIVE_LOCKS_REQUIRED(write_mu_, mu_);
  // After an open from the image, the allocator's view is loaded when
  // first needed (a write, Stats, Check), not by open: it reads every
  // chunk's bitmap, a page fault each (12 ms of a 22 ms open at 10 M keys).
  void LoadSpace() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // LoadSpace unless done, taking the writers' turn and the gate
  // exclusively for it.
  void EnsureSpaceLoaded() ABSL_LOCKS_EXCLUDED(write_mu_, mu_);

  // --- failures ---
  // OK when writes are accepted; else why not (closed, or poisoned).
  absl::Status Writable() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(write_mu_);
  // FailedPrecondition naming the file, for calls after Close.
  absl::Status ClosedError() const;
  // The pool file's permission bits (a device's too), which CopyTo gives
  // the copy.
  absl::StatusOr<mode_t> PermissionBits() ABSL_LOCKS_EXCLUDED(mu_);
  // CopyTo onto a device DAX device: the pool is hidden
  // (SetDevicePoolVisible) from its create until the copy is durable.
  absl::Status CopyOntoDevice(Iterator& source, const std::string& device, const Options& create,
                              const CopyProgress& progress);
  absl::Status SetDevicePoolVisible(bool visible);
  // In a child forked after the open, every call fails (ForkedError) and
  // changes nothing: the mapping, the file's lock and the locks' states
  // are the parent's, which goes on using them (LMDB's rule: an
  // environment must not be used across fork). Checked before any lock is
  // taken, since a lock a thread of the parent held at the fork stays
  // held in the child.
  bool Forked() const { return env::ForkGeneration() != fork_generation_; }
  absl::Status ForkedError() const;

  const std::string path_;
  env::Env* const env_;
  const uint64_t fork_generation_ = env::CountForks();  // at the open
  std::unique_ptr<internal::Pool> pool_;  // released by Close
  // This open's slot in the pool's reader table (pmstore readers); null
  // when the lock region could not be reached. Released by Close.
  std::unique_ptr<internal::ReaderSlot> reader_slot_;
  // The pool's change ring, in reader_slot_'s mapping: a writable open
  // publishes its commits there, a follower reads them. Empty without
  // reader_slot_, and for a read-only open that follows no writer.
  std::optional<internal::ChangeRing> change_ring_;
  // The pool's writer turn across processes (share/cross_process_turn.h),
  // for an open that shares the pool through the region: a writer holds it
  // while it recovers the pool and for each commit, a follower's check
  // for as long as it checks, so that the check sees one commit. Empty
  // for an exclusive open (nobody to take turns with).
  std::optional<internal::CrossProcessTurn> region_turn_;
  // The pool's leaf image ring (share/leaf_image_ring.h), likewise: a
  // writer records the leaves each commit changes, a follower's snapshots
  // and scans read them as they were.
  std::optional<internal::LeafImageRing> leaf_images_;
  const internal::LeafImageRing* leaf_images() const { return leaf_images_.has_value() ? &*leaf_images_ : nullptr; }
  internal::CrossProcessTurn* region_turn() { return region_turn_.has_value() ? &*region_turn_ : nullptr; }
  // A read-only open that shares the pool with writers (set by OpenWith).
  bool following_ = false;
  // What a follower has followed: the ring's newest published commit and
  // the cursor after its changes.
  std::optional<uint64_t> followed_ ABSL_GUARDED_BY(mu_);
  internal::ChangeRing::Cursor follow_cursor_ ABSL_GUARDED_BY(mu_);
  std::unique_ptr<internal::Persister> persister_;
  const bool default_sync_;
  char* const base_;

  internal::WriterTurn write_mu_;  // held for the whole of a write, Sync, Close
  // The durable writes waiting for their turn, oldest first (WriteInGroup);
  // guarded by queue_mu_.
  std::mutex queue_mu_;
  std::deque<Waiter*> queue_;
  // How many writers the last group had or saw queue behind it, and how
  // long its commit took: what the next head waits for, and at most how
  // long (guarded by queue_mu_).
  size_t group_writers_ = 1;
  std::chrono::steady_clock::duration commit_time_{};
  // Whether a commit costs an msync: then durable writes commit in groups.
  const bool group_commits_;
  internal::ReaderGate mu_;
  internal::SpaceAllocator alloc_ ABSL_GUARDED_BY(mu_);
  internal::LeafIndex index_ ABSL_GUARDED_BY(mu_);
  internal::Transaction tx_ ABSL_GUARDED_BY(write_mu_);
  // The commit protocols. The writer's (write_mu_); its sequence numbers
  // change only while the gate is held exclusively, so readers holding it
  // shared read last_seq() and next_seq().
  internal::Committer committer_;
  uint64_t key_count_ ABSL_GUARDED_BY(mu_) = 0;
  int64_t key_delta_ ABSL_GUARDED_BY(write_mu_) = 0;
  bool closed_ ABSL_GUARDED_BY(mu_) = false;
  absl::Status close_status_ ABSL_GUARDED_BY(write_mu_);
  PinRegistry pins_;

  // The separator image the committed root names (0: none), and whether
  // this open found the leaves through it.
  uint64_t separator_image_ ABSL_GUARDED_BY(mu_) = 0;
  bool opened_from_image_ = false;  // set by Recover only
  std::atomic<bool> space_loaded_{false};  // alloc_ holds the pool's chunk table and bitmaps

  internal::SnapshotList snapshots_ ABSL_GUARDED_BY(mu_);
};

// The Snapshot GetSnapshot returns: a place in the store's list and a pin.
class SnapshotImpl final : public Snapshot {
 public:
  SnapshotImpl(StoreImpl* store, uint64_t seq, uint64_t pin_id) : store_(store), seq_(seq), pin_id_(pin_id) {}
  ~SnapshotImpl() override {
    if (store_ != nullptr) store_->ReleaseSnapshot(handle_, pin_id_);
  }
  uint64_t sequence() const override { return seq_; }
  const StoreImpl* store() const { return store_; }
  internal::SnapshotList::Handle handle() const { return handle_; }

 private:
  friend class StoreImpl;
  // Set once, by GetSnapshot, before anyone else sees this snapshot.
  internal::SnapshotList::Handle handle_;
  // A follower's: the pool's recoveries in place when it began
  // (kUnknownRecoveries: it began during one).
  static constexpr uint64_t kUnknownRecoveries = UINT64_MAX;
  uint64_t recoveries_ = 0;
  // nullptr once the store is destroyed: an iterator destroyed after its
  // store (which iterator.h forbids, but which was harmless before
  // iterators took snapshots) must not reach into it.
  StoreImpl* store_;
  const uint64_t seq_;
  const uint64_t pin_id_;
};

}  // namespace pmstore
