// Opening, recovery and closing (writes are in store_write.cc, reads in
// store_read.cc).
#include "pmstore/db/store_impl.h"

#include <sys/stat.h>

#include <algorithm>
#include <cstdio>

#include "absl/strings/str_cat.h"
#include "pmstore/base/status_macros.h"
#include "pmstore/index/separator_change.h"

namespace pmstore {
namespace {

mapping::Granularity MappingGranularity(Granularity granularity) {
  switch (granularity) {
    case Granularity::kByte: return mapping::Granularity::kByte;
    case Granularity::kCacheLine: return mapping::Granularity::kCacheLine;
    case Granularity::kPage: return mapping::Granularity::kPage;
  }
  return mapping::Granularity::kPage;
}

internal::PoolOptions PoolOptionsOf(const Options& options) {
  internal::PoolOptions pool;
  pool.create_if_missing = options.create_if_missing;
  pool.error_if_exists = options.error_if_exists;
  pool.initial_size = options.initial_size;
  pool.max_size = options.max_size;
  pool.required_granularity = MappingGranularity(options.required_granularity);
  pool.read_only = options.read_only;
  pool.exclusive = options.exclusive;
  pool.mode = options.mode;
  return pool;
}

}  // namespace

absl::StatusOr<std::unique_ptr<Store>> Store::Open(const std::string& path, const Options& options) {
  auto store = StoreImpl::OpenWith(path, options, &internal::MakeMappingPersister);
  if (!store.ok()) return store.status();
  return std::unique_ptr<Store>(std::move(*store));
}

absl::Status Store::Destroy(const std::string& path) {
  env::Env* env = env::Env::Default();
  struct stat st;
  const bool named = env->Stat(path, &st) == 0;  // the region is named for the pool's inode
  PMSTORE_RETURN_IF_ERROR(internal::DestroyPool(path, &internal::MakeMappingPersister, env));
  // A region left by processes that died with the pool open would stay in
  // /dev/shm until a reboot: nothing opens this pool again. Best effort:
  // the pool is gone, which is what was asked.
  if (named) internal::RemoveLeftoverRegion(env, st).IgnoreError();
  return absl::OkStatus();
}

absl::StatusOr<std::unique_ptr<StoreImpl>> StoreImpl::OpenWith(const std::string& path, const Options& options,
                                                               internal::PersisterFactory make_persister,
                                                               env::Env* env) {
  std::unique_ptr<internal::Persister> persister;
  internal::PoolOptions pool_options = PoolOptionsOf(options);
  pool_options.env = env;
  PMSTORE_ASSIGN_OR_RETURN(auto pool, internal::OpenPool(path, pool_options, make_persister, &persister));
  std::unique_ptr<StoreImpl> store(new StoreImpl(std::move(pool), std::move(persister), options.sync, env));
  // Until it is open, nothing of it is to be persisted at destruction.
  store->closed_ = true;
  internal::Pool& opened = *store->pool_;
  const internal::LockKind lock_kind = internal::LockKindOf(pool_options);
  // Listed in the pool's reader table, where the lock region can be
  // reached (doc/STORE.md, "Who has a pool open"). The operating system
  // itself, not `env`: a test's injected failures are meant for the pool
  // file. The region also carries what a writer publishes and read-only
  // opens follow; without it, they cannot share the pool.
  auto slot = internal::ReaderSlot::Attach(env::Env::Default(), opened.file->fd(), !options.read_only);
  if (slot.ok()) {
    store->reader_slot_ = std::move(*slot);
    store->change_ring_.emplace(store->reader_slot_->change_ring());
    if (lock_kind == internal::LockKind::kWriter || lock_kind == internal::LockKind::kReader) {
      store->region_turn_.emplace(store->reader_slot_->cross_process_turn());
      store->leaf_images_.emplace(store->reader_slot_->leaf_images());
    }
  } else if (lock_kind == internal::LockKind::kWriter) {
    PMSTORE_RETURN_IF_ERROR(opened.lock.ShutOutReaders(env, opened.file->fd(), path));
  } else if (lock_kind == internal::LockKind::kReader && opened.lock.writer_present()) {
    return absl::FailedPreconditionError(
        absl::StrCat(path,
                     ": a process has the pool open for writing, and this read-only open cannot follow its commits "
                     "without the pool's lock region: ",
                     slot.status().message()));
  }
  // A read-only open follows writers unless it is alone with the pool: an
  // exclusive one, one without the region, one that recovered a crash's
  // commit into its private mapping (which would no longer follow the
  // file where recovery wrote it).
  store->following_ = lock_kind == internal::LockKind::kReader && store->change_ring_.has_value();
  // A writer recovers the pool and publishes what it found holding the
  // writers' turn: a check of another process sees no recovery half done.
  std::optional<internal::TurnHeld> turn;
  if (!options.read_only) {
    turn.emplace(store->region_turn());
    PMSTORE_RETURN_IF_ERROR(turn->status());
  }
  bool in_memory = false;
  PMSTORE_RETURN_IF_ERROR(internal::WithPath(store->Recover(&in_memory), path));
  if (store->following_ && in_memory) {
    store->following_ = false;
  } else if (store->following_ && !opened.lock.writer_present()) {
    PMSTORE_RETURN_IF_ERROR(opened.lock.AdmitWriters(env, opened.file->fd(), path));
  }
  if (options.read_only && !store->following_) store->change_ring_.reset();
  if (store->reader_slot_ != nullptr) {
    store->pins_.PublishTo(store->reader_slot_.get());
    if (!options.read_only) {
      store->reader_slot_->PublishLastCommit(store->committer_.last_seq());
      // What the other processes follow starts from the commit recovery
      // found; changes a writer that died left staged are dropped first,
      // and followers walk the chain again: what recovery changed in place
      // is in no change.
      store->change_ring_->DropStaged();
      store->change_ring_->Stage(store->committer_.last_seq(), internal::kWalkAgainKind, "").IgnoreError();
      store->change_ring_->Publish(store->committer_.last_seq());
    }
  }
  // Whoever held the turn and died (a writer inside a commit, or a check),
  // this open recovered the pool from it.
  if (turn.has_value() && turn->holder_died()) turn->Recovered();
  turn.reset();
  store->closed_ = false;
  return store;
}

StoreImpl::StoreImpl(std::unique_ptr<internal::Pool> pool, std::unique_ptr<internal::Persister> persister, bool sync,
                     env::Env* env)
    : path_(pool->path),
      env_(env),
      pool_(std::move(pool)),
      persister_(std::move(persister)),
      default_sync_(sync),
      base_(pool_->base()),
      group_commits_(pool_->mapping->granularity() == mapping::Granularity::kPage),
      alloc_(pool_->base(), pool_->superblock,
             [this](uint64_t chunks) ABSL_NO_THREAD_SAFETY_ANALYSIS { return Grow(chunks); }),
      index_(pool_->base(), pool_->superblock.heap_offset, pool_.get()),
      tx_(pool_->base()),
      committer_(pool_->base(), pool_->path, persister_.get(), &alloc_) {}

absl::Status StoreImpl::Recover(bool* in_memory) {
  internal::TurnGuard turn(&write_mu_);
  internal::ExclusiveGuard lock(&mu_);
  // The logs are the writer's: a follower that found one reads the chain.
  if (following_ && pool_->lock.writer_present()) return JoinWriter();
  // An unsynced run cut short goes back to its base commit first; the log
  // then replays that commit.
  uint64_t min_next_seq = 1;
  uint64_t next_seq;
  internal::LogHeader last_record;
  const auto recover_logs = [&](bool verify_only) -> absl::Status {
    PMSTORE_RETURN_IF_ERROR(internal::UndoLog::Recover(pool_->view(), *persister_, &min_next_seq, verify_only));
    return internal::RedoLog::Replay(pool_->view(), pool_->superblock.heap_offset, pool_->leaf_geometry(), *persister_,
                                     &next_seq, &last_record, verify_only);
  };
  // Readers of other processes that follow the pool read no leaf while
  // recovery replays or undoes commits in place, stamping no version word:
  // every leaf reads as busy until the open publishes (OpenWith), or, if
  // this open dies or fails here, until the next writable open does.
  if (change_ring_.has_value() && !pool_->read_only) {
    change_ring_->BeginApplying(internal::kApplyingEveryLeaf);
    // And the snapshots they hold are told when recovery writes anything
    // (a look first, writing nothing): they cannot tell the leaves it
    // changes from their own commit's.
    if (!recover_logs(/*verify_only=*/true).ok()) change_ring_->CountRecovery();
  }
  // A pool mapped without write permission (device DAX, read-only) can
  // only be found to need no recovery. A read-only open of a file looks
  // first, then recovers into its private mapping when it must.
  absl::Status recovered = recover_logs(pool_->read_only);
  if (absl::IsFailedPrecondition(recovered) && pool_->read_only && !pool_->mapped_read_only) {
    min_next_seq = 1;
    recovered = recover_logs(false);
    *in_memory = true;
  }
  PMSTORE_RETURN_IF_ERROR(recovered);
  committer_.Recovered(std::max(next_seq, min_next_seq), last_record);
  PMSTORE_ASSIGN_OR_RETURN(internal::Root root, internal::ReadRoot(*pool_));
  key_count_ = root.key_count;
  separator_image_ = root.separator_image;
  if (following_ && !*in_memory) {
    // Follows from the ring's newest commit on, which no writer changes
    // until this open admits one.
    followed_ = change_ring_->published();
    follow_cursor_ = change_ring_->Now();
  }
  if (separator_image_ != 0) {
    // After a clean close; a stale or damaged image is passed over.
    auto image = internal::SeparatorImage::Open(base_, pool_->length(), separator_image_,
                                                {last_record.seq, root.head_leaf, root.key_count});
    if (image.ok()) {
      index_.UseImage(*image);
      opened_from_image_ = true;
      // A follower's reads go through the map (LeafIndex::LookupFollowing).
      if (following_) index_.LeaveImage();
      return absl::OkStatus();
    }
  }
  LoadSpace();
  return index_.Load(root.head_leaf, pool_->length());
}

absl::Status StoreImpl::Close() {
  if (Forked()) return ForkedError();
  internal::TurnGuard turn(&write_mu_);
  // closed_ changes only with write_mu_ held, so it may be read here
  // without the gate.
  if (ABSL_TS_UNCHECKED_READ(closed_)) return close_status_;
  // A poisoned store returns its first failure: what it acknowledged
  // after that failure may not be durable.
  absl::Status status = committer_.poisoned();
  // A read-only open has nothing to persist: recovery's replay, if any,
  // went to its private mapping and is dropped with it.
  const bool persist = !pool_->read_only;
  if (persist && status.ok()) {
    status = MakeDurable(internal::PersistSite::kCloseAppliedFlush, internal::PersistSite::kCloseDrain);
  }
  if (persist && status.ok()) status = WriteSeparatorImage();
  {
    internal::ExclusiveGuard lock(&mu_);
    closed_ = true;
  }
  // No reader gets past the gate any more: unmap, and unlock the file.
  persister_.reset();
  pool_.reset();
  pins_.PublishTo(nullptr);  // a pin may outlive Close (it then guards nothing)
  change_ring_.reset();
  reader_slot_.reset();
  close_status_ = status;
  return status;
}

StoreImpl::~StoreImpl() {
  DetachSnapshots();
  // A forked child frees its copy (unmapping it), persisting nothing.
  if (Forked()) return;
  bool closed;
  {
    internal::SharedGuard lock(&mu_);
    closed = closed_;
  }
  if (closed) return;
  const absl::Status status = Close();
  if (!status.ok()) {
    std::fprintf(stderr, "pmstore: %s (found while destroying a store that was not closed; Store::Close() returns it)\n",
                 std::string(status.message()).c_str());
  }
}

absl::Status StoreImpl::ForkedError() const {
  return absl::FailedPreconditionError(
      absl::StrCat(path_, ": the store was opened before this process was forked from the one that opened it; a "
                          "store must not be used across fork (open the pool again in this process, after closing "
                          "it in the other, or open it read-only in both)"));
}

absl::Status StoreImpl::ClosedError() const {
  return absl::FailedPreconditionError(absl::StrCat(path_, ": the store is closed"));
}

}  // namespace pmstore
