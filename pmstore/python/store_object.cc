#include "pmstore/python/store_object.h"

#include <pybind11/stl.h>

#include <deque>
#include <thread>
#include <utility>

#include "absl/strings/str_cat.h"
#include "pmstore/python/bytes_arg.h"
#include "pmstore/python/errors.h"
#include "pmstore/python/snapshot_object.h"
#include "pmstore/python/transaction_object.h"

namespace pmstore::python {
namespace {

Granularity ParseGranularity(const std::string& name) {
  for (Granularity g : {Granularity::kByte, Granularity::kCacheLine, Granularity::kPage}) {
    if (GranularityName(g) == name) return g;
  }
  RaiseValueError("required_granularity is 'byte', 'cache_line' or 'page', not '" + name + "'");
}

// Get's scratch copy keeps at most this much capacity between calls.
constexpr size_t kScratchKeep = 1 << 20;

}  // namespace

// ---- Store -----------------------------------------------------------------

PyStore::PyStore(const std::string& path, const OpenArgs& args) : path_(path), default_sync_(args.sync) {
  Options options;
  options.create_if_missing = args.create;
  options.error_if_exists = args.error_if_exists;
  options.initial_size = args.initial_size;
  options.max_size = args.max_size;
  options.required_granularity = ParseGranularity(args.required_granularity);
  options.sync = args.sync;
  options.read_only = args.read_only;
  options.exclusive = args.exclusive;
  options.mode = args.mode;
  absl::StatusOr<std::unique_ptr<Store>> opened;
  Granularity granularity = Granularity::kPage;
  {
    py::gil_scoped_release release;
    opened = Store::Open(path, options);
    if (opened.ok()) granularity = (*opened)->GetStats().granularity;
  }
  ThrowIfError(opened.status());
  store_ = std::move(*opened);
  // A write at page granularity waits for msync: let other threads run.
  // At cache-line granularity it takes about a microsecond, less than
  // handing the GIL over would.
  release_gil_for_writes_ = granularity == Granularity::kPage;
}

template <typename Call>
auto PyStore::WithoutGil(Call call) {
  ++calls_without_gil_;
  struct Done {  // runs after the GIL is back
    int* calls;
    ~Done() { --*calls; }
  } done{&calls_without_gil_};
  py::gil_scoped_release release;
  return call();
}

PyStore::~PyStore() {
  // Nothing handed out can be alive: each holds a reference to this Store.
  store_.reset();
}

void PyStore::Close() {
  if (store_ == nullptr) return;  // as files do, closing twice is fine
  if (live_views_ > 0) {
    PyErr_SetString(PyExc_BufferError,
                    absl::StrCat("cannot close ", path_, ": ", live_views_,
                                 " zero-copy memoryview(s) of its values are alive; release them "
                                 "(memoryview.release(), del, or a with block) first")
                        .c_str());
    throw py::error_already_set();
  }
  // No call starts from here on; those that let go of the GIL finish.
  closing_ = true;
  while (calls_without_gil_ > 0) {
    py::gil_scoped_release release;
    std::this_thread::yield();
  }
  if (store_ == nullptr) return;  // another thread's close() got there first
  for (PyIterator* iterator : iterators_) iterator->End();
  iterators_.clear();
  for (PySnapshot* snapshot : snapshots_) snapshot->End();  // after the iterators that read through them
  snapshots_.clear();
  for (PyTransaction* transaction : transactions_) transaction->End();  // rolled back, before the store goes
  transactions_.clear();
  std::unique_ptr<Store> closing = std::move(store_);
  // Counted as a call without the GIL, so a second close() returns only
  // once the pool is closed. Close unmaps and unlocks also when it fails;
  // its failure says the last writes may not be durable.
  const absl::Status closed = WithoutGil([&] { return closing->Close(); });
  closing.reset();
  ThrowIfError(closed);
}

Store& PyStore::store() {
  if (store_ == nullptr || closing_) RaiseValueError("operation on a closed pmstore.Store (" + path_ + ")");
  return *store_;
}

WriteOptions PyStore::WriteOptionsFor(std::optional<bool> sync) const {
  return WriteOptions{.sync = sync.value_or(default_sync_)};
}

template <typename Call>
void PyStore::RunWrite(Call call) {
  ThrowIfError(release_gil_for_writes_ ? WithoutGil(call) : call());
}

py::object PyStore::Lookup(py::handle key, bool verify_checksums, py::handle snapshot) {
  const BytesArg k(key, "key");
  const absl::Status status = store().Get(ReadOptionsFor(verify_checksums, snapshot), k.view(), &scratch_);
  if (absl::IsNotFound(status)) return py::object();
  ThrowIfError(status);
  py::bytes value = ToBytes(scratch_);
  if (scratch_.capacity() > kScratchKeep) scratch_ = std::string();
  return value;
}

py::object PyStore::GetItem(py::handle key) {
  py::object value = Lookup(key, false, py::none());
  if (!value) RaiseKeyError(key);
  return value;
}

py::object PyStore::Get(py::handle key, py::object fallback, bool verify_checksums, py::handle snapshot) {
  py::object value = Lookup(key, verify_checksums, snapshot);
  return value ? value : fallback;
}

py::list PyStore::MultiGet(py::iterable keys, bool verify_checksums, py::handle snapshot) {
  std::deque<BytesArg> held;  // a deque: its elements never move, their views stay valid
  std::vector<std::string_view> views;
  for (py::handle key : keys) views.push_back(held.emplace_back(key, "key").view());
  std::vector<std::string> values;
  const std::vector<absl::Status> statuses =
      store().MultiGet(ReadOptionsFor(verify_checksums, snapshot), views, &values);
  py::list out(views.size());
  for (size_t i = 0; i < views.size(); ++i) {
    if (absl::IsNotFound(statuses[i])) {
      out[i] = py::none();
      continue;
    }
    ThrowIfError(statuses[i]);
    out[i] = ToBytes(values[i]);
  }
  return out;
}

void PyStore::SetItem(py::handle key, py::handle value) { Put(key, value, std::nullopt); }

void PyStore::DelItem(py::handle key) {
  if (!Contains(key)) RaiseKeyError(key);
  Delete(key, std::nullopt);
}

bool PyStore::Contains(py::handle key) {
  const BytesArg k(key, "key");
  absl::StatusOr<bool> present = store().Contains(k.view());
  ThrowIfError(present.status());
  return *present;
}

bool PyStore::ContainsAt(py::handle key, py::handle snapshot) {
  const BytesArg k(key, "key");
  PinnedValue pinned;  // no copy of the value
  const absl::Status status = store().Get(ReadOptionsFor(false, snapshot), k.view(), &pinned);
  if (absl::IsNotFound(status)) return false;
  ThrowIfError(status);
  return true;
}

py::object PyStore::View(py::object self, py::handle key, bool verify_checksums, py::handle snapshot) {
  PyStore& owner = self.cast<PyStore&>();
  const BytesArg k(key, "key");
  PinnedValue pinned;  // pinned at the snapshot's commit: valid after the snapshot goes too
  const absl::Status status = owner.store().Get(ReadOptionsFor(verify_checksums, snapshot), k.view(), &pinned);
  if (absl::IsNotFound(status)) RaiseKeyError(key);
  ThrowIfError(status);
  py::object exporter = py::cast(std::make_unique<PinnedExporter>(std::move(self), std::move(pinned)));
  // The memoryview takes its own reference to the exporter; ours goes at
  // return, so the view holds the only one.
  return py::reinterpret_steal<py::object>(PyMemoryView_FromObject(exporter.ptr()));
}

void PyStore::Put(py::handle key, py::handle value, std::optional<bool> sync) {
  const BytesArg k(key, "key"), v(value, "value");
  const WriteOptions options = WriteOptionsFor(sync);
  Store& s = store();
  RunWrite([&] { return s.Put(options, k.view(), v.view()); });
}

void PyStore::Delete(py::handle key, std::optional<bool> sync) {
  const BytesArg k(key, "key");
  const WriteOptions options = WriteOptionsFor(sync);
  Store& s = store();
  RunWrite([&] { return s.Delete(options, k.view()); });
}

void PyStore::Write(const WriteBatch& batch, std::optional<bool> sync) {
  const WriteOptions options = WriteOptionsFor(sync);
  Store& s = store();
  RunWrite([&] { return s.Write(options, batch); });
}

void PyStore::Commit(std::unique_ptr<Transaction> transaction, std::optional<bool> sync) {
  const WriteOptions options = WriteOptionsFor(sync);
  store();  // raises when closed or closing
  // Destroyed here too: it releases the transaction's snapshot, which
  // waits for the writer's turn as the commit did.
  RunWrite([&] {
    const absl::Status committed = transaction->Commit(options);
    transaction.reset();
    return committed;
  });
}

void PyStore::Sync() {
  Store& s = store();
  ThrowIfError(WithoutGil([&] { return s.Sync(); }));
}

py::dict PyStore::Stats() {
  Store& s = store();
  const pmstore::Stats stats = WithoutGil([&] { return s.GetStats(); });
  py::dict out;
  out["path"] = stats.path;
  out["format_version"] = stats.format_version;
  out["keys"] = stats.keys;
  out["pool_bytes"] = stats.pool_bytes;
  out["max_pool_bytes"] = stats.max_pool_bytes;
  out["live_bytes"] = stats.live_bytes;
  out["free_bytes"] = stats.free_bytes;
  out["fragmentation"] = stats.fragmentation;
  out["granularity"] = std::string(GranularityName(stats.granularity));
  out["dax"] = stats.dax;
  out["map_sync"] = stats.map_sync;
  out["read_only"] = stats.read_only;
  out["device_dax_align"] = stats.device_dax_align;
  out["pmd_mapped_share"] = stats.pmd_mapped_share;
  out["pmd_verify_method"] = stats.pmd_verify_method;
  return out;
}

py::dict PyStore::Check() {
  Store& s = store();
  return CheckReportDict(WithoutGil([&] { return s.CheckNow(); }));
}

void PyStore::CopyTo(const std::string& dest_path, py::handle snapshot) {
  Store& s = store();
  const ReadOptions options = ReadOptionsFor(false, snapshot);  // raises when released
  // The snapshot stays while the copy reads through it, as for an
  // iterator, even if another thread releases it meanwhile.
  PySnapshot* held = snapshot.is_none() ? nullptr : &snapshot.cast<PySnapshot&>();
  if (held != nullptr) held->AddIterator();
  struct Unhold {  // runs with the GIL back
    PySnapshot* snapshot;
    ~Unhold() {
      if (snapshot != nullptr) snapshot->RemoveIterator();
    }
  } unhold{held};
  ThrowIfError(WithoutGil([&] { return s.CopyTo(options, dest_path); }));
}

py::dict CheckReportDict(const CheckReport& report) {
  py::dict out;
  out["clean"] = report.clean();
  out["keys"] = report.keys;
  out["leaves"] = report.leaves;
  out["records_verified"] = report.records_verified;
  out["bytes_verified"] = report.bytes_verified;
  out["problems"] = report.problems;
  return out;
}

// ---- Iterators -------------------------------------------------------------

PyIterator::PyIterator(py::object owner, IterateOptions range, Yield yield, bool empty, py::object snapshot,
                       bool reverse)
    : owner_(std::move(owner)),
      snapshot_(std::move(snapshot)),
      store_(&owner_.cast<PyStore&>()),
      yield_(yield),
      reverse_(reverse) {
  Store& store = store_->store();  // raises when closed
  const ReadOptions options = ReadOptionsFor(false, snapshot_);  // raises when released
  if (!empty) iterator_ = store.NewIterator(options, range);
  if (!snapshot_.is_none()) snapshot_.cast<PySnapshot&>().AddIterator();
  store_->AddIterator(this);
}

PyIterator::PyIterator(py::object owner, py::object transaction, std::unique_ptr<Iterator> iterator, Yield yield,
                       bool reverse)
    : owner_(std::move(owner)),
      snapshot_(py::none()),
      transaction_(std::move(transaction)),
      store_(&owner_.cast<PyStore&>()),
      iterator_(std::move(iterator)),
      yield_(yield),
      reverse_(reverse) {
  transaction_.cast<PyTransaction&>().AddIterator(this);
  store_->AddIterator(this);
}

PyIterator::~PyIterator() {
  iterator_.reset();  // before the transaction or snapshot it reads through
  if (!snapshot_.is_none()) snapshot_.cast<PySnapshot&>().RemoveIterator();
  if (transaction_) transaction_.cast<PyTransaction&>().RemoveIterator(this);
  store_->RemoveIterator(this);
}

void PyIterator::End() {
  iterator_.reset();
  ended_by_close_ = true;
}

void PyIterator::EndWithTransaction() {
  iterator_.reset();
  ended_with_transaction_ = true;
}

py::object PyIterator::Next() {
  py::object item = NextOrNull();
  if (!item) throw py::stop_iteration();
  return item;
}

py::object PyIterator::NextOrNull() {
  if (ended_by_close_) RaiseValueError("iteration over a closed pmstore.Store (" + store_->path() + ")");
  if (ended_with_transaction_) {
    Raise(absl::FailedPreconditionError(
        "iteration through a pmstore.Transaction that has committed or rolled back; iterate inside it"));
  }
  if (iterator_ == nullptr) return py::object();
  if (started_) {
    reverse_ ? iterator_->Prev() : iterator_->Next();
  } else {
    reverse_ ? iterator_->SeekToLast() : iterator_->SeekToFirst();
    started_ = true;
  }
  if (!iterator_->Valid()) {
    const absl::Status status = iterator_->status();
    iterator_.reset();  // let go of its buffer now
    ThrowIfError(status);
    return py::object();
  }
  switch (yield_) {
    case Yield::kKeys: return ToBytes(iterator_->key());
    case Yield::kValues: return ToBytes(iterator_->value());
    case Yield::kItems: break;
  }
  return py::make_tuple(ToBytes(iterator_->key()), ToBytes(iterator_->value()));
}

// ---- Zero-copy exporters ---------------------------------------------------

PinnedExporter::PinnedExporter(py::object owner, PinnedValue pinned)
    : owner_(std::move(owner)), pinned_(std::move(pinned)) {
  owner_.cast<PyStore&>().AddView();
}

PinnedExporter::~PinnedExporter() {
  pinned_.Reset();  // before the Store can go
  owner_.cast<PyStore&>().RemoveView();
}

py::buffer_info PinnedExporter::Buffer() const {
  static const char kEmpty = 0;
  const std::string_view value = pinned_.value();
  void* data = const_cast<char*>(value.empty() ? &kEmpty : value.data());
  return py::buffer_info(data, 1, "B", 1, {static_cast<py::ssize_t>(value.size())}, {1}, /*readonly=*/true);
}

// ---- Batches ---------------------------------------------------------------

PyBatch::PyBatch(py::object owner, std::optional<bool> sync) : owner_(std::move(owner)), sync_(sync) {
  owner_.cast<PyStore&>().store();  // raises when closed
}

void PyBatch::CheckOpen() const {
  if (spent_) RaiseValueError("this batch was already committed or discarded; start another with store.batch()");
}

void PyBatch::Put(py::handle key, py::handle value) {
  CheckOpen();
  const BytesArg k(key, "key"), v(value, "value");
  batch_.Put(k.view(), v.view());
}

void PyBatch::Delete(py::handle key) {
  CheckOpen();
  const BytesArg k(key, "key");
  batch_.Delete(k.view());
}

void PyBatch::Clear() {
  CheckOpen();
  batch_.Clear();
}

void PyBatch::Commit() {
  CheckOpen();
  owner_.cast<PyStore&>().Write(batch_, sync_);  // on failure the batch stays, for a retry
  batch_.Clear();
  spent_ = true;
}

bool PyBatch::Exit(py::handle exception_type) {
  if (exception_type.is_none()) {
    Commit();
  } else {
    batch_.Clear();
    spent_ = true;
  }
  return false;  // never swallow the block's exception
}

}  // namespace pmstore::python
