// SPDX-License-Identifier: Apache-2.0
// Owns Listener: an acceptor for one of the two kinds of endpoints. kFramedTcp hands each
// connection to a Session over a TcpTransport (size-prefixed envelope frames); kHttp to an
// HttpSession (health, metrics, WebSocket upgrades by path). Each connection gets its own strand
// and a ConnectionTicket; over the caps it is answered at once (an Error frame or an HTTP 503) and
// closed. Accept errors (out of file descriptors ...) pause the loop (AcceptBackoff) instead
// of re-arming at once.
#pragma once

#include <cstdint>

#include "scenecrdt/protocol/result.h"
#include "scenecrdt/server/context.h"
#include "scenecrdt/server/observability/log_gate.h"
#include "scenecrdt/server/transport/accept_backoff.h"
#include "scenecrdt/server/transport/connection_context.h"
#include "scenecrdt/server/transport/connection_limiter.h"
#include "scenecrdt/server/transport/endpoint.h"
#include "scenecrdt/server/transport/tls_context.h"

namespace scenecrdt::server {

enum class ListenerKind : uint8_t { kFramedTcp, kHttp };

// Owned by the Server, which outlives the io_context threads.
class Listener {
 public:
  // `connections`: what each accepted connection is handed; `tls`: the server's TLS contexts
  // when it speaks tls:// / https:// (nullptr: plain).
  Listener(const ConnectionContext& connections, ListenerKind kind, ConnectionLimiter& limiter,
           const TlsContexts* tls);
  Result<void> Open(const net::tcp::endpoint& endpoint);
  void Start();
  // Stops accepting (thread-safe).
  void Stop();
  uint16_t port() const { return port_; }

 private:
  void Accept();
  void OnAcceptError(const net::error_code& ec);
  void Admit(StrandSocket socket);
  // Answers a connection over a cap (best effort, never blocking) and closes it.
  void Refuse(StrandSocket socket, ConnectionLimiter::Verdict verdict);
  const char* name() const { return kind_ == ListenerKind::kFramedTcp ? "tcp" : "http"; }

  const ConnectionContext connections_;
  ServerContext& ctx_;  // connections_.server
  ListenerKind kind_;
  ConnectionLimiter& limiter_;
  const TlsContexts* tls_;
  net::tcp::acceptor acceptor_;
  net::asio::steady_timer retry_;  // on the acceptor's strand
  AcceptBackoff backoff_;
  LogGate error_log_;
  LogGate refusal_log_;
  uint16_t port_ = 0;
};

}  // namespace scenecrdt::server
