// SPDX-License-Identifier: Apache-2.0
// Owns the close code table of both protocols (close_codes.h).
#include "scenecrdt/server/sessions/close_codes.h"

#include <span>

namespace scenecrdt::server {

namespace {

struct CloseRow {
  ErrorCode code;
  uint16_t close_code;
};

// What neither protocol says otherwise.
constexpr uint16_t kPolicyViolation = 1008;  // unauthorized, slow consumer, rate limits ...

// The rows both protocols share.
constexpr CloseRow kSharedRows[] = {
    {ErrorCode::kShuttingDown, 1001},  // going away (the server, or the scene)
    {ErrorCode::kSceneDeleted, 1001},
    {ErrorCode::kFrameTooLarge, 1009},  // message too big
    {ErrorCode::kSceneFull, 1013},      // try again later
    // Internal error: the scene cannot be read from the database.
    {ErrorCode::kStorageUnavailable, 1011},
    {ErrorCode::kCorruptData, 1011},
    {ErrorCode::kIo, 1011},
};

// The envelope: a frame that breaks the protocol is a protocol error.
constexpr CloseRow kEnvelopeRows[] = {
    {ErrorCode::kEnvelopeInvalid, 1002},
    {ErrorCode::kProtocolVersion, 1002},
    {ErrorCode::kUnexpectedPayload, 1002},
    {ErrorCode::kBadRequest, 1002},
};

// Raw DCL: a chunk that does not decode is invalid payload data (IsMalformedDcl); a text
// message is unsupported data. Envelope codes never occur here (1008 if they did).
constexpr CloseRow kDclRows[] = {
    {ErrorCode::kTruncated, 1007},          {ErrorCode::kLengthTooSmall, 1007},
    {ErrorCode::kLengthTooLarge, 1007},     {ErrorCode::kLengthMismatch, 1007},
    {ErrorCode::kDataLengthMismatch, 1007}, {ErrorCode::kUnknownMessageType, 1007},
    {ErrorCode::kBadRequest, 1003},
};

// The row for `code` in `rows`; nullptr when it has none.
const CloseRow* Find(std::span<const CloseRow> rows, ErrorCode code) {
  for (const CloseRow& row : rows) {
    if (row.code == code) return &row;
  }
  return nullptr;
}

std::span<const CloseRow> OwnRows(CloseCodeProtocol protocol) {
  switch (protocol) {
    case CloseCodeProtocol::kDcl:
      return kDclRows;
    case CloseCodeProtocol::kEnvelope:
    default:
      return kEnvelopeRows;
  }
}

}  // namespace

bool IsMalformedDcl(ErrorCode code) {
  const CloseRow* row = Find(kDclRows, code);
  return row != nullptr && row->close_code == 1007;
}

uint16_t WebSocketCloseCode(CloseCodeProtocol protocol, ErrorCode code) {
  if (const CloseRow* own = Find(OwnRows(protocol), code)) return own->close_code;
  if (const CloseRow* shared = Find(kSharedRows, code)) return shared->close_code;
  return kPolicyViolation;
}

}  // namespace scenecrdt::server
