// SPDX-License-Identifier: Apache-2.0
// Owns the component reads of scenecrdt.Runtime (docs/COMPONENTS.md) over the C ABI:
// component(entity, component_id) -> bytes | None, append_values(...) -> [(timestamp, bytes)]
// | None, and the changed / added / removed (entity, component) lists of the last update.
#include <pybind11/stl.h>

#include <cstring>
#include <optional>
#include <utility>
#include <vector>

#include "bindings/python/src/errors.h"
#include "bindings/python/src/runtime_py.h"

namespace scenecrdt::python {
namespace py = pybind11;

namespace {

using Getter = int (*)(const sc_runtime*, uint32_t, uint32_t, uint8_t*, std::size_t, std::size_t*);

// A size query, then the copy (nothing changes in between: the handle is held); nullopt for
// SC_E_NOT_FOUND. Other statuses (SC_E_GROW_ONLY included) raise.
std::optional<std::vector<uint8_t>> Read(PyRuntime& self, Getter get, uint32_t entity,
                                         uint32_t component) {
  RuntimeAccess rt(self);
  std::size_t len = 0;
  int status = get(rt.get(), entity, component, nullptr, 0, &len);
  if (status == SC_E_NOT_FOUND) return std::nullopt;
  if (status != SC_E_BUFFER_TOO_SMALL) Check(status);
  std::vector<uint8_t> out(len);
  Check(get(rt.get(), entity, component, out.data(), out.size(), &len));
  out.resize(len);
  return out;
}

py::object Component(PyRuntime& self, uint32_t entity, uint32_t component) {
  const std::optional<std::vector<uint8_t>> value =
      Read(self, sc_runtime_get_component, entity, component);
  if (!value) return py::none();
  return py::bytes(reinterpret_cast<const char*>(value->data()), value->size());
}

uint32_t LoadU32(const uint8_t* p) {
  return static_cast<uint32_t>(p[0]) | static_cast<uint32_t>(p[1]) << 8 |
         static_cast<uint32_t>(p[2]) << 16 | static_cast<uint32_t>(p[3]) << 24;
}

py::object AppendValues(PyRuntime& self, uint32_t entity, uint32_t component) {
  const std::optional<std::vector<uint8_t>> records =
      Read(self, sc_runtime_copy_append_values, entity, component);
  if (!records) return py::none();
  py::list values;
  std::size_t at = 0;
  while (at + SC_APPEND_RECORD_HEADER_BYTES <= records->size()) {
    const uint32_t timestamp = LoadU32(records->data() + at);
    const uint32_t size = LoadU32(records->data() + at + 4);
    at += SC_APPEND_RECORD_HEADER_BYTES;
    values.append(py::make_tuple(
        timestamp, py::bytes(reinterpret_cast<const char*>(records->data() + at), size)));
    at += size;
  }
  return values;
}

using PairCopy = int (*)(const sc_runtime*, uint32_t*, uint32_t*, std::size_t, std::size_t*);

std::vector<std::pair<uint32_t, uint32_t>> Pairs(PyRuntime& self, PairCopy copy) {
  RuntimeAccess rt(self);
  std::size_t n = 0;
  const int status = copy(rt.get(), nullptr, nullptr, 0, &n);
  if (status != SC_E_BUFFER_TOO_SMALL) Check(status);
  std::vector<uint32_t> entities(n), components(n);
  Check(copy(rt.get(), entities.data(), components.data(), n, &n));
  std::vector<std::pair<uint32_t, uint32_t>> out;
  out.reserve(n);
  for (std::size_t i = 0; i < n; ++i) out.emplace_back(entities[i], components[i]);
  return out;
}

}  // namespace

void AddComponentMethods(py::class_<PyRuntime>& runtime) {
  runtime
      .def("component", &Component, py::arg("entity"), py::arg("component_id"),
           "The current value of the component (its last winning PUT's payload; the Transform "
           "as its 44 wire bytes), or None. Raises scenecrdt.Error (SC_E_GROW_ONLY) for a "
           "grow-only set: append_values.")
      .def("append_values", &AppendValues, py::arg("entity"), py::arg("component_id"),
           "The values of a grow-only (APPEND_VALUE) set as [(timestamp, bytes)], ascending, "
           "or None.")
      .def(
          "changed_components",
          [](PyRuntime& self) { return Pairs(self, sc_runtime_copy_changed_components); },
          "[(entity, component)] whose state the last update changed (added ones included).")
      .def(
          "added_components",
          [](PyRuntime& self) { return Pairs(self, sc_runtime_copy_added_components); },
          "[(entity, component)] absent at the update before, present now.")
      .def(
          "removed_components",
          [](PyRuntime& self) { return Pairs(self, sc_runtime_copy_removed_components); },
          "[(entity, component)] present at the update before, absent now.");
}

}  // namespace scenecrdt::python
