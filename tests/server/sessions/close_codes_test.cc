// SPDX-License-Identifier: Apache-2.0
// The WebSocket close code of every fatal ErrorCode, for both protocols
// (server/sessions/close_codes.h), pinned one row per code.
#include "scenecrdt/server/sessions/close_codes.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <set>
#include <string_view>

namespace scenecrdt::server {
namespace {

struct Row {
  ErrorCode code;
  uint16_t envelope;
  uint16_t dcl;
};

// Every ErrorCode (result.h), in its order.
constexpr Row kRows[] = {
    {ErrorCode::kOk, 1008, 1008},
    {ErrorCode::kTruncated, 1008, 1007},
    {ErrorCode::kLengthTooSmall, 1008, 1007},
    {ErrorCode::kLengthTooLarge, 1008, 1007},
    {ErrorCode::kLengthMismatch, 1008, 1007},
    {ErrorCode::kDataLengthMismatch, 1008, 1007},
    {ErrorCode::kUnknownMessageType, 1008, 1007},
    {ErrorCode::kEnvelopeInvalid, 1002, 1008},
    {ErrorCode::kProtocolVersion, 1002, 1008},
    {ErrorCode::kUnexpectedPayload, 1002, 1008},
    {ErrorCode::kFrameTooLarge, 1009, 1009},
    {ErrorCode::kReservedEntity, 1008, 1008},
    {ErrorCode::kNonFiniteTransform, 1008, 1008},
    {ErrorCode::kPayloadTooLarge, 1008, 1008},
    {ErrorCode::kTooManyEntities, 1008, 1008},
    {ErrorCode::kTooManyTombstones, 1008, 1008},
    {ErrorCode::kBadTransformSize, 1008, 1008},
    {ErrorCode::kUnauthorized, 1008, 1008},
    {ErrorCode::kReadOnly, 1008, 1008},
    {ErrorCode::kRateLimited, 1008, 1008},
    {ErrorCode::kSlowConsumer, 1008, 1008},
    {ErrorCode::kShuttingDown, 1001, 1001},
    {ErrorCode::kSceneFull, 1013, 1013},
    {ErrorCode::kBadRequest, 1002, 1003},
    {ErrorCode::kUnavailable, 1008, 1008},
    {ErrorCode::kStorageUnavailable, 1011, 1011},
    {ErrorCode::kSceneTooLarge, 1008, 1008},
    {ErrorCode::kInvalidInterest, 1008, 1008},
    {ErrorCode::kSceneDeleted, 1001, 1001},
    {ErrorCode::kNotOwner, 1008, 1008},
    {ErrorCode::kServerOnlyComponent, 1008, 1008},
    {ErrorCode::kNotAdmin, 1008, 1008},
    {ErrorCode::kIo, 1011, 1011},
    {ErrorCode::kParse, 1008, 1008},
    {ErrorCode::kInvalidArgument, 1008, 1008},
    {ErrorCode::kCorruptData, 1011, 1011},
};

TEST(CloseCodesTest, EveryErrorCodeHasItsCloseCodeInBothProtocols) {
  for (const Row& row : kRows) {
    SCOPED_TRACE(ErrorCodeName(row.code));
    EXPECT_EQ(WebSocketCloseCode(CloseCodeProtocol::kEnvelope, row.code), row.envelope);
    EXPECT_EQ(WebSocketCloseCode(CloseCodeProtocol::kDcl, row.code), row.dcl);
  }
}

TEST(CloseCodesTest, TheRowsAboveNameEveryErrorCode) {
  // A code added to result.h gets a name; it must get a row above too.
  std::set<uint16_t> pinned;
  for (const Row& row : kRows) pinned.insert(static_cast<uint16_t>(row.code));
  for (uint32_t value = 0; value <= UINT16_MAX; ++value) {
    const auto code = static_cast<ErrorCode>(value);
    if (std::string_view(ErrorCodeName(code)) == "unknown") continue;
    EXPECT_EQ(pinned.count(static_cast<uint16_t>(value)), 1u) << ErrorCodeName(code);
  }
}

TEST(CloseCodesTest, MalformedDclIsTheDecodersVerdicts) {
  for (const Row& row : kRows) {
    SCOPED_TRACE(ErrorCodeName(row.code));
    EXPECT_EQ(IsMalformedDcl(row.code), row.dcl == 1007);
  }
}

}  // namespace
}  // namespace scenecrdt::server
