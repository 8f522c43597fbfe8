#include "pmstore/python/transaction_object.h"

#include <string>
#include <utility>

#include "pmstore/python/bytes_arg.h"
#include "pmstore/python/errors.h"

namespace pmstore::python {

PyTransaction::PyTransaction(py::object owner, const TransactionArgs& args)
    : owner_(std::move(owner)), store_(&owner_.cast<PyStore&>()), sync_(args.sync) {
  TransactionOptions options;
  options.verify_checksums = args.verify_checksums;
  transaction_ = store_->store().BeginTransaction(options);  // raises when closed
  store_->AddTransaction(this);
}

PyTransaction::~PyTransaction() {
  // No iterator through it is alive: each holds a reference to it.
  transaction_.reset();  // rolls back, before the Store can go
  store_->RemoveTransaction(this);
}

Transaction& PyTransaction::Live() const {
  if (ended_by_close_) RaiseValueError("call on a transaction of a closed pmstore.Store (" + store_->path() + ")");
  if (ended_) {
    Raise(absl::FailedPreconditionError(
        "this pmstore.Transaction already committed or rolled back; begin another with store.transaction() "
        "(store.transact() does, for each attempt)"));
  }
  store_->store();  // ValueError while another thread closes the store
  return *transaction_;
}

py::object PyTransaction::Lookup(py::handle key) {
  const BytesArg k(key, "key");
  std::string value;
  const absl::Status status = Live().Get(k.view(), &value);
  if (absl::IsNotFound(status)) return py::object();
  ThrowIfError(status);
  return ToBytes(value);
}

py::object PyTransaction::GetItem(py::handle key) {
  py::object value = Lookup(key);
  if (!value) RaiseKeyError(key);
  return value;
}

py::object PyTransaction::Get(py::handle key, py::object fallback) {
  py::object value = Lookup(key);
  return value ? value : fallback;
}

// A Get (the value copied and dropped): a Transaction has no Contains, and
// presence is a read that must count for conflicts all the same.
bool PyTransaction::Contains(py::handle key) { return static_cast<bool>(Lookup(key)); }

void PyTransaction::Put(py::handle key, py::handle value) {
  const BytesArg k(key, "key"), v(value, "value");
  ThrowIfError(Live().Put(k.view(), v.view()));
}

void PyTransaction::Delete(py::handle key) {
  const BytesArg k(key, "key");
  ThrowIfError(Live().Delete(k.view()));
}

void PyTransaction::DelItem(py::handle key) {
  if (!Lookup(key)) RaiseKeyError(key);
  Delete(key);
}

py::object PyTransaction::Iterate(py::object self, IterateOptions range, PyIterator::Yield yield, bool empty,
                                  bool reverse) {
  PyTransaction& transaction = self.cast<PyTransaction&>();
  Transaction& live = transaction.Live();  // raises once ended, for an empty range too
  std::unique_ptr<Iterator> iterator = empty ? nullptr : live.NewIterator(range);
  py::object owner = transaction.owner_;
  return py::cast(
      std::make_unique<PyIterator>(std::move(owner), std::move(self), std::move(iterator), yield, reverse));
}

std::unique_ptr<Transaction> PyTransaction::Finish() {
  ended_ = true;
  // The C++ iterators must go before the C++ transaction, which the commit
  // or the rollback destroys: each tells it the keys it lands on.
  for (PyIterator* iterator : iterators_) iterator->EndWithTransaction();
  return std::move(transaction_);
}

void PyTransaction::Commit(std::optional<bool> sync) {
  Live();  // raises once ended or closed
  // Ended before the GIL may be let go of: another thread's call on this
  // transaction meanwhile raises rather than racing the commit.
  store_->Commit(Finish(), sync.has_value() ? sync : sync_);
}

// Never raises: it runs while another exception is on its way (the
// block's, transact's), which it must not replace.
void PyTransaction::Rollback() {
  if (ended()) return;  // after commit() or close(): nothing to drop
  std::unique_ptr<Transaction> transaction = Finish();
  transaction->Rollback();
}

bool PyTransaction::Exit(py::handle exception_type) {
  if (!exception_type.is_none()) {
    Rollback();
    return false;  // never swallow the block's exception
  }
  // Committed or rolled back inside the block: nothing is left to do.
  // Closed by the store instead: commit raises, as the writes are lost.
  if (!ended_) Commit(std::nullopt);
  return false;
}

void PyTransaction::End() {
  for (PyIterator* iterator : iterators_) iterator->End();
  transaction_.reset();
  ended_by_close_ = true;
}

py::object Transact(py::object store, py::object fn, int retries, const TransactionArgs& args) {
  if (retries < 0) RaiseValueError("retries is 0 or more, not " + std::to_string(retries));
  // Each attempt is a `with store.transaction() as t: return fn(t)`.
  for (int attempt = 0;; ++attempt) {
    py::object handle = py::cast(std::make_unique<PyTransaction>(store, args));
    PyTransaction& transaction = handle.cast<PyTransaction&>();
    try {
      py::object result = fn(handle);
      transaction.Exit(py::none());
      return result;
    } catch (py::error_already_set& error) {
      transaction.Rollback();
      if (!IsAborted(error) || attempt == retries) throw;
    } catch (...) {
      transaction.Rollback();
      throw;
    }
  }
}

}  // namespace pmstore::python
