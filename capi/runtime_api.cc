// SPDX-License-Identifier: Apache-2.0
// Owns the C entry points that create, feed and change an sc_runtime: create / destroy, apply
// (with the `scenecrdt replay` rules: the whole stream is decoded before anything merges, so a
// malformed one changes nothing), update, and the local Lamport writes that return the DCL
// message to send. Reads are in runtime_reads.cc.
#include <cinttypes>
#include <cstring>
#include <initializer_list>
#include <span>

#include "scenecrdt/capi/internal/conversions.h"
#include "scenecrdt/capi/internal/runtime_handle.h"
#include "scenecrdt/protocol/crdt_codec.h"
#include "scenecrdt/protocol/crdt_message.h"

namespace scenecrdt::capi::internal {

int CheckRead(const sc_runtime* rt, const char* function) noexcept {
  if (rt == nullptr) return Fail(SC_E_INVALID_ARGUMENT, function, "rt is NULL");
  if (rt->broken) {
    return Fail(SC_E_BROKEN, function,
                "the runtime failed internally earlier (see that call's error); destroy it");
  }
  return SC_OK;
}

int CheckWrite(const sc_runtime* rt, const char* function) noexcept {
  if (const int status = CheckRead(rt, function); status != SC_OK) return status;
  if (rt->write == nullptr) {
    return Fail(SC_E_READ_ONLY, function,
                "this runtime is a read-only view (its client writes: sc_client_*)");
  }
  return SC_OK;
}

protocol::Transform ToTransform(const sc_transform& t) {
  protocol::Transform out;
  out.position = {t.position[0], t.position[1], t.position[2]};
  out.rotation = {t.rotation[0], t.rotation[1], t.rotation[2], t.rotation[3]};
  out.scale = {t.scale[0], t.scale[1], t.scale[2]};
  out.parent = t.parent;
  return out;
}

namespace {

using protocol::DecodeOptions;
using runtime::BatchTime;
using runtime::MergeOutcome;
using runtime::MergeStats;

bool ValidTime(int64_t us) { return us >= -runtime::kMaxTimeUs && us <= runtime::kMaxTimeUs; }

uint64_t Outcomes(const MergeStats& stats, std::initializer_list<MergeOutcome> outcomes) {
  uint64_t n = 0;
  for (MergeOutcome o : outcomes) n += stats.by_outcome[static_cast<int>(o)];
  return n;
}

// Validates `bytes` as `scenecrdt replay` does (a strict decode of the whole stream with the
// default options), then merges them, untimed or as one timed batch.
int Apply(sc_runtime* rt, const uint8_t* dcl, std::size_t len, const BatchTime* time,
          const char* function) {
  return GuardWrite(rt, function, [&](runtime::Runtime& replica) -> int {
    if (dcl == nullptr && len > 0) {
      return Fail(SC_E_INVALID_ARGUMENT, function, "dcl is NULL with len %zu", len);
    }
    if (time != nullptr && !ValidTime(time->receive_time_us)) {
      return Fail(SC_E_INVALID_ARGUMENT, function,
                  "receive_time_us %" PRId64 " is outside +-2^60 us; nothing applied",
                  time->receive_time_us);
    }
    if (time != nullptr && time->sender_time_us != runtime::kNoSenderTime &&
        !ValidTime(time->sender_time_us)) {
      return Fail(SC_E_INVALID_ARGUMENT, function,
                  "sender_time_us %" PRId64
                  " is outside +-2^60 us (SC_NO_SENDER_TIME for none); nothing applied",
                  time->sender_time_us);
    }
    const std::span<const uint8_t> bytes(dcl, len);
    const DecodeOptions options{};
    const Result<void> valid = protocol::DecodeStream(bytes, options, [](const auto&) {});
    if (!valid.has_value()) {
      ++rt->apply_totals.decode_errors;
      const Error& e = valid.error();
      return Fail(SC_E_DECODE, function,
                  "malformed DCL stream: %s: %s (at byte offset %" PRIu64 "); nothing applied",
                  ErrorCodeName(e.code), e.detail, e.offset);
    }
    Result<MergeStats> merged = time != nullptr ? replica.ApplyCrdt(bytes, *time, options)
                                                : replica.ApplyCrdt(bytes, options);
    if (!merged.has_value()) {
      // The stream decoded above, and times were checked: nothing else fails here.
      const Error& e = merged.error();
      return Fail(SC_E_INTERNAL, function, "merge failed after a clean decode: %s: %s",
                  ErrorCodeName(e.code), e.detail);
    }
    sc_apply_stats& totals = rt->apply_totals;
    ++totals.calls;
    totals.messages += merged->messages;
    totals.changed += merged->changed();
    totals.ignored +=
        Outcomes(*merged, {MergeOutcome::kOutdatedTimestamp, MergeOutcome::kNoChange,
                           MergeOutcome::kOutdatedData, MergeOutcome::kEntityWasDeleted});
    totals.refused += Outcomes(*merged, {MergeOutcome::kRefused});
    return SC_OK;
  });
}

// Checks the output buffer (room for `message_bytes`, the size of the message this write
// would produce) before `write` merges anything, then copies the message out.
template <class Write>
int LocalWrite(sc_runtime* rt, uint8_t* out_msg, std::size_t capacity, std::size_t* len,
               std::size_t message_bytes, const char* function, Write&& write) {
  return GuardWrite(rt, function, [&](runtime::Runtime& replica) -> int {
    if (out_msg == nullptr || len == nullptr) {
      return Fail(SC_E_INVALID_ARGUMENT, function, "%s is NULL",
                  out_msg == nullptr ? "out_msg" : "len");
    }
    if (capacity < message_bytes) {
      *len = message_bytes;
      return Fail(SC_E_BUFFER_TOO_SMALL, function,
                  "the message needs %zu bytes, room for %zu (SC_WRITE_MAX_BYTES always fits); "
                  "nothing merged",
                  message_bytes, capacity);
    }
    rt->write_buffer.clear();
    const Result<MergeOutcome> written = write(replica, rt->write_buffer);
    if (!written.has_value()) {
      const Error& e = written.error();
      if (e.code == ErrorCode::kNonFiniteTransform) {
        // As sc_client_write_transform: the caller's value is wrong, nothing was merged.
        return Fail(SC_E_INVALID_ARGUMENT, function, "%s: %s; nothing merged",
                    ErrorCodeName(e.code), e.detail);
      }
      return Fail(SC_E_REFUSED, function, "refused: %s: %s", ErrorCodeName(e.code), e.detail);
    }
    if (rt->write_buffer.size() > capacity) {
      // Merged but cannot be handed out: the message sizes above are wrong (our bug).
      rt->broken = true;
      return Fail(SC_E_INTERNAL, function, "a %zu-byte message for a %zu-byte estimate",
                  rt->write_buffer.size(), message_bytes);
    }
    if (!rt->write_buffer.empty()) {
      std::memcpy(out_msg, rt->write_buffer.data(), rt->write_buffer.size());
    }
    *len = rt->write_buffer.size();
    return SC_OK;
  });
}

constexpr std::size_t kTransformPutBytes =
    protocol::kPutComponentBaseSize + protocol::Transform::kSize;
static_assert(kTransformPutBytes == SC_WRITE_MAX_BYTES, "SC_WRITE_MAX_BYTES is a Transform PUT");
static_assert(protocol::kDeleteComponentSize <= SC_WRITE_MAX_BYTES);
static_assert(protocol::kDeleteEntitySize <= SC_WRITE_MAX_BYTES);

}  // namespace
}  // namespace scenecrdt::capi::internal

using scenecrdt::capi::internal::Apply;
using scenecrdt::capi::internal::Fail;
using scenecrdt::capi::internal::GuardRead;
using scenecrdt::capi::internal::GuardWrite;
using scenecrdt::capi::internal::LocalWrite;

extern "C" {

sc_runtime* sc_runtime_create(void) {
  try {
    return new sc_runtime();
  } catch (...) {
    scenecrdt::capi::internal::FailFromException("sc_runtime_create", false);
    return nullptr;
  }
}

void sc_runtime_destroy(sc_runtime* rt) {
  if (rt == nullptr) return;
  if (rt->owned == nullptr) {
    Fail(SC_E_INVALID_ARGUMENT, "sc_runtime_destroy",
         "a read-only view belongs to its client; nothing destroyed");
    return;
  }
  delete rt;  // destructors release memory only; they do not throw
}

int sc_runtime_apply(sc_runtime* rt, const uint8_t* dcl, size_t len) {
  return Apply(rt, dcl, len, nullptr, "sc_runtime_apply");
}

int sc_runtime_apply_at(sc_runtime* rt, const uint8_t* dcl, size_t len, int64_t receive_time_us,
                        int64_t sender_time_us) {
  const scenecrdt::runtime::BatchTime time{receive_time_us, sender_time_us};
  return Apply(rt, dcl, len, &time, "sc_runtime_apply_at");
}

int sc_runtime_apply_stats(const sc_runtime* rt, sc_apply_stats* out) {
  constexpr const char* kFunction = "sc_runtime_apply_stats";
  return GuardRead(rt, kFunction, [&](const scenecrdt::runtime::Runtime&) -> int {
    return scenecrdt::capi::internal::WriteOutput(rt->apply_totals, out, sizeof(sc_apply_stats),
                                                  "sc_apply_stats", kFunction);
  });
}

int sc_runtime_update(sc_runtime* rt) {
  return GuardWrite(rt, "sc_runtime_update", [](scenecrdt::runtime::Runtime& replica) -> int {
    replica.Update();
    return SC_OK;
  });
}

int sc_runtime_write_transform(sc_runtime* rt, uint32_t entity, const sc_transform* t,
                               uint8_t* out_msg, size_t capacity, size_t* len) {
  constexpr const char* kFunction = "sc_runtime_write_transform";
  if (t == nullptr) return Fail(SC_E_INVALID_ARGUMENT, kFunction, "t is NULL");
  return LocalWrite(
      rt, out_msg, capacity, len, scenecrdt::capi::internal::kTransformPutBytes, kFunction,
      [&](scenecrdt::runtime::Runtime& replica,
          auto& out) -> scenecrdt::Result<scenecrdt::runtime::MergeOutcome> {
        const scenecrdt::protocol::Transform value = scenecrdt::capi::internal::ToTransform(*t);
        // Servers refuse NaN and infinities: merged here, such a write would
        // leave this replica apart from everyone else's for good.
        if (!scenecrdt::protocol::IsFinite(value)) {
          return scenecrdt::MakeError(scenecrdt::ErrorCode::kNonFiniteTransform,
                                      "servers refuse non-finite Transforms");
        }
        return replica.WriteTransform(entity, value, out);
      });
}

int sc_runtime_delete_transform(sc_runtime* rt, uint32_t entity, uint8_t* out_msg, size_t capacity,
                                size_t* len) {
  return LocalWrite(rt, out_msg, capacity, len, scenecrdt::protocol::kDeleteComponentSize,
                    "sc_runtime_delete_transform",
                    [&](scenecrdt::runtime::Runtime& replica, auto& out) {
                      return replica.WriteDeleteComponent(
                          entity, scenecrdt::protocol::kTransformComponentId, out);
                    });
}

int sc_runtime_delete_entity(sc_runtime* rt, uint32_t entity, uint8_t* out_msg, size_t capacity,
                             size_t* len) {
  return LocalWrite(rt, out_msg, capacity, len, scenecrdt::protocol::kDeleteEntitySize,
                    "sc_runtime_delete_entity",
                    [&](scenecrdt::runtime::Runtime& replica, auto& out) {
                      return replica.WriteDeleteEntity(entity, out);
                    });
}

}  // extern "C"
