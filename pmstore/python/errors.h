// The module's exceptions and the one translation from absl::Status to
// them. Error codes keep the C API's names (pmstore_code_name), so a code
// reads the same from C and from Python.
#pragma once

#include <pybind11/pybind11.h>

#include <string>

#include "absl/status/status.h"

namespace pmstore::python {

namespace py = pybind11;

// Adds Error and its subclasses to `module`.
void RegisterErrors(py::module_& module);

// Sets the Python exception for `status` (not OK) and throws
// py::error_already_set, which pybind11 hands back to the interpreter.
[[noreturn]] void Raise(const absl::Status& status);
inline void ThrowIfError(const absl::Status& status) {
  if (!status.ok()) Raise(status);
}
// True when `error` is pmstore.Aborted (a transaction's conflict).
bool IsAborted(const py::error_already_set& error);
// KeyError(key): a missing key, as a mapping reports it.
[[noreturn]] void RaiseKeyError(py::handle key);
// ValueError(message): a call on an object that is closed, released or
// spent, or a bad option value.
[[noreturn]] void RaiseValueError(const std::string& message);

}  // namespace pmstore::python
