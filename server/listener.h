// SPDX-License-Identifier: Apache-2.0
// Owns Listener: an acceptor for one of the two kinds of endpoints. kFramedTcp hands each
// connection to a TcpSession (size-prefixed envelope frames); kHttp to an HttpSession
// (health, metrics, WebSocket upgrades by path). Each connection gets its own strand.
#pragma once

#include <cstdint>

#include "scenecrdt/protocol/result.h"
#include "scenecrdt/server/context.h"

namespace scenecrdt::server {

enum class ListenerKind : uint8_t { kFramedTcp, kHttp };

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
