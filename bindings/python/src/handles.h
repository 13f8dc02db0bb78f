// SPDX-License-Identifier: Apache-2.0
// Owns the handles behind the Python objects: PyRuntime (an owned sc_runtime, or the read-only
// view of a client's replica) and ClientHandle (an sc_client and the mutex that lets
// Client.poll release the GIL while another Python thread waits on the same client). The C ABI
// wants one thread per handle at a time (docs/C-ABI.md "Threading"): owned runtimes never
// release the GIL; everything on a client, views included, holds its mutex.
#pragma once

#include <scenecrdt/scenecrdt.h>

#include <memory>
#include <mutex>

namespace scenecrdt::python {

struct ClientHandle {
  sc_client* client = nullptr;  // nullptr once closed
  std::mutex mutex;
  ~ClientHandle() { sc_client_destroy(client); }
};

// Locks `h.mutex`; waits (if another thread holds it, e.g. in poll) with the GIL released, so
// no thread ever waits for the mutex while holding the GIL (no deadlock with poll).
std::unique_lock<std::mutex> LockClient(ClientHandle& h);

// A guard over one runtime call: holds the client's mutex for a view. Raises scenecrdt.Error
// when the runtime or its client is closed.
class RuntimeAccess;

class PyRuntime {
 public:
  PyRuntime();  // a new, empty replica (raises on failure)
  PyRuntime(std::shared_ptr<ClientHandle> owner, const sc_runtime* view)
      : handle_(const_cast<sc_runtime*>(view)), owner_(std::move(owner)) {}
  PyRuntime(const PyRuntime&) = delete;
  PyRuntime& operator=(const PyRuntime&) = delete;
  ~PyRuntime() { Close(); }

  // Frees an owned replica; a view is only detached.
  void Close();
  bool closed() const;
  bool is_view() const { return owner_ != nullptr; }

 private:
  friend class RuntimeAccess;
  sc_runtime* handle_ = nullptr;  // changes through a view are SC_E_READ_ONLY (the library)
  std::shared_ptr<ClientHandle> owner_;
};

class RuntimeAccess {
 public:
  explicit RuntimeAccess(PyRuntime& rt);
  sc_runtime* get() const { return rt_; }

 private:
  std::unique_lock<std::mutex> lock_;
  sc_runtime* rt_ = nullptr;
};

}  // namespace scenecrdt::python
