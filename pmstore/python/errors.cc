#include "pmstore/python/errors.h"

#include <string>

#include "pmstore/c.h"

namespace pmstore::python {
namespace {

// Created once and never freed: a static py::object would be destroyed
// after the interpreter has gone.
PyObject* g_error = nullptr;
PyObject* g_by_code[PMSTORE_UNAUTHENTICATED + 1] = {};

PyObject* NewError(py::module_& module, const char* name, PyObject* base, const char* doc) {
  const std::string qualified = std::string("pmstore.") + name;
  PyObject* type = PyErr_NewExceptionWithDoc(qualified.c_str(), doc, base, nullptr);
  if (type == nullptr) throw py::error_already_set();
  Py_INCREF(type);  // the module's reference, and ours
  module.add_object(name, py::handle(type));
  return type;
}

}  // namespace

void RegisterErrors(py::module_& module) {
  g_error = NewError(module, "Error", PyExc_Exception,
                     "A pmstore failure. `code` is its name in the C API (\"DATA_LOSS\", ...); the message names "
                     "the file and the problem.");
  struct Kind {
    absl::StatusCode code;
    const char* name;
    const char* doc;
  };
  const Kind kinds[] = {
      {absl::StatusCode::kNotFound, "NotFoundError", "No such pool file (open without create), or no directory for copy_to's destination."},
      {absl::StatusCode::kAlreadyExists, "AlreadyExistsError", "The pool exists and error_if_exists was given, or copy_to's destination exists."},
      {absl::StatusCode::kInvalidArgument, "InvalidArgumentError",
       "Not a pool (bad magic), a key longer than 64 KiB, or a batch too large for one commit."},
      {absl::StatusCode::kFailedPrecondition, "FailedPreconditionError",
       "Unsupported pool version, granularity weaker than required, the pool is in use by another process or "
       "already open in this one, or a call on a Transaction that already committed or rolled back."},
      {absl::StatusCode::kDataLoss, "DataLossError", "Truncated pool or checksum failure."},
      {absl::StatusCode::kResourceExhausted, "ResourceExhaustedError",
       "The pool is full and may not grow (the failed write changed nothing), or the file system is full."},
      // Not "AbortedError": a conflict is an expected outcome to retry, not
      // a fault, and the name says what happened to the transaction.
      {absl::StatusCode::kAborted, "Aborted",
       "A transaction's commit found that another commit changed a key it read or wrote since it began; "
       "nothing of it was applied. Run it again in a new transaction (Store.transact() does)."},
  };
  for (const Kind& kind : kinds) g_by_code[static_cast<int>(kind.code)] = NewError(module, kind.name, g_error, kind.doc);
  // Also the built-in PermissionError, which Python code already catches
  // for files it may not write.
  const py::tuple permission_bases = py::make_tuple(py::handle(g_error), py::handle(PyExc_PermissionError));
  g_by_code[static_cast<int>(absl::StatusCode::kPermissionDenied)] =
      NewError(module, "PermissionDeniedError", permission_bases.ptr(),
               "A write or sync() on a store opened read_only=True, or a writable open of a pool file the user may "
               "not write. A PermissionError too.");
}

void Raise(const absl::Status& status) {
  const int code = static_cast<int>(status.code());
  PyObject* type = code >= 0 && code <= PMSTORE_UNAUTHENTICATED && g_by_code[code] != nullptr ? g_by_code[code] : g_error;
  const std::string message(status.message());
  // A path in the message may not be UTF-8.
  const py::object text = py::reinterpret_steal<py::object>(
      PyUnicode_DecodeUTF8(message.data(), static_cast<Py_ssize_t>(message.size()), "backslashreplace"));
  if (!text) throw py::error_already_set();
  const py::object error = py::reinterpret_steal<py::object>(PyObject_CallOneArg(type, text.ptr()));
  if (!error) throw py::error_already_set();
  error.attr("code") = pmstore_code_name(static_cast<pmstore_code_t>(code));
  PyErr_SetObject(type, error.ptr());
  throw py::error_already_set();
}

bool IsAborted(const py::error_already_set& error) {
  return error.matches(g_by_code[static_cast<int>(absl::StatusCode::kAborted)]);
}

void RaiseKeyError(py::handle key) {
  PyErr_SetObject(PyExc_KeyError, key.ptr());
  throw py::error_already_set();
}

void RaiseValueError(const std::string& message) {
  PyErr_SetString(PyExc_ValueError, message.c_str());
  throw py::error_already_set();
}

}  // namespace pmstore::python
