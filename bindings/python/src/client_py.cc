// SPDX-License-Identifier: Apache-2.0
// Owns scenecrdt.Client over the C ABI's sc_client (docs/C-ABI.md "Client"): poll releases
// the GIL while it waits (the client's mutex held, handles.h), everything else is a short call.
#include <pybind11/stl.h>

#include <array>
#include <cstring>
#include <memory>
#include <optional>
#include <string>

#include "bindings/python/src/errors.h"
#include "bindings/python/src/runtime_py.h"

namespace scenecrdt::python {
namespace py = pybind11;

namespace {

class PyClient {
 public:
  PyClient(const std::string& url, const std::optional<std::string>& scene,
           const std::optional<std::string>& token)
      : handle_(std::make_shared<ClientHandle>()) {
    handle_->client = sc_client_connect(url.c_str(), scene ? scene->c_str() : nullptr,
                                        token ? token->c_str() : nullptr);
    if (!handle_->client) RaiseStatus(SC_E_INVALID_ARGUMENT);
  }

  // Stops the network thread and frees the client; views of its replica stop working.
  void Close() {
    auto lock = LockClient(*handle_);
    sc_client_destroy(handle_->client);
    handle_->client = nullptr;
  }
  bool closed() const { return handle_->client == nullptr; }

  int Poll(uint32_t timeout_ms) {
    if (closed()) RaiseMisuse("scenecrdt.Client: used after close()");
    int frames = 0;
    {
      py::gil_scoped_release release;
      std::lock_guard<std::mutex> lock(handle_->mutex);
      frames = handle_->client ? sc_client_poll(handle_->client, timeout_ms) : SC_E_CLOSED;
    }
    // sc_last_error is per thread, and this is the thread that polled.
    if (frames < 0) RaiseStatus(frames);
    return frames;
  }

  // One short call under the client's mutex.
  template <class Call>
  int Run(Call&& call) {
    auto lock = LockClient(*handle_);
    if (!handle_->client) RaiseMisuse("scenecrdt.Client: used after close()");
    return Check(call(handle_->client));
  }

  PyRuntime* View() {
    auto lock = LockClient(*handle_);
    if (!handle_->client) RaiseMisuse("scenecrdt.Client: used after close()");
    const sc_runtime* view = sc_client_runtime(handle_->client);
    if (!view) RaiseStatus(SC_E_INTERNAL);
    return new PyRuntime(handle_, view);
  }

 private:
  std::shared_ptr<ClientHandle> handle_;
};

py::dict StatsDict(const sc_client_stats& s) {
  py::dict d;
  d["current_server"] = s.current_server;
  d["connects"] = s.connects;
  d["reconnects"] = s.reconnects;
  d["failovers"] = s.failovers;
  d["resumes"] = s.resumes;
  d["resyncs"] = s.resyncs;
  d["pending_frames"] = s.pending_frames;
  d["unsent_writes"] = s.unsent_writes;
  d["live_frames"] = s.live_frames;
  d["bytes_received"] = s.bytes_received;
  d["bytes_sent"] = s.bytes_sent;
  return d;
}

}  // namespace

void DefineClient(py::module_& m) {
  using Vec3 = std::array<float, 3>;
  using Quat = std::array<float, 4>;
  py::class_<PyClient>(m, "Client", "A networked replica of one scene (docs/BINDINGS.md).")
      .def(py::init<const std::string&, const std::optional<std::string>&,
                    const std::optional<std::string>&>(),
           py::arg("url"), py::arg("scene") = py::none(), py::arg("token") = py::none())
      .def("close", &PyClient::Close)
      .def_property_readonly("closed", &PyClient::closed)
      .def("__enter__", [](py::object self) { return self; })
      .def("__exit__", [](PyClient& self, py::args) { self.Close(); })
      .def("poll", &PyClient::Poll, py::arg("timeout_ms") = 0)
      .def_property_readonly("state_ready",
                             [](PyClient& self) { return self.Run(sc_client_state_ready) == 1; })
      .def_property_readonly("connected",
                             [](PyClient& self) { return self.Run(sc_client_connected) == 1; })
      .def_property_readonly("runtime", &PyClient::View, py::return_value_policy::take_ownership)
      .def(
          "write_transform",
          [](PyClient& self, uint32_t entity, const Vec3& position, const Quat& rotation,
             const Vec3& scale, uint32_t parent) {
            sc_transform t{};
            std::memcpy(t.position, position.data(), sizeof t.position);
            std::memcpy(t.rotation, rotation.data(), sizeof t.rotation);
            std::memcpy(t.scale, scale.data(), sizeof t.scale);
            t.parent = parent;
            self.Run([&](sc_client* c) { return sc_client_write_transform(c, entity, &t); });
          },
          py::arg("entity"), py::arg("position") = Vec3{0, 0, 0},
          py::arg("rotation") = Quat{0, 0, 0, 1}, py::arg("scale") = Vec3{1, 1, 1},
          py::arg("parent") = 0)
      .def(
          "delete_transform",
          [](PyClient& self, uint32_t entity) {
            self.Run([&](sc_client* c) { return sc_client_delete_transform(c, entity); });
          },
          py::arg("entity"))
      .def(
          "delete_entity",
          [](PyClient& self, uint32_t entity) {
            self.Run([&](sc_client* c) { return sc_client_delete_entity(c, entity); });
          },
          py::arg("entity"))
      .def("flush", [](PyClient& self) { self.Run(sc_client_flush); })
      .def("enable_interpolation",
           [](PyClient& self, const py::kwargs& options) {
             const sc_interpolation_options o = InterpolationOptions(options);
             self.Run([&](sc_client* c) { return sc_client_enable_interpolation(c, &o); });
           })
      .def("disable_interpolation",
           [](PyClient& self) { self.Run(sc_client_disable_interpolation); })
      .def(
          "update_interpolated",
          [](PyClient& self, int64_t render_time_us) {
            self.Run(
                [&](sc_client* c) { return sc_client_update_interpolated(c, render_time_us); });
          },
          py::arg("render_time_us"))
      .def("stats", [](PyClient& self) {
        sc_client_stats s{};
        s.struct_size = sizeof s;
        self.Run([&](sc_client* c) { return sc_client_get_stats(c, &s); });
        return StatsDict(s);
      });
}

}  // namespace scenecrdt::python
