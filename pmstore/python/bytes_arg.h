// Keys and values from Python: bytes (the fast path) or anything with the
// buffer protocol (bytearray, memoryview, mmap, numpy arrays). str is
// refused: a key's bytes must be the caller's choice, not an encoding's.
#pragma once

#include <pybind11/pybind11.h>

#include <string_view>

namespace pmstore::python {

namespace py = pybind11;

class BytesArg {
 public:
  // Raises TypeError naming `what` ("key", "value") for anything else.
  BytesArg(py::handle object, const char* what) {
    if (PyBytes_Check(object.ptr())) {
      view_ = std::string_view(PyBytes_AS_STRING(object.ptr()), PyBytes_GET_SIZE(object.ptr()));
      return;
    }
    if (PyUnicode_Check(object.ptr()) || PyObject_GetBuffer(object.ptr(), &buffer_, PyBUF_SIMPLE) != 0) {
      PyErr_Clear();
      PyErr_Format(PyExc_TypeError, "a pmstore %s is bytes (or a bytes-like object), not %s%s", what,
                   Py_TYPE(object.ptr())->tp_name, PyUnicode_Check(object.ptr()) ? ": encode it first" : "");
      throw py::error_already_set();
    }
    held_ = true;
    view_ = std::string_view(static_cast<const char*>(buffer_.buf), static_cast<size_t>(buffer_.len));
  }
  ~BytesArg() {
    if (held_) PyBuffer_Release(&buffer_);
  }
  BytesArg(const BytesArg&) = delete;
  BytesArg& operator=(const BytesArg&) = delete;

  std::string_view view() const { return view_; }

 private:
  Py_buffer buffer_{};
  bool held_ = false;
  std::string_view view_;
};

inline py::bytes ToBytes(std::string_view bytes) { return py::bytes(bytes.data(), bytes.size()); }

}  // namespace pmstore::python
