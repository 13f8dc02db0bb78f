// SPDX-License-Identifier: Apache-2.0
// Owns the names of ErrorCode values (logs, JSON output, metrics labels).
#include "scenecrdt/protocol/result.h"

namespace scenecrdt {

const char* ErrorCodeName(ErrorCode code) {
  switch (code) {
    case ErrorCode::kOk:
      return "ok";
    case ErrorCode::kTruncated:
      return "truncated";
    case ErrorCode::kLengthTooSmall:
      return "length_too_small";
    case ErrorCode::kLengthTooLarge:
      return "length_too_large";
    case ErrorCode::kLengthMismatch:
      return "length_mismatch";
    case ErrorCode::kDataLengthMismatch:
      return "data_length_mismatch";
    case ErrorCode::kUnknownMessageType:
      return "unknown_message_type";
    case ErrorCode::kEnvelopeInvalid:
      return "envelope_invalid";
    case ErrorCode::kProtocolVersion:
      return "protocol_version";
    case ErrorCode::kUnexpectedPayload:
      return "unexpected_payload";
    case ErrorCode::kFrameTooLarge:
      return "frame_too_large";
    case ErrorCode::kReservedEntity:
      return "reserved_entity";
    case ErrorCode::kNonFiniteTransform:
      return "non_finite_transform";
    case ErrorCode::kPayloadTooLarge:
      return "payload_too_large";
    case ErrorCode::kTooManyEntities:
      return "too_many_entities";
    case ErrorCode::kTooManyTombstones:
      return "too_many_tombstones";
    case ErrorCode::kBadTransformSize:
      return "bad_transform_size";
    case ErrorCode::kUnauthorized:
      return "unauthorized";
    case ErrorCode::kReadOnly:
      return "read_only";
    case ErrorCode::kRateLimited:
      return "rate_limited";
    case ErrorCode::kSlowConsumer:
      return "slow_consumer";
    case ErrorCode::kShuttingDown:
      return "shutting_down";
    case ErrorCode::kSceneFull:
      return "scene_full";
    case ErrorCode::kBadRequest:
      return "bad_request";
    case ErrorCode::kUnavailable:
      return "unavailable";
    case ErrorCode::kStorageUnavailable:
      return "storage_unavailable";
    case ErrorCode::kSceneTooLarge:
      return "scene_too_large";
    case ErrorCode::kInvalidInterest:
      return "invalid_interest";
    case ErrorCode::kNotOwner:
      return "not_owner";
    case ErrorCode::kServerOnlyComponent:
      return "server_only_component";
    case ErrorCode::kNotAdmin:
      return "not_admin";
    case ErrorCode::kSceneDeleted:
      return "scene_deleted";
    case ErrorCode::kIo:
      return "io";
    case ErrorCode::kParse:
      return "parse";
    case ErrorCode::kInvalidArgument:
      return "invalid_argument";
    case ErrorCode::kCorruptData:
      return "corrupt_data";
    default:
      return "unknown";
  }
}

}  // namespace scenecrdt
