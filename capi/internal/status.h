// SPDX-License-Identifier: Apache-2.0
// Owns how a C entry point fails (docs/C-ABI.md, "Errors"): the thread-local sc_last_error()
// text, the exception-to-status mapping, and the checks of struct_size fields. Nothing here
// allocates or throws, so failing never fails.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "scenecrdt/scenecrdt.h"

namespace scenecrdt::capi::internal {

// Records "function: <printf message>" as the calling thread's sc_last_error() and returns
// `status`. Messages longer than the buffer (1 KiB) are cut.
int Fail(int status, const char* function, const char* format, ...) noexcept
    __attribute__((format(printf, 3, 4)));

// Inside a catch block: maps the exception being handled to a status and records it.
// `broke_handle`: the exception interrupted a change, so the handle is now unusable, and
// the message says so.
int FailFromException(const char* function, bool broke_handle) noexcept;

// Runs `body` (returning a status) with every exception mapped to one. For calls that touch
// no handle state.
template <class Body>
int Guard(const char* function, Body&& body) noexcept {
  try {
    return body();
  } catch (...) {
    return FailFromException(function, false);
  }
}

// An input struct's struct_size must name a layout this library knows: at least the first
// (ABI 1) layout, at most the current one. A larger size comes from a newer header whose
// extra fields this library would silently ignore, so it is refused.
int CheckInputSize(uint32_t struct_size, std::size_t min_size, std::size_t known_size,
                   const char* type, const char* function) noexcept;

// Copies `value` into the caller's output struct `out`, whose struct_size (at least the ABI 1
// layout) says how much room it has: the fields both sides know are written, and
// out->struct_size is set to the size written.
template <class T>
int WriteOutput(const T& value, T* out, std::size_t min_size, const char* type,
                const char* function) noexcept {
  if (out == nullptr) return Fail(SC_E_INVALID_ARGUMENT, function, "%s pointer is NULL", type);
  if (out->struct_size < min_size) {
    return Fail(SC_E_INVALID_ARGUMENT, function,
                "%s.struct_size is %u; set it to sizeof(%s) (at least %zu)", type,
                static_cast<unsigned>(out->struct_size), type, min_size);
  }
  const std::size_t size = out->struct_size < sizeof(T) ? out->struct_size : sizeof(T);
  T copy = value;
  copy.struct_size = static_cast<uint32_t>(size);
  std::memcpy(static_cast<void*>(out), &copy, size);
  return SC_OK;
}

}  // namespace scenecrdt::capi::internal
