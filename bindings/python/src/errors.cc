// SPDX-License-Identifier: Apache-2.0
// Owns the exception objects: the classes live in scenecrdt/_errors.py (multiple bases are
// plain Python there) and are looked up once; each raise builds an instance and sets its
// attributes before handing it to Python.
#include "bindings/python/src/errors.h"

#include <scenecrdt/scenecrdt.h>

namespace scenecrdt::python {
namespace py = pybind11;

namespace {

// Borrowed for the life of the interpreter (never released: a static py::object would be
// destroyed after the interpreter at exit).
PyObject* error_module = nullptr;

[[noreturn]] void Raise(const char* cls_name, const std::string& message, py::dict attributes) {
  py::object cls = py::reinterpret_borrow<py::object>(error_module).attr(cls_name);
  py::object e = cls(message);
  for (auto item : attributes) e.attr(item.first) = item.second;
  PyErr_SetObject(cls.ptr(), e.ptr());
  throw py::error_already_set();
}

}  // namespace

void InitErrors() {
  if (error_module) return;
  error_module = py::module_::import("scenecrdt._errors").release().ptr();
}

void RaiseStatus(int status) {
  const std::string name = sc_error_name(status);
  const std::string text = sc_last_error();
  const char* cls = status == SC_E_DECODE             ? "DecodeError"
                    : status == SC_E_INVALID_ARGUMENT ? "ArgumentError"
                                                      : "Error";
  py::dict attributes;
  attributes["status"] = status;
  attributes["status_name"] = name;
  Raise(cls, name + ": " + text, attributes);
}

void RaiseKeyError(uint32_t entity) {
  PyErr_SetObject(PyExc_KeyError, py::int_(entity).ptr());
  throw py::error_already_set();
}

void RaiseMisuse(const std::string& what) {
  py::dict attributes;
  attributes["status"] = static_cast<int>(SC_E_INVALID_ARGUMENT);
  attributes["status_name"] = "SC_E_INVALID_ARGUMENT";
  Raise("Error", "SC_E_INVALID_ARGUMENT: " + what, attributes);
}

void RaiseDecode(const std::string& message, uint64_t offset) {
  py::dict attributes;
  attributes["status"] = static_cast<int>(SC_E_DECODE);
  attributes["status_name"] = "SC_E_DECODE";
  attributes["offset"] = offset;
  Raise("DecodeError", message, attributes);
}

void RaiseEncode(const std::string& message, std::size_t line) {
  py::dict attributes;
  attributes["line"] = line;
  attributes["index"] = line > 0 ? line - 1 : 0;
  Raise("EncodeError", message, attributes);
}

}  // namespace scenecrdt::python
