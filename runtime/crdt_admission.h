// SPDX-License-Identifier: Apache-2.0
// Owns admission (docs/CRDT.md "Admission"): the limits a store enforces, the stateless rules
// every message must pass (CheckStatelessRules), and the one strict decode of an untrusted
// chunk into a batch checked against them (AdmitChunk -> AdmittedBatch), on any thread.
// CrdtStore::MergeAdmitted merges a batch without decoding or checking it again, after the
// state-dependent limits (CrdtStore::CheckBatchLimits).
#pragma once

#include <algorithm>
#include <cstdint>
#include <span>
#include <vector>

#include "scenecrdt/protocol/crdt_codec.h"
#include "scenecrdt/protocol/crdt_message.h"
#include "scenecrdt/protocol/result.h"
#include "scenecrdt/protocol/transform.h"

namespace scenecrdt::runtime {

struct StoreLimits {
  // Component payloads above this are refused (kPayloadTooLarge).
  uint32_t max_payload_bytes = protocol::kDefaultMaxMessageBytes;
  // Distinct entity ids holding registers; a message creating one more is refused.
  uint32_t max_entities = 0xFFFFFFFFu;
  // Entity numbers with a tombstone; a message creating one more is refused.
  uint32_t max_tombstones = 0xFFFFFFFFu;
  // APPEND_VALUE sets keep their greatest `max_append_values` elements by (timestamp, bytes):
  // a bounded grow-only set that still merges order-independently.
  uint32_t max_append_values = 100;
  // Refuse Transforms with NaN or infinite floats (servers); @dcl/ecs accepts them.
  bool refuse_non_finite_transforms = false;
};

// What Admit does with a message the stateless rules refuse.
enum class AdmitMode : uint8_t {
  kWholeChunk,   // the chunk is refused whole (envelope Crdt frames: the client gets an Error)
  kDropRefused,  // the message is left out and counted; the rest is admitted in order (raw DCL)
};

struct AdmitOptions {
  // Largest DCL message, header included (the strict decoder's ceiling).
  uint32_t max_message_bytes = protocol::kDefaultMaxMessageBytes;
  AdmitMode mode = AdmitMode::kWholeChunk;
};

struct Admission;

// The admitted messages of one chunk, in chunk order, each already checked against the
// stateless rules of the limits it was admitted under. Move-only: the messages' `data` views
// point into the batch's own copy of the chunk (a moved vector keeps its storage).
class AdmittedBatch {
 public:
  AdmittedBatch() = default;
  AdmittedBatch(AdmittedBatch&&) noexcept = default;
  AdmittedBatch& operator=(AdmittedBatch&&) noexcept = default;
  AdmittedBatch(const AdmittedBatch&) = delete;
  AdmittedBatch& operator=(const AdmittedBatch&) = delete;

  std::span<const protocol::CrdtMessage> messages() const { return messages_; }
  std::size_t size() const { return messages_.size(); }
  bool empty() const { return messages_.empty(); }
  // Calls `rewrite(message)` on each message, which may change its timestamp (a server
  // re-stamping a write; docs/AUTHORITY.md), nothing else.
  template <class Rewrite>
  void RewriteTimestamps(Rewrite&& rewrite) {
    for (protocol::CrdtMessage& m : messages_) rewrite(m);
  }
  // Leaves out the messages `drop(message)` is true for (the rest keeps its order; the data
  // views stay valid); returns how many were left out.
  template <class Drop>
  std::size_t RemoveIf(Drop&& drop) {
    const std::size_t before = messages_.size();
    std::erase_if(messages_, drop);
    return before - messages_.size();
  }
  // True when the stateless checks it passed are at least as strict as `limits` asks.
  bool CheckedAgainst(const StoreLimits& limits) const {
    return max_payload_bytes_ <= limits.max_payload_bytes &&
           (refused_non_finite_ || !limits.refuse_non_finite_transforms);
  }

 private:
  friend Admission AdmitChunk(std::span<const uint8_t> chunk, const StoreLimits& limits,
                              const AdmitOptions& options);
  std::vector<uint8_t> bytes_;
  std::vector<protocol::CrdtMessage> messages_;
  uint32_t max_payload_bytes_ = 0;
  bool refused_non_finite_ = false;
};

// Messages of one reason left out of a chunk (AdmitMode::kDropRefused).
struct RefusalCount {
  ErrorCode code = ErrorCode::kOk;
  uint32_t messages = 0;
};

// What AdmitChunk decided about one chunk.
struct Admission {
  enum class Verdict : uint8_t {
    kAdmitted,   // `batch` holds what may merge (possibly nothing)
    kMalformed,  // the chunk does not decode strictly: `error` is the decoder's (with offset)
    kRefused,    // kWholeChunk: `error` is the first refused message's reason (with offset)
  };
  Verdict verdict = Verdict::kAdmitted;
  Error error;
  uint32_t messages = 0;              // messages decoded (up to the fault when malformed)
  std::vector<RefusalCount> dropped;  // kDropRefused: left out, by reason, first seen first
  AdmittedBatch batch;                // empty unless kAdmitted
};

// The stateless rules, which CrdtStore::Merge also applies first: payload size, Transform
// size, non-finite Transforms (when `limits` asks), DELETE_ENTITY of a reserved number, unknown
// types. kOk when acceptable. Pure: any thread.
inline ErrorCode CheckStatelessRules(const protocol::CrdtMessage& m, const StoreLimits& limits) {
  using protocol::MessageType;
  switch (m.type) {
    case MessageType::kPutComponent:
    case MessageType::kPutComponentNetwork:
      if (m.data.size() > limits.max_payload_bytes) return ErrorCode::kPayloadTooLarge;
      if (m.component == protocol::kTransformComponentId) {
        if (m.data.size() != protocol::Transform::kSize) return ErrorCode::kBadTransformSize;
        if (limits.refuse_non_finite_transforms &&
            !protocol::IsFinite(
                protocol::LoadTransform(m.data.first<protocol::Transform::kSize>()))) {
          return ErrorCode::kNonFiniteTransform;
        }
      }
      return ErrorCode::kOk;
    case MessageType::kAppendValue:
      return m.data.size() > limits.max_payload_bytes ? ErrorCode::kPayloadTooLarge
                                                      : ErrorCode::kOk;
    case MessageType::kDeleteComponent:
    case MessageType::kDeleteComponentNetwork:
      return ErrorCode::kOk;
    case MessageType::kDeleteEntity:
    case MessageType::kDeleteEntityNetwork:
      // @dcl/ecs wipes a reserved entity's data without tombstoning it, which does not
      // commute with later messages for it: refused instead (docs/CRDT.md).
      return protocol::IsReservedEntity(m.entity) ? ErrorCode::kReservedEntity : ErrorCode::kOk;
    default:
      return ErrorCode::kUnknownMessageType;
  }
}

// Decodes `chunk` once, strictly (unknown types rejected, options.max_message_bytes), into a
// batch that owns a copy of it, and applies CheckStatelessRules to every message as
// options.mode says. Pure: any thread (a server calls it on the session's strand).
Admission AdmitChunk(std::span<const uint8_t> chunk, const StoreLimits& limits,
                     const AdmitOptions& options);

// A static, human-readable reason for a store refusal code ("a Transform payload is not 44
// bytes"); session Error frames and log lines carry it.
const char* RefusalText(ErrorCode code);

}  // namespace scenecrdt::runtime
