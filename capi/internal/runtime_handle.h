// SPDX-License-Identifier: Apache-2.0
// Owns struct sc_runtime, the object behind the C handle: a replica it owns
// (sc_runtime_create), or a read-only view of a runtime that belongs to someone else (what
// sc_client_runtime hands out: writes through it are SC_E_READ_ONLY). Also the handle checks
// and the guard every entry point runs its body in (docs/C-ABI.md, "Errors").
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "scenecrdt/capi/internal/status.h"
#include "scenecrdt/runtime/runtime.h"
#include "scenecrdt/scenecrdt.h"

struct sc_runtime {
  // A new, empty replica owned by the handle.
  sc_runtime()
      : owned(std::make_unique<scenecrdt::runtime::Runtime>()),
        read(owned.get()),
        write(owned.get()) {}
  // A read-only view of `view`, which must outlive the handle.
  explicit sc_runtime(const scenecrdt::runtime::Runtime& view) : read(&view) {}

  std::unique_ptr<scenecrdt::runtime::Runtime> owned;  // empty for a view
  const scenecrdt::runtime::Runtime* read = nullptr;   // what reads see
  scenecrdt::runtime::Runtime* write = nullptr;        // nullptr: read-only view
  // An exception interrupted a change: the runtime's invariants may be broken, so every
  // later call but destroy is refused (SC_E_BROKEN).
  bool broken = false;
  sc_apply_stats apply_totals{};
  std::vector<uint8_t> write_buffer;  // the message of the last local write
};

namespace scenecrdt::capi::internal {

// SC_OK, or records why `rt` cannot be read (NULL, broken) and returns that status.
int CheckRead(const sc_runtime* rt, const char* function) noexcept;
// CheckRead, and SC_E_READ_ONLY for a view.
int CheckWrite(const sc_runtime* rt, const char* function) noexcept;

// Runs body(const Runtime&) -> status on a readable handle; exceptions become statuses
// (reads change nothing, so the handle stays usable).
template <class Body>
int GuardRead(const sc_runtime* rt, const char* function, Body&& body) noexcept {
  if (const int status = CheckRead(rt, function); status != SC_OK) return status;
  try {
    return body(*rt->read);
  } catch (...) {
    return FailFromException(function, false);
  }
}

// Runs body(Runtime&) -> status on a writable handle. An exception escaping the body left the
// change half done: the handle is marked broken.
template <class Body>
int GuardWrite(sc_runtime* rt, const char* function, Body&& body) noexcept {
  if (const int status = CheckWrite(rt, function); status != SC_OK) return status;
  try {
    return body(*rt->write);
  } catch (...) {
    rt->broken = true;
    return FailFromException(function, true);
  }
}

}  // namespace scenecrdt::capi::internal
