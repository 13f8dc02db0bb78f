// SPDX-License-Identifier: Apache-2.0
// Owns the admission of untrusted chunks: the one strict decode and the stateless checks per
// message (docs/CRDT.md "Admission").
#include "scenecrdt/runtime/crdt_admission.h"

#include <algorithm>

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

Admission AdmitChunk(std::span<const uint8_t> chunk, const StoreLimits& limits,
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
    const ErrorCode code = CheckStatelessRules(m, limits);
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

}  // namespace scenecrdt::runtime
