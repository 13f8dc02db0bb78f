// SPDX-License-Identifier: Apache-2.0
// Owns the translation of C ABI statuses into the Python exceptions of scenecrdt._errors
// (Error, DecodeError, ArgumentError, EncodeError; docs/BINDINGS.md "Errors"): the library's
// sc_last_error() text, read at once on the failing thread, plus the status and its name.
#pragma once

#include <pybind11/pybind11.h>

#include <cstdint>
#include <string>

namespace scenecrdt::python {

// Imports scenecrdt._errors once, at module initialisation.
void InitErrors();

// Raises the exception for a negative C ABI status (DecodeError for SC_E_DECODE,
// ArgumentError for SC_E_INVALID_ARGUMENT, Error otherwise).
[[noreturn]] void RaiseStatus(int status);

// Raises for `status` when it is negative; returns it otherwise.
inline int Check(int status) {
  if (status < 0) RaiseStatus(status);
  return status;
}

// KeyError(entity): the entity is not in the scene (or has no Transform).
[[noreturn]] void RaiseKeyError(uint32_t entity);

// A misuse caught here (a closed handle): Error with SC_E_INVALID_ARGUMENT's name.
[[noreturn]] void RaiseMisuse(const std::string& what);

// decode(): DecodeError with `offset` (the faulty message's byte offset).
[[noreturn]] void RaiseDecode(const std::string& message, uint64_t offset);

// encode(): EncodeError with `line` (1-based) and `index` (0-based, the message's).
[[noreturn]] void RaiseEncode(const std::string& message, std::size_t line);

}  // namespace scenecrdt::python
