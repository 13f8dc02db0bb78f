// SPDX-License-Identifier: Apache-2.0
// Owns the WebSocket close code a session sends after a fatal condition (RFC 6455 section
// 7.4.1), for both protocols: one table of the rows they share and, per protocol, the rows it
// answers otherwise.
#pragma once

#include <cstdint>

#include "scenecrdt/protocol/result.h"

namespace scenecrdt::server {

// Whose rows apply: the session envelope (/scene/<name>) or raw DCL (/dcl/<name>).
enum class CloseCodeProtocol : uint8_t { kEnvelope, kDcl };

// The decoder's verdicts on a malformed DCL chunk (raw DCL closes with 1007 for them).
bool IsMalformedDcl(ErrorCode code);

// The close code for a fatal `code`: the protocol's own row, else a shared row, else 1008
// (policy violation).
uint16_t WebSocketCloseCode(CloseCodeProtocol protocol, ErrorCode code);

}  // namespace scenecrdt::server
