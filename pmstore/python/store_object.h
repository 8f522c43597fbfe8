// The objects of the `pmstore` module: Store, and what it hands out
// (Batch, key/value/item iterators, the exporters behind zero-copy
// memoryviews).
//
// Lifetimes. Everything a Store hands out holds a strong reference to the
// Python Store object, so the C++ store outlives it whatever order the
// interpreter frees objects in (at exit too). close() on top of that:
//   - raises BufferError while a zero-copy memoryview is alive (its bytes
//     are the pool's own), and changes nothing;
//   - ends every iterator (their next() then raises ValueError), every
//     snapshot (snapshot_object.h; reads through it then raise ValueError)
//     and every transaction (transaction_object.h: rolled back, and its
//     calls raise ValueError);
//   - makes every later call raise ValueError.
// A Store that is never closed closes when the last reference to it goes.
//
// Threads and the GIL. Every method runs under the GIL, which guards the
// bookkeeping here. Reads keep it (a lookup is well under a microsecond);
// open, close, sync, stats, check, copy_to, and writes at page granularity
// (an msync each, a transaction's commit included) release it. close() lets such calls in other threads finish
// and refuses new ones (ValueError) meanwhile.
#pragma once

#include <pybind11/pybind11.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <set>
#include <string>

#include "pmstore/store.h"

namespace pmstore::python {

namespace py = pybind11;

class PyIterator;
class PySnapshot;
class PyTransaction;

// How a Store is opened: pmstore::Options, spelt for Python.
struct OpenArgs {
  bool create = true;
  bool error_if_exists = false;
  uint64_t initial_size = Options().initial_size;
  uint64_t max_size = Options().max_size;
  std::string required_granularity = "page";  // "byte", "cache_line" or "page"
  bool sync = Options().sync;
  bool read_only = Options().read_only;
  bool exclusive = Options().exclusive;
  uint32_t mode = Options().mode;
};

class PyStore {
 public:
  PyStore(const std::string& path, const OpenArgs& args);
  ~PyStore();
  PyStore(const PyStore&) = delete;
  PyStore& operator=(const PyStore&) = delete;

  void Close();
  bool closed() const { return store_ == nullptr; }
  const std::string& path() const { return path_; }

  // The mapping protocol: KeyError for a missing key.
  py::object GetItem(py::handle key);
  void SetItem(py::handle key, py::handle value);
  void DelItem(py::handle key);
  bool Contains(py::handle key);

  // Reads take `snapshot`: None (the latest state) or a PySnapshot of this
  // store, whose state they read.
  py::object Get(py::handle key, py::object fallback, bool verify_checksums, py::handle snapshot);
  // The values of `keys` (any iterable of bytes-like keys), in order, None
  // for a missing one: Store::MultiGet.
  py::list MultiGet(py::iterable keys, bool verify_checksums, py::handle snapshot);
  // A read-only memoryview of the value in place (KeyError when absent).
  static py::object View(py::object self, py::handle key, bool verify_checksums, py::handle snapshot);
  // `key in snapshot`: Contains as of a snapshot.
  bool ContainsAt(py::handle key, py::handle snapshot);
  // The store's semantics: deleting an absent key is fine.
  void Put(py::handle key, py::handle value, std::optional<bool> sync);
  void Delete(py::handle key, std::optional<bool> sync);
  void Write(const WriteBatch& batch, std::optional<bool> sync);
  void Sync();
  // Commits `transaction` and destroys it (its snapshot with it), without
  // the GIL where writes let go of it; raises pmstore.Aborted on a conflict.
  void Commit(std::unique_ptr<Transaction> transaction, std::optional<bool> sync);

  py::dict Stats();
  py::dict Check();
  // Store::CopyTo as of `snapshot` (None: one the copy takes), without
  // the GIL: other threads go on meanwhile.
  void CopyTo(const std::string& dest_path, py::handle snapshot);

  // For the objects a Store hands out. Each raises ValueError when closed.
  Store& store();
  void AddView() { ++live_views_; }
  void RemoveView() { --live_views_; }
  void AddIterator(PyIterator* iterator) { iterators_.insert(iterator); }
  void RemoveIterator(PyIterator* iterator) { iterators_.erase(iterator); }
  void AddSnapshot(PySnapshot* snapshot) { snapshots_.insert(snapshot); }
  void RemoveSnapshot(PySnapshot* snapshot) { snapshots_.erase(snapshot); }
  void AddTransaction(PyTransaction* transaction) { transactions_.insert(transaction); }
  void RemoveTransaction(PyTransaction* transaction) { transactions_.erase(transaction); }

 private:
  // The value of `key` as bytes, or a null object when it is absent.
  py::object Lookup(py::handle key, bool verify_checksums, py::handle snapshot);
  WriteOptions WriteOptionsFor(std::optional<bool> sync) const;
  // Runs a write (releasing the GIL where writes are slow) and raises on error.
  template <typename Call>
  void RunWrite(Call call);
  template <typename Call>
  auto WithoutGil(Call call);

  std::unique_ptr<Store> store_;
  std::string path_;
  bool default_sync_ = true;
  bool release_gil_for_writes_ = false;
  int live_views_ = 0;
  int calls_without_gil_ = 0;
  bool closing_ = false;
  std::set<PyIterator*> iterators_;
  std::set<PySnapshot*> snapshots_;
  std::set<PyTransaction*> transactions_;
  std::string scratch_;  // Get's copy before it becomes bytes; the GIL guards it
};

// What Store.check() and pmstore.check(path) return.
py::dict CheckReportDict(const CheckReport& report);

// Keys, values or (key, value) pairs in key order.
class PyIterator {
 public:
  enum class Yield { kKeys, kValues, kItems };
  // Through `snapshot` (None: a snapshot of the iterator's own); in
  // descending key order when `reverse`.
  PyIterator(py::object owner, IterateOptions range, Yield yield, bool empty, py::object snapshot, bool reverse);
  // Through `transaction` (a PyTransaction of `owner`), whose C++
  // `iterator` it takes (null: an empty range).
  PyIterator(py::object owner, py::object transaction, std::unique_ptr<Iterator> iterator, Yield yield,
             bool reverse);
  ~PyIterator();
  PyIterator(const PyIterator&) = delete;
  PyIterator& operator=(const PyIterator&) = delete;

  py::object Next();  // StopIteration at the end
  py::object NextOrNull();  // a null object at the end, for tp_iternext
  // The store is closing: let go of the C++ iterator now.
  void End();
  // The transaction it reads through committed or rolled back, and its
  // C++ transaction goes (which its C++ iterator reports reads to): the
  // iterator ends, and next() raises FailedPreconditionError from now on.
  void EndWithTransaction();

 private:
  py::object owner_;  // the Store: first declared, last released
  py::object snapshot_;  // the PySnapshot read through, or None; released before owner_
  py::object transaction_;  // the PyTransaction read through, or None; likewise
  PyStore* store_;
  std::unique_ptr<Iterator> iterator_;
  Yield yield_;
  bool reverse_;
  bool started_ = false;
  bool ended_by_close_ = false;
  bool ended_with_transaction_ = false;
};

// The exporter a zero-copy memoryview reads from: a pinned value. Python
// never sees it; the memoryview holds the only reference.
class PinnedExporter {
 public:
  PinnedExporter(py::object owner, PinnedValue pinned);
  ~PinnedExporter();
  PinnedExporter(const PinnedExporter&) = delete;
  PinnedExporter& operator=(const PinnedExporter&) = delete;
  py::buffer_info Buffer() const;

 private:
  py::object owner_;  // first declared, last released
  PinnedValue pinned_;
};

// `with store.batch() as b:` commits on a clean exit and discards the
// batch when the block raises.
class PyBatch {
 public:
  PyBatch(py::object owner, std::optional<bool> sync);

  void Put(py::handle key, py::handle value);
  void Delete(py::handle key);
  void Clear();
  size_t Count() const { return batch_.Count(); }
  size_t ApproximateSize() const { return batch_.ApproximateSize(); }
  // Applies the batch as one commit; the batch is spent afterwards.
  void Commit();
  bool Exit(py::handle exception_type);

 private:
  void CheckOpen() const;
  py::object owner_;
  std::optional<bool> sync_;
  WriteBatch batch_;
  bool spent_ = false;
};

}  // namespace pmstore::python
