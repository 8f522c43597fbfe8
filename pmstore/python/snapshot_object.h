// pmstore.Snapshot: Store.snapshot()'s result, a read-only view of the
// store as of one commit (pmstore/snapshot.h), with the store's read
// methods.
//
// Lifetimes, as for the Store's other handouts: a Snapshot holds a strong
// reference to its Store, and iterators made through it hold one to the
// Snapshot. release() (or the end of a `with` block) lets go of the C++
// snapshot at once, or, while iterators made through it are alive, when
// the last of them goes; reads through a released Snapshot raise
// ValueError. Store.close() ends every Snapshot (then ValueError too), so
// closing with one alive is fine.
#pragma once

#include <pybind11/pybind11.h>

#include <memory>

#include "pmstore/snapshot.h"
#include "pmstore/store.h"

namespace pmstore::python {

namespace py = pybind11;

class PyStore;

class PySnapshot {
 public:
  explicit PySnapshot(py::object owner);
  ~PySnapshot();
  PySnapshot(const PySnapshot&) = delete;
  PySnapshot& operator=(const PySnapshot&) = delete;

  // The C++ snapshot; ValueError once released or ended by close().
  const Snapshot* Get() const;
  uint64_t sequence() const { return Get()->sequence(); }
  bool released() const { return released_; }
  void Release();
  // The store is closing: let go of the C++ snapshot now.
  void End();

  // Iterators made through this snapshot keep it.
  void AddIterator() { ++iterators_; }
  void RemoveIterator();

  py::object owner() const { return owner_; }

 private:
  py::object owner_;  // the Store: first declared, last released
  PyStore* store_;
  std::unique_ptr<Snapshot> snapshot_;
  bool released_ = false;
  bool ended_by_close_ = false;
  int iterators_ = 0;
};

// ReadOptions for a read through `snapshot` (None, or a Snapshot of the
// same store: another store's is InvalidArgumentError from the read).
ReadOptions ReadOptionsFor(bool verify_checksums, py::handle snapshot);

}  // namespace pmstore::python
