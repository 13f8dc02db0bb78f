// SPDX-License-Identifier: Apache-2.0
// Owns parsing --server URLs.
#include "scenecrdt/client/url.h"

namespace scenecrdt::client {

Result<ServerUrl> ParseServerUrl(std::string_view url) {
  ServerUrl out;
  constexpr std::string_view kTcp = "tcp://";
  constexpr std::string_view kWs = "ws://";
  if (url.starts_with(kTcp)) {
    out.scheme = ServerUrl::Scheme::kTcp;
    url.remove_prefix(kTcp.size());
  } else if (url.starts_with(kWs)) {
    out.scheme = ServerUrl::Scheme::kWebSocket;
    url.remove_prefix(kWs.size());
  } else {
    return MakeError(ErrorCode::kInvalidArgument,
                     "the server URL must be tcp://HOST:PORT or ws://HOST:PORT");
  }
  if (const auto slash = url.find('/'); slash != std::string_view::npos) {
    url = url.substr(0, slash);  // a path is ignored: the scene picks it
  }
  const auto colon = url.rfind(':');
  if (colon == std::string_view::npos || colon == 0 || colon + 1 >= url.size()) {
    return MakeError(ErrorCode::kInvalidArgument, "the server URL needs HOST:PORT");
  }
  std::string_view host = url.substr(0, colon);
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') {
    host = host.substr(1, host.size() - 2);
  }
  uint32_t port = 0;
  for (char c : url.substr(colon + 1)) {
    if (c < '0' || c > '9') return MakeError(ErrorCode::kInvalidArgument, "bad port in URL");
    port = port * 10 + static_cast<uint32_t>(c - '0');
    if (port > 65535) return MakeError(ErrorCode::kInvalidArgument, "port above 65535");
  }
  if (port == 0) return MakeError(ErrorCode::kInvalidArgument, "port 0 in URL");
  out.host = std::string(host);
  out.port = static_cast<uint16_t>(port);
  return out;
}

}  // namespace scenecrdt::client
