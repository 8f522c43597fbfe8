#include "pmstore/python/snapshot_object.h"

#include "pmstore/python/errors.h"
#include "pmstore/python/store_object.h"

namespace pmstore::python {

PySnapshot::PySnapshot(py::object owner) : owner_(std::move(owner)), store_(&owner_.cast<PyStore&>()) {
  snapshot_ = store_->store().GetSnapshot();  // raises when closed
  store_->AddSnapshot(this);
}

PySnapshot::~PySnapshot() {
  snapshot_.reset();  // before the Store can go
  store_->RemoveSnapshot(this);
}

const Snapshot* PySnapshot::Get() const {
  if (ended_by_close_) RaiseValueError("read through a snapshot of a closed pmstore.Store (" + store_->path() + ")");
  if (released_) RaiseValueError("read through a released pmstore.Snapshot");
  return snapshot_.get();
}

void PySnapshot::Release() {
  released_ = true;
  if (iterators_ == 0) snapshot_.reset();
}

void PySnapshot::RemoveIterator() {
  if (--iterators_ == 0 && released_) snapshot_.reset();
}

void PySnapshot::End() {
  snapshot_.reset();
  ended_by_close_ = true;
}

ReadOptions ReadOptionsFor(bool verify_checksums, py::handle snapshot) {
  ReadOptions options;
  options.verify_checksums = verify_checksums;
  if (snapshot.is_none()) return options;
  if (!py::isinstance<PySnapshot>(snapshot)) {
    PyErr_SetString(PyExc_TypeError, "snapshot is a pmstore.Snapshot (Store.snapshot()) or None");
    throw py::error_already_set();
  }
  options.snapshot = snapshot.cast<const PySnapshot&>().Get();
  return options;
}

}  // namespace pmstore::python
