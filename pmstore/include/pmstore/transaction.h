// A read-write transaction (LMDB's write transaction, RocksDB's
// OptimisticTransactionDB): reads that see the transaction's own writes
// over the state it began from, and writes that commit atomically, or
// not at all when another commit changed what the transaction read.
//
//   for (int attempt = 0; attempt < 10; ++attempt) {
//     std::unique_ptr<pmstore::Transaction> t = store->BeginTransaction();
//     std::string balance;
//     absl::Status s = t->Get("acct/1", &balance);
//     if (!s.ok() && !absl::IsNotFound(s)) return s;
//     s = t->Put("acct/1", Add(balance, 100));
//     if (s.ok()) s = t->Commit();
//     if (!absl::IsAborted(s)) return s;  // Aborted: someone else won; retry
//   }
//
// State. A transaction begins at the state after the last acknowledged
// commit, and reads it as a snapshot does (snapshot.h; it holds one, with
// its costs, until it ends). Put, Delete and Write stage writes in memory
// only; Get and iterators see them over that state. Commit applies them
// as one commit, as Store::Write applies a batch: all or nothing, durable
// on return when WriteOptions::sync (the store's default otherwise), and
// in a group commit with other writers where the store commits in groups.
// Rollback, or destroying the transaction, drops them.
//
// Conflicts (optimistic, checked once, at Commit). Commit returns Aborted,
// and changes nothing, when any key the transaction read or wrote was
// changed by another commit since the transaction began: a Put or Delete
// of a key that Get returned (or found absent) or that an iterator landed
// on, or a change to a key it writes. This is stricter than RocksDB's
// optimistic transactions, which check written keys only (and reads made
// with GetForUpdate): here every read counts, so a committed transaction's
// reads were all still current when it committed, and two transactions
// that each read what the other writes cannot both commit (no write skew).
// What does not count:
//   - phantoms: an iterator's range is not a read, only the keys it lands
//     on are; a key that another commit adds inside a range the
//     transaction iterated, between keys it saw, does not abort it (lock
//     such a range with a key of your own, read and written, when that
//     matters);
//   - keys the transaction wrote before reading them (the read returns its
//     own write, which no other commit can change);
//   - a Delete by another commit of a key that was already absent.
// A failed write of another thread never causes a conflict. Validation
// costs one lookup per read or written key in the store's snapshot
// overlays, made while the commit holds the writer's turn.
//
// A transaction ends with Commit (whatever it returns) or Rollback; every
// call after that returns FailedPrecondition. Begin a new one to retry.
// A transaction with no writes commits without taking the writer's turn
// (its reads came from one snapshot, so they are consistent).
//
// Thread-compatible: one transaction per thread (any number of threads may
// each have their own open at once). It must be destroyed before the
// store, and its iterators before it (they may outlive its end, and go on
// reading what it saw).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "pmstore/iterator.h"
#include "pmstore/options.h"
#include "pmstore/write_batch.h"

namespace pmstore {

struct TransactionOptions {
  // Verify the record's checksum on every read (ReadOptions's).
  bool verify_checksums = false;
};

class Transaction {
 public:
  // Rolls back a transaction that did not end.
  virtual ~Transaction() = default;
  Transaction(const Transaction&) = delete;
  Transaction& operator=(const Transaction&) = delete;

  // The key's value: the transaction's own write when it made one, else
  // the state it began from (then the key counts as read). NotFound when
  // absent, as Store::Get.
  virtual absl::Status Get(std::string_view key, std::string* value) = 0;
  // Staged until Commit; the same checks as Store::Put and Delete
  // (InvalidArgument for a key over kMaxKeySize).
  virtual absl::Status Put(std::string_view key, std::string_view value) = 0;
  virtual absl::Status Delete(std::string_view key) = 0;
  // Stages every operation of `batch`, in order.
  virtual absl::Status Write(const WriteBatch& batch) = 0;

  // The keys of `range` as this transaction sees them: the state it began
  // from with its writes made so far laid over it (later writes are not
  // seen by this iterator). Each key it lands on that is not the
  // transaction's own write counts as read. Next and Prev mix freely.
  virtual std::unique_ptr<Iterator> NewIterator(const IterateOptions& range) = 0;

  // Commits the staged writes as one commit (Aborted on a conflict, see
  // above; the store's write errors otherwise). Ends the transaction.
  virtual absl::Status Commit(const WriteOptions& options) = 0;
  absl::Status Commit() { return Commit(DefaultWrite()); }
  // Drops the staged writes and ends the transaction.
  virtual void Rollback() = 0;

  // The sequence of the commit the transaction began from (Snapshot's).
  virtual uint64_t begin_sequence() const = 0;
  // Writes staged so far (later writes to the same key count once).
  virtual size_t staged_writes() const = 0;

 protected:
  Transaction() = default;
  virtual WriteOptions DefaultWrite() const = 0;
};

}  // namespace pmstore
