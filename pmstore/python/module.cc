// The `pmstore` Python module: names, signatures and docstrings. The
// behaviour is in store_object.cc, snapshot_object.cc and
// transaction_object.cc; this file only binds it.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <optional>
#include <string>

#include "pmstore/python/bytes_arg.h"
#include "pmstore/python/errors.h"
#include "pmstore/python/snapshot_object.h"
#include "pmstore/python/store_object.h"
#include "pmstore/python/transaction_object.h"
#include "pmstore/version.h"

namespace pmstore::python {
namespace {

using namespace pybind11::literals;

// str, bytes or os.PathLike, as the file system spells it.
std::string FsPath(py::object path) { return py::module_::import("os").attr("fsencode")(path).cast<std::string>(); }

// keys(), values() and items() share their range arguments, on the
// Store, a Snapshot and a Transaction alike.
struct Range {
  IterateOptions options;
  bool empty = false;
};

Range ParseRange(py::handle prefix, py::handle start, py::handle stop) {
  Range range;
  if (!prefix.is_none()) range.options.prefix = std::string(BytesArg(prefix, "prefix").view());
  if (!start.is_none()) range.options.lower_bound = std::string(BytesArg(start, "start").view());
  if (!stop.is_none()) {
    range.options.upper_bound = std::string(BytesArg(stop, "stop").view());
    range.empty = range.options.upper_bound.empty();  // nothing is below b""
  }
  return range;
}

// Reads through `snapshot`: None or a Snapshot.
py::object Iterate(py::object self, py::object prefix, py::object start, py::object stop, PyIterator::Yield yield,
                   py::object snapshot, bool reverse = false) {
  Range range = ParseRange(prefix, start, stop);
  return py::cast(std::make_unique<PyIterator>(std::move(self), std::move(range.options), yield, range.empty,
                                               std::move(snapshot), reverse));
}

// `store[key]`, `store[key] = value` and `next(iterator)` straight from
// the interpreter's type slots. pybind11's own slot wrappers go through a
// generic dispatcher (an argument tuple, overload resolution, casts): about
// 75 ns a call here, where a lookup takes 400 ns and a scan step 60.
// __getitem__, __setitem__ and __next__ stay bound as well, for help() and
// explicit calls.
template <typename Call>
auto CallFromSlot(Call call, decltype(call()) failed) {
  try {
    return call();
  } catch (py::error_already_set& error) {
    error.restore();
  } catch (const std::exception& error) {
    PyErr_SetString(PyExc_RuntimeError, error.what());
  }
  return failed;
}

PyObject* SubscriptSlot(PyObject* self, PyObject* key) {
  return CallFromSlot([&] { return py::handle(self).cast<PyStore&>().GetItem(key).release().ptr(); }, nullptr);
}

int AssignSubscriptSlot(PyObject* self, PyObject* key, PyObject* value) {
  return CallFromSlot(
      [&] {
        PyStore& store = py::handle(self).cast<PyStore&>();
        if (value == nullptr) {
          store.DelItem(key);
        } else {
          store.SetItem(key, value);
        }
        return 0;
      },
      -1);
}

PyObject* IterNextSlot(PyObject* self) {
  // NULL with no exception set is the end, without a StopIteration object.
  return CallFromSlot([&] { return py::handle(self).cast<PyIterator&>().NextOrNull().release().ptr(); }, nullptr);
}

// After every def: a later setattr of __getitem__ would reset the slots.
void InstallMappingSlots(py::class_<PyStore>& store) {
  auto* type = reinterpret_cast<PyHeapTypeObject*>(store.ptr());
  type->as_mapping.mp_subscript = &SubscriptSlot;
  type->as_mapping.mp_ass_subscript = &AssignSubscriptSlot;
  PyType_Modified(&type->ht_type);
}

void InstallIteratorSlot(py::class_<PyIterator>& iterator) {
  auto* type = reinterpret_cast<PyTypeObject*>(iterator.ptr());
  type->tp_iternext = &IterNextSlot;
  PyType_Modified(type);
}

constexpr const char* kRangeDoc =
    "In key order (bytewise, shorter first), or with reverse=True in descending order, optionally only keys\n"
    "that start with `prefix` and lie in [start, stop), as of `snapshot` (Store.snapshot()) or else of one the\n"
    "iterator takes itself: writes made meanwhile are not seen. Ends (ValueError) when the store is closed.";

void BindStore(py::module_& m) {
  py::class_<PyStore> store(m, "Store", R"(A pmstore pool, opened (and by default created).

    with pmstore.Store("/mnt/pmem0/pool") as store:
        store[b"user/42"] = b"Ada"          # durable when it returns
        store[b"user/42"]                   # b"Ada"; KeyError when absent
        for key, value in store.items(prefix=b"user/"): ...

Keys and values are bytes (or bytes-like). One process at a time may open a
pool for writing, and any number read-only beside it, following its commits;
an exclusive=True open is alone (FailedPreconditionError names a holder). A
Store may be shared by threads.
close() raises BufferError while a memoryview from view() is alive.)");
  store.def(py::init([](py::object path, bool create, bool error_if_exists, uint64_t initial_size, uint64_t max_size,
                        std::string required_granularity, bool sync, bool read_only, bool exclusive, uint32_t mode) {
              return std::make_unique<PyStore>(
                  FsPath(path), OpenArgs{create, error_if_exists, initial_size, max_size,
                                         std::move(required_granularity), sync, read_only, exclusive, mode});
            }),
            "path"_a, "create"_a = OpenArgs().create, py::kw_only(), "error_if_exists"_a = OpenArgs().error_if_exists,
            "initial_size"_a = OpenArgs().initial_size, "max_size"_a = OpenArgs().max_size,
            "required_granularity"_a = OpenArgs().required_granularity, "sync"_a = OpenArgs().sync,
            "read_only"_a = OpenArgs().read_only, "exclusive"_a = OpenArgs().exclusive, "mode"_a = OpenArgs().mode,
            R"(Opens the pool at `path` (str, bytes or os.PathLike): a pool file, or a
device DAX device (/dev/daxX.Y), which is the pool, of the device's size.

create: make the pool when the file is missing, or the device holds none
  (else NotFoundError).
error_if_exists: AlreadyExistsError when it is there.
initial_size, max_size: bytes of a new pool, and the most it may grow to
  (fixed at creation; 0 = no growth).
required_granularity: "page" (anything), "cache_line" (DAX or a forced
  granularity) or "byte"; FailedPreconditionError when weaker.
sync: the default for writes: True = durable on return; False = durable
  after sync() or close (a killed process loses nothing, a power cut may).
read_only: open to read only (LMDB's MDB_RDONLY): the file is never
  written, read permission suffices, every write and sync() raises
  PermissionDeniedError (a PermissionError); never creates (create is ignored). Any
  number of processes may open a pool read-only beside one that opens it for
  writing: each read sees the writer's commits made before it began (unless an
  open is exclusive).
exclusive: be alone with the pool. A writable exclusive open shuts out every
  other open, read-only ones included; a read-only exclusive open shuts out
  writers, not other read-only opens. FailedPreconditionError ("pool in use by
  process PID, ...") for it while an open it would shut out holds the pool, and
  for those it shuts out while it is open. False: one writable open and any
  number of read-only opens of other processes share a pool.
mode: permission bits of a new pool file, less the umask (0o644).)");
  store.def("close", &PyStore::Close,
            "Persists every write, unmaps and unlocks. Ends iterators; BufferError (and nothing closed) while a "
            "memoryview from view() is alive. Raises the persistence failure (the store is closed all the same) "
            "when acknowledged writes may not be durable. Closing twice is fine.");
  store.def("__enter__", [](py::object self) { return self; });
  store.def("__exit__", [](PyStore& self, py::args) { self.Close(); });
  store.def_property_readonly("closed", &PyStore::closed);
  store.def_property_readonly("path", &PyStore::path);
  store.def("__repr__", [](const PyStore& self) {
    return "<pmstore.Store " + py::repr(py::str(self.path())).cast<std::string>() +
           (self.closed() ? " closed>" : ">");
  });

  store.def("__getitem__", &PyStore::GetItem, "key"_a, "The value (bytes); KeyError when absent.");
  store.def("__setitem__", &PyStore::SetItem, "key"_a, "value"_a, "Stores value, with the store's default sync.");
  store.def("__delitem__", &PyStore::DelItem, "key"_a, "Deletes key; KeyError when absent.");
  store.def("__contains__", &PyStore::Contains, "key"_a);
  store.def("get", &PyStore::Get, "key"_a, "default"_a = py::none(), py::kw_only(), "verify_checksums"_a = false,
            "snapshot"_a = py::none(),
            "The value (bytes), or `default` when absent. verify_checksums: DataLossError on a damaged record. "
            "snapshot: read as of this Store.snapshot().");
  store.def("multi_get", &PyStore::MultiGet, "keys"_a, py::kw_only(), "verify_checksums"_a = false,
            "snapshot"_a = py::none(),
            R"(The values of `keys` (an iterable of bytes), as a list in the same order:
bytes for a key that is present, None for one that is absent.

    store.multi_get([b"a", b"missing", b"a"])   # [b"1", None, b"1"]

Faster than a loop of get() for more than a few keys: the lookups' memory
accesses overlap. Without `snapshot`, not a snapshot of the batch (a write
made meanwhile may be seen for some keys only); with one, every key as of it.
verify_checksums: DataLossError on a damaged record.)");
  store.def("view", &PyStore::View, "key"_a, py::kw_only(), "verify_checksums"_a = false, "snapshot"_a = py::none(),
            R"(The value in place, as a read-only memoryview: no copy.

It stays valid, even if the key is overwritten or deleted, until it is
released (memoryview.release(), del, or `with store.view(k) as v:`).
close() refuses while one is alive. KeyError when absent.)");
  store.def("put", &PyStore::Put, "key"_a, "value"_a, py::kw_only(), "sync"_a = py::none(),
            "Stores value under key. sync: None = the store's default.");
  store.def("delete", &PyStore::Delete, "key"_a, py::kw_only(), "sync"_a = py::none(),
            "Deletes key; fine when it is absent (unlike `del store[key]`).");
  store.def(
      "batch", [](py::object self, std::optional<bool> sync) { return PyBatch(std::move(self), sync); },
      py::kw_only(), "sync"_a = py::none(),
      R"(A batch of puts and deletes, applied as one commit (all or nothing, across a crash too):

    with store.batch() as b:
        b[b"a"] = b"1"
        del b[b"old"]

committed when the block ends, discarded when it raises.)");
  store.def("sync", &PyStore::Sync, "Makes writes made with sync=False durable.");
  store.def("stats", &PyStore::Stats,
            "Keys, space, granularity, DAX, MAP_SYNC and the share of the pool mapped with 2 MiB pages, as a dict.");
  store.def("check", &PyStore::Check,
            "Verifies every checksum and structure; a dict with 'clean' and 'problems' (readers go on).");

  store.def(
      "copy_to", [](PyStore& self, py::object dest, py::object snapshot) { self.CopyTo(FsPath(dest), snapshot); },
      "dest"_a, py::kw_only(), "snapshot"_a = py::none(),
      R"(Copies the store as of `snapshot` (Store.snapshot(); None: as of one
the copy takes) into a new pool at `dest` (str, bytes or os.PathLike)
while other threads go on writing (the GIL is released meanwhile).

The copy is built under a temporary name and renamed to `dest` only once
it is complete and durable; it has this pool's size, maximum size and
permission bits (less the umask).
AlreadyExistsError when `dest` exists (it is left untouched),
NotFoundError when its directory is missing, ResourceExhaustedError when
the file system is full; nothing is left behind on any error.)");

  const auto iterate = [](PyIterator::Yield yield) {
    return [yield](py::object self, py::object prefix, py::object start, py::object stop, py::object snapshot,
                   bool reverse) {
      return Iterate(std::move(self), std::move(prefix), std::move(start), std::move(stop), yield,
                     std::move(snapshot), reverse);
    };
  };
  store.def("keys", iterate(PyIterator::Yield::kKeys), "prefix"_a = py::none(), "start"_a = py::none(),
            "stop"_a = py::none(), py::kw_only(), "snapshot"_a = py::none(), "reverse"_a = false,
            (std::string("Keys (bytes). ") + kRangeDoc).c_str());
  store.def("values", iterate(PyIterator::Yield::kValues), "prefix"_a = py::none(), "start"_a = py::none(),
            "stop"_a = py::none(), py::kw_only(), "snapshot"_a = py::none(), "reverse"_a = false,
            (std::string("Values (bytes). ") + kRangeDoc).c_str());
  store.def("items", iterate(PyIterator::Yield::kItems), "prefix"_a = py::none(), "start"_a = py::none(),
            "stop"_a = py::none(), py::kw_only(), "snapshot"_a = py::none(), "reverse"_a = false,
            (std::string("(key, value) pairs. ") + kRangeDoc).c_str());
  store.def("__iter__", [](py::object self) {
    return Iterate(std::move(self), py::none(), py::none(), py::none(), PyIterator::Yield::kKeys, py::none());
  });
  store.def(
      "__reversed__",
      [](py::object self) {
        return Iterate(std::move(self), py::none(), py::none(), py::none(), PyIterator::Yield::kKeys, py::none(),
                       true);
      },
      "The keys in descending order (reversed(store)).");
  store.def(
      "snapshot", [](py::object self) { return std::make_unique<PySnapshot>(std::move(self)); },
      R"(The state after the last commit, kept while writes go on (a pmstore.Snapshot):

    with store.snapshot() as snap:
        snap[b"k"], snap.get(b"k"), b"k" in snap, list(snap.items(prefix=b"user/"))
        store.get(b"k", snapshot=snap)    # the same, from the store

Space freed after it is reused only once it is released (release(), or the
end of the with block). close() ends it.)");
  store.def(
      "transaction",
      [](py::object self, bool verify_checksums, std::optional<bool> sync) {
        return std::make_unique<PyTransaction>(std::move(self), TransactionArgs{verify_checksums, sync});
      },
      py::kw_only(), "verify_checksums"_a = false, "sync"_a = py::none(),
      R"(A read-write transaction (a pmstore.Transaction) that begins at the last commit:

    with store.transaction() as t:
        t[b"b"] = t[b"a"]       # t's reads see t's own writes
        del t[b"a"]
    # The end of the block commits both writes as one commit. Or it raises
    # pmstore.Aborted, and applies nothing, when another commit changed a
    # or b since t began. An exception in the block rolls back and goes on.

Others see none of t's writes until it commits. One attempt: transact()
retries for you. verify_checksums: DataLossError on a damaged record that
t reads. sync: the commit's default (None: the store's). Until it ends it
holds a snapshot: space freed meanwhile waits for it. close() rolls it back.)");
  store.def(
      "transact",
      [](py::object self, py::object fn, int retries, bool verify_checksums, std::optional<bool> sync) {
        return Transact(std::move(self), std::move(fn), retries, TransactionArgs{verify_checksums, sync});
      },
      "fn"_a, "retries"_a = kTransactRetries, py::kw_only(), "verify_checksums"_a = false, "sync"_a = py::none(),
      R"(Calls fn(t) in a fresh transaction and commits it, again while a
conflict aborts it, and returns what fn returned:

    def transfer(t):
        a, b = int(t[b"acct/a"]), int(t[b"acct/b"])
        t[b"acct/a"], t[b"acct/b"] = b"%d" % (a - 10), b"%d" % (b + 10)
        return a - 10
    left = store.transact(transfer)

At most retries + 1 attempts. The default, 10 retries, is generous for
chance collisions; conflicts that outlast it are contention on the same
keys, better raised than spun on. After the last attempt aborts, it raises
that pmstore.Aborted. Only pmstore.Aborted is retried (from the commit, or
raised in fn); any other exception from fn is raised after a rollback.
fn may run more than once: leave effects other than t's writes (a list
append, a message sent) until transact returns. Should fn end t itself
(t.commit(), t.rollback()), that stands. verify_checksums and sync: as
for transaction().)");
  InstallMappingSlots(store);
}

void BindHandouts(py::module_& m) {
  py::class_<PyIterator> iterator(m, "_Iterator");
  iterator.def("__iter__", [](py::object self) { return self; }).def("__next__", &PyIterator::Next);
  InstallIteratorSlot(iterator);

  py::class_<PinnedExporter>(m, "_PinnedValue", py::buffer_protocol()).def_buffer(&PinnedExporter::Buffer);

  py::class_<PyBatch>(m, "Batch", "Puts and deletes for one commit; see Store.batch().")
      .def("__enter__", [](py::object self) { return self; })
      .def("__exit__", [](PyBatch& self, py::handle type, py::handle, py::handle) { return self.Exit(type); })
      .def("put", &PyBatch::Put, "key"_a, "value"_a)
      .def("__setitem__", &PyBatch::Put, "key"_a, "value"_a)
      .def("delete", &PyBatch::Delete, "key"_a, "Deletes key when the batch commits (absent is fine).")
      .def("__delitem__", &PyBatch::Delete, "key"_a)
      .def("clear", &PyBatch::Clear)
      .def("__len__", &PyBatch::Count)
      .def_property_readonly("approximate_size", &PyBatch::ApproximateSize, "Bytes of keys and values held.")
      .def("commit", &PyBatch::Commit, "Applies the batch now (what a clean `with` exit does).");
}

// ---- Snapshots: the Store's reads, each through the snapshot ----------------

void BindSnapshot(py::module_& m) {
  py::class_<PySnapshot> snapshot(m, "Snapshot", R"(A read-only view of a Store as of one commit; see Store.snapshot().

The Store's reads, as of the snapshot: snap[key] (KeyError when absent),
snap.get(key, default), key in snap, snap.multi_get(keys), snap.view(key),
iter(snap) and snap.keys/values/items(prefix, start, stop). ValueError once
released or once the store is closed.)");
  const auto store_of = [](const PySnapshot& self) -> PyStore& { return self.owner().cast<PyStore&>(); };
  snapshot.def("__enter__", [](py::object self) { return self; })
      .def("__exit__", [](PySnapshot& self, py::args) { self.Release(); })
      .def("release", &PySnapshot::Release,
           "Lets go of the snapshot (at once, or when the last iterator through it goes). Twice is fine.")
      .def_property_readonly("released", &PySnapshot::released)
      .def_property_readonly("sequence", &PySnapshot::sequence, "The number of the last commit it sees.")
      .def_property_readonly("store", &PySnapshot::owner)
      .def(
          "__getitem__",
          [store_of](py::object self, py::handle key) {
            py::object value = store_of(self.cast<PySnapshot&>()).Get(key, py::object(), false, self);
            if (!value) RaiseKeyError(key);
            return value;
          },
          "key"_a, "The value (bytes) as of the snapshot; KeyError when absent.")
      .def(
          "get",
          [store_of](py::object self, py::handle key, py::object fallback, bool verify_checksums) {
            return store_of(self.cast<PySnapshot&>()).Get(key, std::move(fallback), verify_checksums, self);
          },
          "key"_a, "default"_a = py::none(), py::kw_only(), "verify_checksums"_a = false)
      .def(
          "__contains__",
          [store_of](py::object self, py::handle key) { return store_of(self.cast<PySnapshot&>()).ContainsAt(key, self); },
          "key"_a)
      .def(
          "multi_get",
          [store_of](py::object self, py::iterable keys, bool verify_checksums) {
            return store_of(self.cast<PySnapshot&>()).MultiGet(keys, verify_checksums, self);
          },
          "keys"_a, py::kw_only(), "verify_checksums"_a = false)
      .def(
          "view",
          [](py::object self, py::handle key, bool verify_checksums) {
            return PyStore::View(self.cast<PySnapshot&>().owner(), key, verify_checksums, self);
          },
          "key"_a, py::kw_only(), "verify_checksums"_a = false,
          "A memoryview of the value in place, valid after the snapshot is released too.");
  const auto iterate = [](PyIterator::Yield yield) {
    return [yield](py::object self, py::object prefix, py::object start, py::object stop, bool reverse) {
      py::object store = self.cast<PySnapshot&>().owner();
      return Iterate(std::move(store), std::move(prefix), std::move(start), std::move(stop), yield, std::move(self),
                     reverse);
    };
  };
  snapshot.def("keys", iterate(PyIterator::Yield::kKeys), "prefix"_a = py::none(), "start"_a = py::none(),
               "stop"_a = py::none(), py::kw_only(), "reverse"_a = false);
  snapshot.def("values", iterate(PyIterator::Yield::kValues), "prefix"_a = py::none(), "start"_a = py::none(),
               "stop"_a = py::none(), py::kw_only(), "reverse"_a = false);
  snapshot.def("items", iterate(PyIterator::Yield::kItems), "prefix"_a = py::none(), "start"_a = py::none(),
               "stop"_a = py::none(), py::kw_only(), "reverse"_a = false);
  snapshot.def("__iter__", [](py::object self) {
    py::object store = self.cast<PySnapshot&>().owner();
    return Iterate(std::move(store), py::none(), py::none(), py::none(), PyIterator::Yield::kKeys, std::move(self));
  });
  snapshot.def("__reversed__", [](py::object self) {
    py::object store = self.cast<PySnapshot&>().owner();
    return Iterate(std::move(store), py::none(), py::none(), py::none(), PyIterator::Yield::kKeys, std::move(self),
                   true);
  });
}

// ---- Transactions: the Store's mapping reads and writes, through one ---------

void BindTransaction(py::module_& m) {
  py::class_<PyTransaction> transaction(m, "Transaction", R"(One attempt at a read-write transaction; see Store.transaction()
and Store.transact().

    with store.transaction() as t:
        balance = int(t.get(b"acct/1", b"0"))
        t[b"acct/1"] = b"%d" % (balance + 100)
    # committed here, or pmstore.Aborted: another commit changed acct/1

Reads (t[key], t.get(key, default), key in t, iter(t), t.keys/values/
items(prefix, start, stop, reverse=...)) see t's own writes over the state
t began from. Each key read counts: the commit raises pmstore.Aborted, and
applies nothing, when another commit changed any key t read or wrote since
t began (a key added between those an iteration saw does not count).
Writes (t[key] = value, del t[key], put, delete) are staged in memory and
seen by nobody else until the commit.

t ends with commit() or rollback(), or at the end of its with block;
after that every call (and next() on its iterators) raises
FailedPreconditionError, except rollback(), which does nothing.
Store.close() rolls it back (ValueError then). One thread at a time.)");
  transaction.def("__enter__", [](py::object self) { return self; })
      .def("__exit__", [](PyTransaction& self, py::handle type, py::handle, py::handle) { return self.Exit(type); })
      .def("__getitem__", &PyTransaction::GetItem, "key"_a,
           "The value (bytes): t's own write, else as of t's start; KeyError when absent.")
      .def("get", &PyTransaction::Get, "key"_a, "default"_a = py::none(),
           "The value (bytes), or `default` when absent (absence counts as read too).")
      .def("__contains__", &PyTransaction::Contains, "key"_a)
      .def("__setitem__", &PyTransaction::Put, "key"_a, "value"_a, "Stages value under key until the commit.")
      .def("put", &PyTransaction::Put, "key"_a, "value"_a, "Stages value under key until the commit.")
      .def("__delitem__", &PyTransaction::DelItem, "key"_a,
           "Stages the deletion of key; KeyError when t does not see it.")
      .def("delete", &PyTransaction::Delete, "key"_a,
           "Stages the deletion of key; fine when it is absent (unlike `del t[key]`), and not a read.")
      .def("commit", &PyTransaction::Commit, py::kw_only(), "sync"_a = py::none(),
           R"(Applies t's writes as one commit (all or nothing, across a crash too) and ends t.

pmstore.Aborted, with nothing applied, when another commit changed a key t
read or wrote since it began: run it again in a new transaction. Otherwise
the store's write errors. sync: None = the transaction's default.)")
      .def("rollback", &PyTransaction::Rollback,
           "Drops t's writes and ends t. Does nothing when t already ended (so it fits a `finally:`).")
      .def_property_readonly("ended", &PyTransaction::ended, "True once committed, rolled back or closed.")
      .def_property_readonly("begin_sequence", &PyTransaction::begin_sequence,
                             "The number of the last commit t sees (a Snapshot's sequence).")
      .def_property_readonly("staged_writes", &PyTransaction::staged_writes,
                             "Keys written so far (a key written twice counts once).")
      .def_property_readonly("store", &PyTransaction::owner);
  const auto iterate = [](PyIterator::Yield yield) {
    return [yield](py::object self, py::object prefix, py::object start, py::object stop, bool reverse) {
      Range range = ParseRange(prefix, start, stop);
      return PyTransaction::Iterate(std::move(self), std::move(range.options), yield, range.empty, reverse);
    };
  };
  constexpr const char* kTransactionRangeDoc =
      "As the Store's, but through t: its writes so far over the state it began from (later writes are not\n"
      "seen by this iterator). Each key it lands on counts as read. Ends when t does.";
  transaction.def("keys", iterate(PyIterator::Yield::kKeys), "prefix"_a = py::none(), "start"_a = py::none(),
                  "stop"_a = py::none(), py::kw_only(), "reverse"_a = false,
                  (std::string("Keys (bytes). ") + kTransactionRangeDoc).c_str());
  transaction.def("values", iterate(PyIterator::Yield::kValues), "prefix"_a = py::none(), "start"_a = py::none(),
                  "stop"_a = py::none(), py::kw_only(), "reverse"_a = false,
                  (std::string("Values (bytes). ") + kTransactionRangeDoc).c_str());
  transaction.def("items", iterate(PyIterator::Yield::kItems), "prefix"_a = py::none(), "start"_a = py::none(),
                  "stop"_a = py::none(), py::kw_only(), "reverse"_a = false,
                  (std::string("(key, value) pairs. ") + kTransactionRangeDoc).c_str());
  transaction.def("__iter__", [](py::object self) {
    return PyTransaction::Iterate(std::move(self), IterateOptions(), PyIterator::Yield::kKeys, false, false);
  });
  transaction.def("__reversed__", [](py::object self) {
    return PyTransaction::Iterate(std::move(self), IterateOptions(), PyIterator::Yield::kKeys, false, true);
  });
}

}  // namespace
}  // namespace pmstore::python

PYBIND11_MODULE(pmstore, m) {
  using namespace pmstore::python;
  using namespace pybind11::literals;
  m.doc() = "pmstore: a crash-consistent key/object store on persistent memory.";
  m.attr("__version__") = std::string(pmstore::Version());
  RegisterErrors(m);
  BindTransaction(m);  // before the Store, whose signatures name it
  BindStore(m);
  BindHandouts(m);
  BindSnapshot(m);
  m.def(
      "check",
      [](py::object path) {
        const std::string fs_path = FsPath(path);
        absl::StatusOr<pmstore::CheckReport> report;
        {
          py::gil_scoped_release release;
          report = pmstore::Store::Check(fs_path);
        }
        ThrowIfError(report.status());
        return CheckReportDict(*report);
      },
      "path"_a,
      "Verifies the pool at `path` without changing it, read-only: beside a process that has it open for "
      "writing, at that writer's newest commit (its next commit waits for the check). A dict with 'clean' and "
      "'problems'; an exception when it cannot be examined at all (or is open in this process).");
  m.def(
      "destroy",
      [](py::object path) {
        const std::string fs_path = FsPath(path);
        absl::Status status;
        {
          py::gil_scoped_release release;
          status = pmstore::Store::Destroy(fs_path);
        }
        ThrowIfError(status);
      },
      "path"_a,
      "Removes the pool at `path` (RocksDB's DestroyDB): a pool file is unlinked, a device DAX device's "
      "superblock erased. Raises FailedPreconditionError when the pool is open anywhere, InvalidArgumentError "
      "when `path` is not a pool, NotFoundError when nothing is there.");
  m.def(
      "readers",
      [](py::object path) {
        const std::string fs_path = FsPath(path);
        absl::StatusOr<std::vector<pmstore::ReaderInfo>> readers;
        {
          py::gil_scoped_release release;
          readers = pmstore::Store::Readers(fs_path);
        }
        ThrowIfError(readers.status());
        auto commit_or_none = [](const std::optional<uint64_t>& commit) {
          return commit.has_value() ? py::object(py::int_(*commit)) : py::object(py::none());
        };
        py::list out;
        for (const pmstore::ReaderInfo& r : *readers) {
          out.append(py::dict("slot"_a = r.slot, "pid"_a = r.pid, "writable"_a = r.writable, "stale"_a = r.stale,
                              "opened_unix_ns"_a = r.opened_unix_ns,
                              "pinned_commit"_a = commit_or_none(r.pinned_commit),
                              "last_commit"_a = commit_or_none(r.last_commit)));
        }
        return out;
      },
      "path"_a,
      "The reader table of the pool at `path` (LMDB's mdb_reader_list): a list of dicts, one per open of the "
      "pool by any process ('slot', 'pid', 'writable', 'stale', 'opened_unix_ns', 'pinned_commit', 'last_commit'); "
      "'stale' marks a process that died with the pool open; 'pinned_commit' is the oldest commit a view, snapshot, "
      "iterator or transaction of that open still reads (None: none; compare Snapshot.sequence); 'last_commit' is "
      "the newest commit a writable open made or found at open (None for a read-only open), which the pins lag "
      "behind. Reads the table, never the pool, so it answers while another process holds the pool for writing. "
      "Empty when no process has it open.");
  m.def(
      "clear_stale_readers",
      [](py::object path) {
        const std::string fs_path = FsPath(path);
        absl::StatusOr<int> cleared;
        {
          py::gil_scoped_release release;
          cleared = pmstore::Store::ClearStaleReaders(fs_path);
        }
        ThrowIfError(cleared.status());
        return *cleared;
      },
      "path"_a,
      "Frees the slots of processes that died with the pool at `path` open (LMDB's mdb_reader_check) and "
      "returns how many. Raises PermissionDeniedError when this user may not write the table.");
}

