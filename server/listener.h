// SPDX-License-Identifier: Apache-2.0
// Owns Listener: an acceptor for one of the two kinds of endpoints, and the sessions it
// creates. kFramedTcp: size-prefixed envelope frames. kHttp: GET /healthz, GET /metrics, and
// WebSocket upgrades dispatched by path (/scene/<name>: the envelope; /dcl/<name>: raw DCL
// chunks, docs/PROTOCOL.md section 3).
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "scenecrdt/protocol/result.h"
#include "scenecrdt/server/context.h"

namespace scenecrdt::server {

enum class ListenerKind : uint8_t { kFramedTcp, kHttp };

// "HOST:PORT" (IPv4, IPv6 in brackets, or a name resolved once) -> endpoint.
Result<net::tcp::endpoint> ParseEndpoint(const std::string& host_port);

// Owned by the Server, which outlives the io_context threads.
class Listener {
 public:
  Listener(ServerContext& ctx, ListenerKind kind);
  Result<void> Open(const net::tcp::endpoint& endpoint);
  void Start();
  // Stops accepting (thread-safe).
  void Stop();
  uint16_t port() const { return port_; }

 private:
  void Accept();

  ServerContext& ctx_;
  ListenerKind kind_;
  net::tcp::acceptor acceptor_;
  uint16_t port_ = 0;
};

}  // namespace scenecrdt::server
