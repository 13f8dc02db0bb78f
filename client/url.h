// SPDX-License-Identifier: Apache-2.0
// Owns ServerUrl: the `--server` URLs the client and the command line accept,
// tcp://HOST:PORT (framed envelope) and ws://HOST:PORT (WebSocket /scene/<name>).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "scenecrdt/protocol/result.h"

namespace scenecrdt::client {

struct ServerUrl {
  enum class Scheme : uint8_t { kTcp, kWebSocket };
  Scheme scheme = Scheme::kTcp;
  std::string host;
  uint16_t port = 0;
};

// Errors: kInvalidArgument with a reason naming the expected form.
Result<ServerUrl> ParseServerUrl(std::string_view url);

}  // namespace scenecrdt::client
