// SPDX-License-Identifier: Apache-2.0
// Owns scenecrdt.Runtime: every call goes through the C ABI (docs/C-ABI.md) on an owned
// sc_runtime or a client's read-only view; results become Python values (tuples, dicts,
// bytes, numpy arrays). Bulk reads are one C ABI copy each.
#include "bindings/python/src/runtime_py.h"

#include <pybind11/numpy.h>
#include <pybind11/stl.h>

#include <array>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "bindings/python/src/errors.h"

namespace scenecrdt::python {
namespace py = pybind11;

std::unique_lock<std::mutex> LockClient(ClientHandle& h) {
  std::unique_lock<std::mutex> lock(h.mutex, std::try_to_lock);
  if (!lock.owns_lock()) {
    py::gil_scoped_release release;
    lock.lock();
  }
  return lock;
}

PyRuntime::PyRuntime() : handle_(sc_runtime_create()) {
  if (!handle_) RaiseStatus(SC_E_NO_MEMORY);
}

void PyRuntime::Close() {
  if (!owner_) sc_runtime_destroy(handle_);
  handle_ = nullptr;
}

bool PyRuntime::closed() const {
  return handle_ == nullptr || (owner_ && owner_->client == nullptr);
}

RuntimeAccess::RuntimeAccess(PyRuntime& rt) {
  if (rt.owner_) lock_ = LockClient(*rt.owner_);
  if (rt.closed()) {
    RaiseMisuse(rt.owner_ ? "scenecrdt.Runtime: the view's Client is closed"
                          : "scenecrdt.Runtime: used after close()");
  }
  rt_ = rt.handle_;
}

namespace {

using Matrix = std::array<float, 16>;

sc_transform MakeTransform(const std::array<float, 3>& position,
                           const std::array<float, 4>& rotation, const std::array<float, 3>& scale,
                           uint32_t parent) {
  sc_transform t{};
  std::memcpy(t.position, position.data(), sizeof t.position);
  std::memcpy(t.rotation, rotation.data(), sizeof t.rotation);
  std::memcpy(t.scale, scale.data(), sizeof t.scale);
  t.parent = parent;
  return t;
}

py::dict ApplyStatsDict(const sc_apply_stats& s) {
  py::dict d;
  d["calls"] = s.calls;
  d["messages"] = s.messages;
  d["changed"] = s.changed;
  d["ignored"] = s.ignored;
  d["refused"] = s.refused;
  d["decode_errors"] = s.decode_errors;
  return d;
}

sc_apply_stats ApplyStats(const sc_runtime* rt) {
  sc_apply_stats s{};
  s.struct_size = sizeof s;
  Check(sc_runtime_apply_stats(rt, &s));
  return s;
}

// What one apply did: the difference of the handle's totals around the call.
py::dict Apply(PyRuntime& self, const py::buffer& data, bool timed, int64_t receive_us,
               int64_t sender_us) {
  const py::buffer_info info = data.request();
  if (info.ndim != 1 || info.itemsize != 1 || (info.ndim == 1 && info.strides[0] != 1)) {
    throw py::type_error("scenecrdt.Runtime.apply: expects contiguous bytes");
  }
  RuntimeAccess rt(self);
  const sc_apply_stats before = ApplyStats(rt.get());
  const auto* bytes = static_cast<const uint8_t*>(info.ptr);
  const auto len = static_cast<std::size_t>(info.size);
  Check(timed ? sc_runtime_apply_at(rt.get(), bytes, len, receive_us, sender_us)
              : sc_runtime_apply(rt.get(), bytes, len));
  const sc_apply_stats after = ApplyStats(rt.get());
  py::dict d;
  d["messages"] = after.messages - before.messages;
  d["changed"] = after.changed - before.changed;
  d["ignored"] = after.ignored - before.ignored;
  d["refused"] = after.refused - before.refused;
  return d;
}

py::tuple MatrixTuple(const Matrix& m) {
  py::tuple t(16);
  for (std::size_t i = 0; i < 16; ++i) t[i] = m[i];
  return t;
}

py::tuple WorldMatrix(PyRuntime& self, uint32_t entity, bool interpolated) {
  Matrix m{};
  {
    RuntimeAccess rt(self);
    const int status = interpolated
                           ? sc_runtime_interpolated_world_matrix(rt.get(), entity, m.data())
                           : sc_runtime_world_matrix(rt.get(), entity, m.data());
    if (status == SC_E_NOT_FOUND) RaiseKeyError(entity);
    Check(status);
  }
  return MatrixTuple(m);
}

using IdsCopy = int (*)(const sc_runtime*, uint32_t*, std::size_t, std::size_t*);
using WorldCopy = int (*)(const sc_runtime*, uint32_t*, float*, std::size_t, std::size_t*);

// A size query, then the copy (nothing changes in between: the handle is ours).
std::vector<uint32_t> CopyIds(PyRuntime& self, IdsCopy copy) {
  RuntimeAccess rt(self);
  std::size_t n = 0;
  const int status = copy(rt.get(), nullptr, 0, &n);
  if (status != SC_E_BUFFER_TOO_SMALL) Check(status);
  std::vector<uint32_t> ids(n);
  Check(copy(rt.get(), ids.data(), ids.size(), &n));
  ids.resize(n);
  return ids;
}

// (entities uint32 (N,), matrices float32 (N, 4, 4)) with matrices[i][row][column]: the C
// ABI's column-major floats, viewed transposed (no copy), so matrices[i] @ v transforms v.
// The count comes from *_entity_count (cheap): a size query through the copy itself would list
// and sort the nodes twice.
py::tuple WorldArray(PyRuntime& self, bool interpolated) {
  WorldCopy copy = interpolated ? sc_runtime_copy_interpolated_world : sc_runtime_copy_world;
  RuntimeAccess rt(self);
  std::size_t n = interpolated ? sc_runtime_interpolated_entity_count(rt.get())
                               : sc_runtime_entity_count(rt.get());
  while (true) {
    const auto count = static_cast<py::ssize_t>(n);
    py::array_t<uint32_t> ids(count);
    py::array_t<float> columns({count, py::ssize_t{4}, py::ssize_t{4}});
    const int status = copy(rt.get(), ids.mutable_data(), columns.mutable_data(), n, &n);
    if (status == SC_E_BUFFER_TOO_SMALL) continue;  // `n` is now the size needed
    Check(status);
    if (static_cast<py::ssize_t>(n) < count) {
      ids.resize({static_cast<py::ssize_t>(n)});
      columns.resize({static_cast<py::ssize_t>(n), py::ssize_t{4}, py::ssize_t{4}});
    }
    return py::make_tuple(ids, columns.attr("transpose")(0, 2, 1));
  }
}

py::dict TransformDict(const sc_transform& t) {
  py::dict d;
  d["position"] = py::make_tuple(t.position[0], t.position[1], t.position[2]);
  d["rotation"] = py::make_tuple(t.rotation[0], t.rotation[1], t.rotation[2], t.rotation[3]);
  d["scale"] = py::make_tuple(t.scale[0], t.scale[1], t.scale[2]);
  d["parent"] = t.parent;
  return d;
}

py::list Nodes(PyRuntime& self) {
  RuntimeAccess rt(self);
  std::size_t n = sc_runtime_entity_count(rt.get());
  std::vector<uint32_t> ids;
  std::vector<float> matrices;
  int status = SC_E_BUFFER_TOO_SMALL;
  while (status == SC_E_BUFFER_TOO_SMALL) {
    ids.resize(n);
    matrices.resize(16 * n);
    status = sc_runtime_copy_world(rt.get(), ids.data(), matrices.data(), n, &n);
  }
  Check(status);
  py::list nodes;
  for (std::size_t i = 0; i < n; ++i) {
    sc_node_info info{};
    info.struct_size = sizeof info;
    Check(sc_runtime_node_info(rt.get(), ids[i], &info));
    py::dict d;
    d["entity"] = ids[i];
    d["parent"] = info.effective_parent;
    d["declared_parent"] = info.declared_parent;
    d["parked"] = info.parked != 0;
    d["placeholder"] = info.placeholder != 0;
    nodes.append(d);
  }
  return nodes;
}

using LocalWrite = int (*)(sc_runtime*, uint32_t, uint8_t*, std::size_t, std::size_t*);

py::bytes WriteResult(const std::array<uint8_t, SC_WRITE_MAX_BYTES>& msg, std::size_t len) {
  return py::bytes(reinterpret_cast<const char*>(msg.data()), len);
}

py::bytes Delete(PyRuntime& self, uint32_t entity, LocalWrite write) {
  std::array<uint8_t, SC_WRITE_MAX_BYTES> msg{};
  std::size_t len = 0;
  {
    RuntimeAccess rt(self);
    Check(write(rt.get(), entity, msg.data(), msg.size(), &len));
  }
  return WriteResult(msg, len);
}

py::dict InterpolationStatsDict(const sc_interpolation_stats& s) {
  py::dict d;
  d["buffer_depth"] = s.buffer_depth;
  d["tracked_entities"] = s.tracked_entities;
  d["active_entities"] = s.active_entities;
  d["playback_time_us"] = s.playback_time_us;
  d["delay_us"] = s.delay_us;
  d["target_delay_us"] = s.target_delay_us;
  d["interval_us"] = s.interval_us;
  d["jitter_us"] = s.jitter_us;
  d["frames"] = s.frames;
  d["stalled_frames"] = s.stalled_frames;
  d["extrapolated_frames"] = s.extrapolated_frames;
  d["snaps"] = s.snaps;
  d["entities_added"] = s.entities_added;
  d["entities_removed"] = s.entities_removed;
  d["late_batches"] = s.late_batches;
  d["resets"] = s.resets;
  d["dropped_samples"] = s.dropped_samples;
  d["time_regressions"] = s.time_regressions;
  return d;
}

}  // namespace

sc_interpolation_options InterpolationOptions(const py::kwargs& options) {
  sc_interpolation_options o{};
  Check(sc_interpolation_options_default(&o));
  for (auto item : options) {
    const std::string key = py::str(item.first);
    const py::handle v = item.second;
    if (key == "snap_distance")
      o.snap_distance = v.cast<float>();
    else if (key == "fixed_delay_us")
      o.fixed_delay_us = v.cast<int64_t>();
    else if (key == "initial_delay_us")
      o.initial_delay_us = v.cast<int64_t>();
    else if (key == "min_delay_us")
      o.min_delay_us = v.cast<int64_t>();
    else if (key == "max_delay_us")
      o.max_delay_us = v.cast<int64_t>();
    else if (key == "interval_multiple")
      o.interval_multiple = v.cast<double>();
    else if (key == "jitter_multiple")
      o.jitter_multiple = v.cast<double>();
    else if (key == "catch_up")
      o.catch_up = v.cast<double>();
    else if (key == "slow_down")
      o.slow_down = v.cast<double>();
    else if (key == "max_extrapolation_us")
      o.max_extrapolation_us = v.cast<int64_t>();
    else if (key == "max_interval_us")
      o.max_interval_us = v.cast<int64_t>();
    else
      throw py::type_error("unknown interpolation option '" + key + "' (docs/C-ABI.md)");
  }
  return o;
}

void DefineRuntime(py::module_& m) {
  using Vec3 = std::array<float, 3>;
  using Quat = std::array<float, 4>;
  py::class_<PyRuntime> runtime(m, "Runtime", "A replica of one scene (docs/BINDINGS.md).");
  AddComponentMethods(runtime);
  runtime.def(py::init<>())
      .def("close", &PyRuntime::Close)
      .def_property_readonly("closed", &PyRuntime::closed)
      .def_property_readonly("is_view", &PyRuntime::is_view)
      .def("__enter__", [](py::object self) { return self; })
      .def("__exit__", [](PyRuntime& self, py::args) { self.Close(); })
      .def(
          "apply",
          [](PyRuntime& self, const py::buffer& data) { return Apply(self, data, false, 0, 0); },
          py::arg("data"))
      .def(
          "apply_at",
          [](PyRuntime& self, const py::buffer& data, int64_t receive_us,
             std::optional<int64_t> sender_us) {
            return Apply(self, data, true, receive_us, sender_us.value_or(SC_NO_SENDER_TIME));
          },
          py::arg("data"), py::arg("receive_us"), py::arg("sender_us") = py::none())
      .def("apply_stats",
           [](PyRuntime& self) {
             RuntimeAccess rt(self);
             return ApplyStatsDict(ApplyStats(rt.get()));
           })
      .def("update",
           [](PyRuntime& self) {
             RuntimeAccess rt(self);
             Check(sc_runtime_update(rt.get()));
           })
      .def_property_readonly("entity_count",
                             [](PyRuntime& self) {
                               RuntimeAccess rt(self);
                               return sc_runtime_entity_count(rt.get());
                             })
      .def(
          "world_matrix",
          [](PyRuntime& self, uint32_t entity) { return WorldMatrix(self, entity, false); },
          py::arg("entity"))
      .def(
          "world_array",
          [](PyRuntime& self, bool interpolated) { return WorldArray(self, interpolated); },
          py::arg("interpolated") = false)
      .def("state_hash",
           [](PyRuntime& self) {
             std::array<char, SC_STATE_HASH_CHARS> hex{};
             RuntimeAccess rt(self);
             Check(sc_runtime_state_hash(rt.get(), hex.data(), hex.size()));
             return std::string(hex.data());
           })
      .def(
          "transform",
          [](PyRuntime& self, uint32_t entity) {
            sc_transform t{};
            {
              RuntimeAccess rt(self);
              const int status = sc_runtime_get_transform(rt.get(), entity, &t);
              if (status == SC_E_NOT_FOUND) RaiseKeyError(entity);
              Check(status);
            }
            return TransformDict(t);
          },
          py::arg("entity"))
      .def("nodes", &Nodes)
      .def("changed", [](PyRuntime& self) { return CopyIds(self, sc_runtime_copy_changed); })
      .def("added", [](PyRuntime& self) { return CopyIds(self, sc_runtime_copy_added); })
      .def("removed", [](PyRuntime& self) { return CopyIds(self, sc_runtime_copy_removed); })
      .def(
          "write_transform",
          [](PyRuntime& self, uint32_t entity, const Vec3& position, const Quat& rotation,
             const Vec3& scale, uint32_t parent) {
            const sc_transform t = MakeTransform(position, rotation, scale, parent);
            std::array<uint8_t, SC_WRITE_MAX_BYTES> msg{};
            std::size_t len = 0;
            {
              RuntimeAccess rt(self);
              Check(sc_runtime_write_transform(rt.get(), entity, &t, msg.data(), msg.size(), &len));
            }
            return WriteResult(msg, len);
          },
          py::arg("entity"), py::arg("position") = Vec3{0, 0, 0},
          py::arg("rotation") = Quat{0, 0, 0, 1}, py::arg("scale") = Vec3{1, 1, 1},
          py::arg("parent") = 0)
      .def(
          "delete_transform",
          [](PyRuntime& self, uint32_t entity) {
            return Delete(self, entity, sc_runtime_delete_transform);
          },
          py::arg("entity"))
      .def(
          "delete_entity",
          [](PyRuntime& self, uint32_t entity) {
            return Delete(self, entity, sc_runtime_delete_entity);
          },
          py::arg("entity"))
      .def("enable_interpolation",
           [](PyRuntime& self, const py::kwargs& options) {
             const sc_interpolation_options o = InterpolationOptions(options);
             RuntimeAccess rt(self);
             Check(sc_runtime_enable_interpolation(rt.get(), &o));
           })
      .def("disable_interpolation",
           [](PyRuntime& self) {
             RuntimeAccess rt(self);
             Check(sc_runtime_disable_interpolation(rt.get()));
           })
      .def_property_readonly("interpolation_enabled",
                             [](PyRuntime& self) {
                               RuntimeAccess rt(self);
                               return Check(sc_runtime_interpolation_enabled(rt.get())) == 1;
                             })
      .def(
          "update_interpolated",
          [](PyRuntime& self, int64_t render_time_us) {
            RuntimeAccess rt(self);
            Check(sc_runtime_update_interpolated(rt.get(), render_time_us));
          },
          py::arg("render_time_us"))
      .def(
          "interpolated_world_matrix",
          [](PyRuntime& self, uint32_t entity) { return WorldMatrix(self, entity, true); },
          py::arg("entity"))
      .def("interpolation_stats", [](PyRuntime& self) {
        sc_interpolation_stats s{};
        s.struct_size = sizeof s;
        RuntimeAccess rt(self);
        Check(sc_runtime_interpolation_stats(rt.get(), &s));
        return InterpolationStatsDict(s);
      });
}

}  // namespace scenecrdt::python
