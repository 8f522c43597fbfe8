// The store: one pool, its allocator and index, one writer at a time.
//
// Locking: mu_ (a ReaderGate) is held shared by readers (Get, Contains, iterator refills,
// Stats, Check) and exclusively by writers for the whole of a write, from
// building the transaction to applying it. Readers therefore never see a
// half-applied commit and never block one another.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "pmstore/src/allocator.h"
#include "pmstore/src/leaf_index.h"
#include "pmstore/src/pin_registry.h"
#include "pmstore/src/pool.h"
#include "pmstore/src/reader_gate.h"
#include "pmstore/src/transaction.h"
#include "pmstore/store.h"

namespace pmstore {

class StoreImpl final : public Store {
 public:
  // Open with a chosen persistence seam (tests model the CPU cache with it).
  static absl::StatusOr<std::unique_ptr<StoreImpl>> OpenWith(const std::string& path, const Options& options,
                                                             internal::PersisterFactory make_persister);
  ~StoreImpl() override;
  using Store::Delete;  // the overloads with default options
  using Store::Get;
  using Store::Put;
  using Store::Write;

  absl::Status Put(const WriteOptions& options, std::string_view key, std::string_view value) override;
  absl::Status Delete(const WriteOptions& options, std::string_view key) override;
  absl::Status Write(const WriteOptions& options, const WriteBatch& batch) override;
  absl::Status Get(const ReadOptions& options, std::string_view key, std::string* value) override;
  absl::Status Get(const ReadOptions& options, std::string_view key, PinnedValue* pinned) override;
  absl::StatusOr<bool> Contains(std::string_view key) override;
  std::unique_ptr<Iterator> NewIterator(const ReadOptions& options, const IterateOptions& range) override;
  absl::Status Sync() override;
  Stats GetStats() override;
  CheckReport CheckNow() override;

  // Entries copied for an iterator: keys and values back to back in
  // `bytes`, (key offset, key size, value size) per entry.
  struct ScanBuffer {
    std::string bytes;
    struct Entry {
      size_t offset;
      uint32_t key_size;
      uint64_t value_size;
    };
    std::vector<Entry> entries;
  };
  // For iterators: copies up to `max_entries` entries (or about
  // `max_bytes`) in range, from the first key >= target (> target when
  // `after`). *end: nothing further.
  absl::Status ScanBatch(const std::string& target, bool after, const IterateOptions& range, size_t max_entries,
                         size_t max_bytes, ScanBuffer* out, bool* end);

 protected:
  WriteOptions DefaultWrite() const override { return WriteOptions{default_sync_}; }

 private:
  StoreImpl(std::unique_ptr<internal::Pool> pool, std::unique_ptr<internal::Persister> persister, bool sync);
  absl::Status Recover();

  absl::Status StagePut(std::string_view key, std::string_view value) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void StageDelete(std::string_view key) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  absl::Status StageBatch(const WriteBatch& batch) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  absl::StatusOr<uint64_t> WriteRecord(std::string_view key, std::string_view value) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void FreeRecord(uint64_t record) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void StageRoot() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  absl::Status Commit(bool sync) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void Abandon() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // A commit of its own that frees empty small chunks; false when none.
  bool ReclaimEmptyChunks() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void MarkUnsynced(uint64_t offset, uint64_t size) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void FlushUnsynced() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  absl::StatusOr<uint64_t> Grow(uint64_t chunks) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  std::unique_ptr<internal::Pool> pool_;
  std::unique_ptr<internal::Persister> persister_;
  const bool default_sync_;
  char* const base_;

  internal::ReaderGate mu_;
  internal::SpaceAllocator alloc_ ABSL_GUARDED_BY(mu_);
  internal::LeafIndex index_ ABSL_GUARDED_BY(mu_);
  internal::Transaction tx_ ABSL_GUARDED_BY(mu_);
  std::vector<internal::LogEntry> log_entries_ ABSL_GUARDED_BY(mu_);  // Commit's, kept for its capacity
  uint64_t next_seq_ ABSL_GUARDED_BY(mu_) = 1;
  uint64_t key_count_ ABSL_GUARDED_BY(mu_) = 0;
  int64_t key_delta_ ABSL_GUARDED_BY(mu_) = 0;
  // Lines applied by the last commit, not yet flushed: the next commit
  // flushes them before its commit fence (as does Sync, or close).
  std::vector<uint64_t> unfenced_lines_ ABSL_GUARDED_BY(mu_);
  // Pages written by sync=false commits, one bit each.
  std::vector<uint64_t> unsynced_pages_ ABSL_GUARDED_BY(mu_);
  bool any_unsynced_ ABSL_GUARDED_BY(mu_) = false;
  PinRegistry pins_;
};

}  // namespace pmstore
