// SPDX-License-Identifier: Apache-2.0
// Owns Error, ErrorCode and Result<T>: how every recoverable or wire error travels.
// Result's member names match std::expected so a C++23 move is a type alias. No operator bool.
#pragma once

#include <cstdint>
#include <type_traits>
#include <utility>
#include <variant>

#include "scenecrdt/protocol/check.h"

namespace scenecrdt {

// One value per reason a message, frame, file or request can be refused. The numeric values
// are part of the session protocol (Error.code on the wire): append only, never renumber.
enum class ErrorCode : uint16_t {
  kOk = 0,
  // DCL CRDT stream decoding (docs/PROTOCOL.md section 1).
  kTruncated = 1,           // the input ends inside a message
  kLengthTooSmall = 2,      // header length < 8
  kLengthTooLarge = 3,      // header length above the configured maximum
  kLengthMismatch = 4,      // a fixed-size type declared another length
  kDataLengthMismatch = 5,  // length != header + dataLength (PUT, APPEND, PUT_NETWORK)
  kUnknownMessageType = 6,  // only when the caller asked to reject unknown types
  // Session envelope (docs/PROTOCOL.md section 2).
  kEnvelopeInvalid = 20,    // failed flatbuffers verification
  kProtocolVersion = 21,    // unsupported envelope version
  kUnexpectedPayload = 22,  // a payload not allowed at this point of the session
  kFrameTooLarge = 23,      // frame above the configured maximum
  // CRDT store refusals.
  kReservedEntity = 40,      // DELETE_ENTITY for a number below 512
  kNonFiniteTransform = 41,  // Transform with NaN or infinite floats
  kPayloadTooLarge = 42,     // component payload above the configured maximum
  kTooManyEntities = 43,     // scene entity limit reached
  kTooManyTombstones = 44,   // scene tombstone limit reached
  kBadTransformSize = 45,    // Transform PUT whose payload is not 44 bytes
  // Session and server refusals.
  kUnauthorized = 60,  // missing or wrong token, or scene not allowed
  kReadOnly = 61,      // write from a read-only session
  kRateLimited = 62,   // over the messages-per-second budget
  kSlowConsumer = 63,  // could not keep up; dropped
  kShuttingDown = 64,  // the server is stopping
  kSceneFull = 65,     // too many sessions in the scene
  kBadRequest = 66,    // malformed request (HTTP path, scene name, ...)
  kUnavailable = 67,   // a backend the write needs (the cluster's Redis) is unreachable: not acked
  kStorageUnavailable = 68,  // the server's commits fail (disk full, I/O): merged, not acked yet
  kSceneTooLarge = 69,       // the write would grow the scene past --max-scene-bytes
  kInvalidInterest = 70,     // SetInterest with a NaN, infinite or negative radius or centre
  kSceneDeleted = 71,  // an operator deleted the scene (admin API): join again for an empty one
  // Authority (docs/AUTHORITY.md): 75-79.
  kNotOwner = 75,             // a write to an entity another principal owns
  kServerOnlyComponent = 76,  // a component only the server writes (rules mode)
  kNotAdmin = 77,             // an admin-only action by a non-admin principal
  // Local failures (files, text formats, arguments).
  kIo = 80,
  kParse = 81,
  kInvalidArgument = 82,
  kCorruptData = 83,
};

// A short, stable, lower_snake name ("length_too_small"); "unknown" for values we do not know.
const char* ErrorCodeName(ErrorCode code);

// An error: a code, a static human-readable reason (never allocated), and where it happened
// (a byte offset into the input, or kNoOffset).
struct Error {
  static constexpr uint64_t kNoOffset = ~uint64_t{0};
  ErrorCode code = ErrorCode::kOk;
  const char* detail = "";
  uint64_t offset = kNoOffset;

  bool has_offset() const { return offset != kNoOffset; }
};

template <class T>
class [[nodiscard]] Result {
 public:
  using value_type = T;
  using error_type = Error;

  Result(const T& value) : storage_(value) {}        // NOLINT(google-explicit-constructor)
  Result(T&& value) : storage_(std::move(value)) {}  // NOLINT(google-explicit-constructor)
  Result(const Error& error) : storage_(error) {}    // NOLINT(google-explicit-constructor)

  bool has_value() const { return storage_.index() == 0; }
  T& value() & {
    SCENECRDT_CHECK(has_value(), "Result::value() on an error");
    return *std::get_if<0>(&storage_);
  }
  const T& value() const& {
    SCENECRDT_CHECK(has_value(), "Result::value() on an error");
    return *std::get_if<0>(&storage_);
  }
  T&& value() && {
    SCENECRDT_CHECK(has_value(), "Result::value() on an error");
    return std::move(*std::get_if<0>(&storage_));
  }
  const Error& error() const {
    SCENECRDT_CHECK(!has_value(), "Result::error() on a value");
    return *std::get_if<1>(&storage_);
  }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }

 private:
  std::variant<T, Error> storage_;
};

template <>
class [[nodiscard]] Result<void> {
 public:
  using value_type = void;
  using error_type = Error;

  Result() = default;
  Result(const Error& error) : error_(error), ok_(false) {}  // NOLINT(google-explicit-constructor)

  bool has_value() const { return ok_; }
  void value() const { SCENECRDT_CHECK(ok_, "Result<void>::value() on an error"); }
  const Error& error() const {
    SCENECRDT_CHECK(!ok_, "Result::error() on a value");
    return error_;
  }

 private:
  Error error_{};
  bool ok_ = true;
};

inline Error MakeError(ErrorCode code, const char* detail, uint64_t offset = Error::kNoOffset) {
  return Error{code, detail, offset};
}

}  // namespace scenecrdt
