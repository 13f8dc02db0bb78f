// SPDX-License-Identifier: Apache-2.0
// Owns CrdtStore's admission of untrusted chunks: the one strict decode, the stateless checks
// per message, and the batch limits on entities and tombstones (docs/CRDT.md "Admission").
#include <algorithm>

#include "scenecrdt/runtime/crdt_store.h"

namespace scenecrdt::runtime {

const char* RefusalText(ErrorCode code) {
  switch (code) {
    case ErrorCode::kPayloadTooLarge:
      return "a component payload is above the limit";
    case ErrorCode::kBadTransformSize:
      return "a Transform payload is not 44 bytes";
    case ErrorCode::kNonFiniteTransform:
      return "a Transform holds NaN or infinite floats";
    case ErrorCode::kReservedEntity:
      return "DELETE_ENTITY of a reserved entity number";
    case ErrorCode::kUnknownMessageType:
      return "a message of an unknown type";
    case ErrorCode::kTooManyEntities:
      return "the scene is at its entity limit";
    case ErrorCode::kTooManyTombstones:
      return "the scene is at its tombstone limit";
    default:
      return "refused by the store";
  }
}

Admission CrdtStore::Admit(std::span<const uint8_t> chunk, const StoreLimits& limits,
                           const AdmitOptions& options) {
  Admission admission;
  AdmittedBatch& batch = admission.batch;
  batch.bytes_.assign(chunk.begin(), chunk.end());
  batch.max_payload_bytes_ = limits.max_payload_bytes;
  batch.refused_non_finite_ = limits.refuse_non_finite_transforms;
  // One Transform PUT (68 bytes) per message is the common chunk: one allocation.
  batch.messages_.reserve(
      chunk.size() / (protocol::kPutComponentBaseSize + protocol::Transform::kSize) + 1);
  protocol::DecodeOptions decode;
  decode.max_message_bytes = options.max_message_bytes;
  decode.reject_unknown_types = true;
  const bool whole = options.mode == AdmitMode::kWholeChunk;
  bool refused = false;
  uint64_t offset = 0;
  // The whole chunk is decoded even after a refusal: a malformed chunk is a protocol
  // violation, which outranks a refusal.
  auto decoded = protocol::DecodeStream(batch.bytes_, decode, [&](const protocol::CrdtMessage& m) {
    ++admission.messages;
    const uint64_t at = offset;
    offset += protocol::EncodedSize(m);
    const ErrorCode code = CheckMessage(m, limits);
    if (code == ErrorCode::kOk) {
      batch.messages_.push_back(m);
      return;
    }
    if (!refused) admission.error = MakeError(code, RefusalText(code), at);
    refused = true;
    if (whole) return;
    auto it = std::find_if(admission.dropped.begin(), admission.dropped.end(),
                           [&](const RefusalCount& d) { return d.code == code; });
    if (it == admission.dropped.end()) {
      admission.dropped.push_back({code, 1});
    } else {
      ++it->messages;
    }
  });
  if (!decoded.has_value()) {
    admission.verdict = Admission::Verdict::kMalformed;
    admission.error = decoded.error();
    admission.dropped.clear();
  } else if (refused && whole) {
    admission.verdict = Admission::Verdict::kRefused;
  } else {
    admission.verdict = Admission::Verdict::kAdmitted;
    admission.error = {};
    return admission;
  }
  batch.messages_.clear();
  batch.bytes_.clear();
  return admission;
}

ErrorCode CrdtStore::CheckBatchLimits(std::span<const protocol::CrdtMessage> messages) const {
  // Counted for the whole batch before anything merges, so that a refused batch leaves the
  // store untouched. The counts are upper bounds: a newer version retiring a live one does
  // not really add an entity, and duplicates within the batch count once.
  std::vector<uint32_t> new_entities;
  std::vector<uint32_t> new_tombstones;
  for (const protocol::CrdtMessage& m : messages) {
    const uint32_t number = protocol::EntityNumber(m.entity);
    const uint32_t version = protocol::EntityVersion(m.entity);
    const bool reserved = protocol::IsReservedEntityNumber(number);
    if (!reserved && (m.type == protocol::MessageType::kDeleteEntity ||
                      m.type == protocol::MessageType::kDeleteEntityNetwork || version > 0)) {
      if (!tombstones_.Find(number)) new_tombstones.push_back(number);
    }
    if (protocol::HasComponent(m.type)) {
      const EntityState state = GetEntityState(m.entity);
      if (state == EntityState::kUnknown ||
          (state == EntityState::kReserved && !FindTransform(m.entity))) {
        new_entities.push_back(m.entity);
      }
    }
  }
  const auto distinct = [](std::vector<uint32_t>& v) {
    std::sort(v.begin(), v.end());
    return static_cast<std::size_t>(std::unique(v.begin(), v.end()) - v.begin());
  };
  if (!new_entities.empty() && num_entities() + distinct(new_entities) > limits_.max_entities) {
    return ErrorCode::kTooManyEntities;
  }
  if (!new_tombstones.empty() &&
      num_tombstones() + distinct(new_tombstones) > limits_.max_tombstones) {
    return ErrorCode::kTooManyTombstones;
  }
  return ErrorCode::kOk;
}

}  // namespace scenecrdt::runtime
