// pmstore.Transaction: Store.transaction()'s result, one attempt at a
// read-write transaction (pmstore/transaction.h), with the store's mapping
// reads and writes; and Store.transact(), which retries a function in
// fresh transactions until one commits.
//
// Ends. commit() or rollback() (or the end of a `with` block) ends the
// transaction and lets go of the C++ one at once, so its snapshot does not
// hold space; every later call raises FailedPreconditionError (rollback()
// excepted: it may end a transaction that already ended, for `finally`),
// and so does next() on an iterator made through it.
//
// Lifetimes, as for the Store's other handouts: a Transaction holds a
// strong reference to its Store, and its iterators one to it.
// Store.close() rolls back every open Transaction (then ValueError, as for
// a snapshot), so closing with one alive is fine.
//
// Threads and the GIL. Reads and staged writes keep the GIL (they touch
// memory only, as the store's reads do); commit lets go of it where the
// store's writes do (store_object.h). A Transaction is for one thread at
// a time, as the C++ one is: its ended flag is set before commit lets go
// of the GIL, so another thread's call meanwhile raises instead of racing.
#pragma once

#include <pybind11/pybind11.h>

#include <memory>
#include <optional>
#include <set>

#include "pmstore/python/store_object.h"
#include "pmstore/store.h"
#include "pmstore/transaction.h"

namespace pmstore::python {

namespace py = pybind11;

// Store.transact()'s default retries: ten conflicts in a row are no longer
// chance collisions but contention on the same keys, which more attempts
// only prolong; better raised to the caller.
inline constexpr int kTransactRetries = 10;

// How Store.transaction() and Store.transact() begin one.
struct TransactionArgs {
  bool verify_checksums = false;
  std::optional<bool> sync;  // commit's default; None: the store's
};

class PyTransaction {
 public:
  PyTransaction(py::object owner, const TransactionArgs& args);
  ~PyTransaction();
  PyTransaction(const PyTransaction&) = delete;
  PyTransaction& operator=(const PyTransaction&) = delete;

  // The mapping protocol, as the Store's: KeyError for a missing key.
  py::object GetItem(py::handle key);
  py::object Get(py::handle key, py::object fallback);
  bool Contains(py::handle key);
  void Put(py::handle key, py::handle value);
  void Delete(py::handle key);  // absent is fine
  void DelItem(py::handle key);  // KeyError when absent (and then reads it)
  // keys()/values()/items(): the iterator of `self` (this transaction).
  static py::object Iterate(py::object self, IterateOptions range, PyIterator::Yield yield, bool empty,
                            bool reverse);

  // Ends the transaction: raises pmstore.Aborted on a conflict, and the
  // store's write errors otherwise.
  void Commit(std::optional<bool> sync);
  void Rollback();
  // __exit__: commits on a clean exit, rolls back when the block raised
  // (never swallowing it); nothing when the block ended it already.
  bool Exit(py::handle exception_type);
  // The store is closing: roll back now.
  void End();

  bool ended() const { return ended_ || ended_by_close_; }
  uint64_t begin_sequence() const { return Live().begin_sequence(); }
  size_t staged_writes() const { return Live().staged_writes(); }
  py::object owner() const { return owner_; }

  void AddIterator(PyIterator* iterator) { iterators_.insert(iterator); }
  void RemoveIterator(PyIterator* iterator) { iterators_.erase(iterator); }

 private:
  // The C++ transaction; ValueError once the store closed it,
  // FailedPreconditionError once it ended.
  Transaction& Live() const;
  // The value as bytes, or a null object when it is absent.
  py::object Lookup(py::handle key);
  // Marks the end and takes the C++ transaction out, after its iterators.
  std::unique_ptr<Transaction> Finish();

  py::object owner_;  // the Store: first declared, last released
  PyStore* store_;
  std::unique_ptr<Transaction> transaction_;
  std::optional<bool> sync_;
  bool ended_ = false;
  bool ended_by_close_ = false;
  std::set<PyIterator*> iterators_;
};

// Store.transact(fn, retries): fn(t) in a fresh transaction, committed,
// until an attempt is not aborted (at most retries + 1 attempts); fn's
// result. Any other exception propagates after the rollback.
py::object Transact(py::object store, py::object fn, int retries, const TransactionArgs& args);

}  // namespace pmstore::python
