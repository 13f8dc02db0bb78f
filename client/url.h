// SPDX-License-Identifier: Apache-2.0
// Owns ServerUrl and server lists: the `--server` URLs the client and the command line accept,
// tcp://HOST:PORT (framed envelope) and ws://HOST:PORT[/scene/NAME] (WebSocket /scene/<name>),
// and the same over TLS: tls://HOST:PORT and wss://HOST:PORT[/scene/NAME].
// A path is never ignored: ws:// may name the scene, anything else is refused (docs/CLI.md).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "scenecrdt/protocol/result.h"

namespace scenecrdt::client {

struct ServerUrl {
  enum class Scheme : uint8_t { kTcp, kWebSocket };
  Scheme scheme = Scheme::kTcp;
  std::string host;
  uint16_t port = 0;
  // tls:// or wss://: TLS under the protocol (the server's certificate is verified).
  bool tls = false;
  // The scene of a ws://HOST:PORT/scene/NAME URL; empty when the URL names none.
  std::string scene;
};

// Errors: kInvalidArgument with a reason naming the expected form (a tcp:// path, a ws://
// path other than /scene/NAME, the raw-DCL /dcl/ path, a query string and a bad scene name
// are refused).
Result<ServerUrl> ParseServerUrl(std::string_view url);

// A comma-separated list of URLs (the fail-over list of `--server` and sc_client_connect),
// split and trimmed of spaces; empty entries are skipped. Each entry is checked later, by
// ParseServerUrl.
std::vector<std::string> SplitServerList(std::string_view list);

}  // namespace scenecrdt::client
