// SPDX-License-Identifier: Apache-2.0
// Owns the library-wide C entry points (sc_abi_version, sc_last_error, sc_error_name,
// sc_now_us) and the failure recording behind every other one. The last error lives in a
// fixed thread-local buffer: recording an error must not allocate, since out of memory is
// one of the errors.
#include "scenecrdt/capi/internal/status.h"

#include <chrono>
#include <cstdarg>
#include <cstdio>
#include <exception>
#include <new>

namespace scenecrdt::capi::internal {
namespace {

constexpr std::size_t kLastErrorBytes = 1024;
thread_local char tl_last_error[kLastErrorBytes] = "";

}  // namespace

int Fail(int status, const char* function, const char* format, ...) noexcept {
  const int prefix = std::snprintf(tl_last_error, kLastErrorBytes, "%s: ", function);
  if (prefix > 0 && static_cast<std::size_t>(prefix) < kLastErrorBytes) {
    va_list args;
    va_start(args, format);
    std::vsnprintf(tl_last_error + prefix, kLastErrorBytes - static_cast<std::size_t>(prefix),
                   format, args);
    va_end(args);
  }
  return status;
}

int FailFromException(const char* function, bool broke_handle) noexcept {
  const char* consequence =
      broke_handle ? "; the handle is unusable now (SC_E_BROKEN from here on): destroy it" : "";
  try {
    throw;
  } catch (const std::bad_alloc&) {
    return Fail(SC_E_NO_MEMORY, function, "out of memory%s", consequence);
  } catch (const std::exception& e) {
    return Fail(SC_E_INTERNAL, function, "internal error: %s%s", e.what(), consequence);
  } catch (...) {
    return Fail(SC_E_INTERNAL, function, "internal error: unknown exception%s", consequence);
  }
}

int CheckInputSize(uint32_t struct_size, std::size_t min_size, std::size_t known_size,
                   const char* type, const char* function) noexcept {
  if (struct_size < min_size) {
    return Fail(SC_E_INVALID_ARGUMENT, function,
                "%s.struct_size is %u; set it to sizeof(%s) (at least %zu)", type,
                static_cast<unsigned>(struct_size), type, min_size);
  }
  if (struct_size > known_size) {
    return Fail(SC_E_INVALID_ARGUMENT, function,
                "%s.struct_size is %u, larger than this library's %zu: the caller was built "
                "against a newer scenecrdt.h whose fields this library would ignore",
                type, static_cast<unsigned>(struct_size), known_size);
  }
  return SC_OK;
}

}  // namespace scenecrdt::capi::internal

extern "C" {

uint32_t sc_abi_version(void) { return SC_ABI_VERSION; }

const char* sc_last_error(void) { return scenecrdt::capi::internal::tl_last_error; }

const char* sc_error_name(int status) {
  switch (status) {
    case SC_OK:
      return "SC_OK";
    case SC_E_INVALID_ARGUMENT:
      return "SC_E_INVALID_ARGUMENT";
    case SC_E_NOT_FOUND:
      return "SC_E_NOT_FOUND";
    case SC_E_BUFFER_TOO_SMALL:
      return "SC_E_BUFFER_TOO_SMALL";
    case SC_E_DECODE:
      return "SC_E_DECODE";
    case SC_E_REFUSED:
      return "SC_E_REFUSED";
    case SC_E_READ_ONLY:
      return "SC_E_READ_ONLY";
    case SC_E_NO_MEMORY:
      return "SC_E_NO_MEMORY";
    case SC_E_BROKEN:
      return "SC_E_BROKEN";
    case SC_E_INTERNAL:
      return "SC_E_INTERNAL";
    case SC_E_CLOSED:
      return "SC_E_CLOSED";
    case SC_E_UNSUPPORTED:
      return "SC_E_UNSUPPORTED";
    case SC_E_FULL:
      return "SC_E_FULL";
    case SC_E_GROW_ONLY:
      return "SC_E_GROW_ONLY";
    default:
      return "SC_E_UNKNOWN";
  }
}

int64_t sc_now_us(void) {
  return std::chrono::duration_cast<std::chrono::microseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

}  // extern "C"
