// The Transaction a store hands out (include/pmstore/transaction.h): a
// snapshot to read from, the staged writes in key order, and the keys
// read, checked at commit against the snapshot overlays, which name every
// key a commit changed since the snapshot (snapshot_list.h).
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>

#include "absl/container/flat_hash_set.h"
#include "pmstore/db/snapshot_list.h"
#include "pmstore/transaction.h"

namespace pmstore {

class SnapshotImpl;
class StoreImpl;

class TransactionImpl final : public Transaction {
 public:
  // Key -> the staged value (nullopt: a delete).
  using Staged = std::map<std::string, std::optional<std::string>, std::less<>>;

  TransactionImpl(StoreImpl* store, std::unique_ptr<Snapshot> snapshot, const TransactionOptions& options,
                  bool default_sync);

  absl::Status Get(std::string_view key, std::string* value) override;
  absl::Status Put(std::string_view key, std::string_view value) override;
  absl::Status Delete(std::string_view key) override;
  absl::Status Write(const WriteBatch& batch) override;
  std::unique_ptr<Iterator> NewIterator(const IterateOptions& range) override;
  using Transaction::Commit;
  absl::Status Commit(const WriteOptions& options) override;
  void Rollback() override;
  uint64_t begin_sequence() const override { return begin_sequence_; }
  size_t staged_writes() const override { return staged_.size(); }

  // For the store's commit, with the writer's turn and the gate held:
  // Aborted when a commit since the snapshot changed a key this
  // transaction read or writes.
  absl::Status Validate(const internal::SnapshotList& snapshots) const;
  const Staged& staged() const { return staged_; }
  // The snapshot, for the store to release within its commit's turn (a
  // turn saved), or nullptr when an iterator of this transaction shares
  // it: an iterator may outlive the commit and read through it.
  SnapshotImpl* SnapshotNoIteratorReads() const;

 protected:
  WriteOptions DefaultWrite() const override { return WriteOptions{default_sync_}; }

 private:
  // FailedPrecondition once the transaction ended.
  absl::Status Open() const;
  // Ends the transaction: drops what it staged and read, and its snapshot
  // (once no iterator of it reads through that).
  void End();

  StoreImpl* const store_;
  // Shared with the transaction's iterators, which may outlive its end.
  std::shared_ptr<Snapshot> snapshot_;
  const uint64_t begin_sequence_;
  ReadOptions read_options_;  // at snapshot_
  const bool default_sync_;
  Staged staged_;
  absl::flat_hash_set<std::string> read_;  // keys read from the snapshot
  bool made_iterator_ = false;
  bool ended_ = false;
};

}  // namespace pmstore
