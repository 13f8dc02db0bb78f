// SPDX-License-Identifier: Apache-2.0
// Owns ConnectionStreams (internal: not installed): the four streams a client Connection may
// run over (framed TCP, TLS, WebSocket, WebSocket over TLS; exactly one is set, by the URL's
// scheme), its resolver and timers, and the dispatch to whichever stream is set. Kept out of
// connection.h so that Beast's WebSocket and TLS types stay out of its users' code.
#pragma once

#include <memory>
#include <optional>

#include "scenecrdt/net/net.h"
#include "scenecrdt/net/tls.h"
#include "scenecrdt/protocol/result.h"
#include "scenecrdt/protocol/session/envelope.h"

namespace scenecrdt::client {

namespace websocket = net::beast::websocket;
using TlsStream = net::ssl::stream<net::tcp::socket>;

struct ConnectionStreams {
  explicit ConnectionStreams(const net::Strand& strand)
      : resolver(strand), deadline(strand), keepalive(strand) {}
  net::tcp::resolver resolver;
  net::asio::steady_timer deadline;
  net::asio::steady_timer keepalive;
  std::shared_ptr<net::ssl::context> tls_context;
  // Exactly one of these four is set, by the URL's scheme.
  std::optional<net::tcp::socket> tcp;
  std::optional<TlsStream> tls;
  std::optional<websocket::stream<net::tcp::socket>> ws;
  std::optional<websocket::stream<TlsStream>> wss;
  net::beast::flat_buffer ws_buffer;
  websocket::response_type upgrade_response;

  bool websocket() const { return ws || wss; }
  TlsStream* tls_stream() { return tls ? &*tls : wss ? &wss->next_layer() : nullptr; }
  net::tcp::socket& lowest() {
    if (tcp) return *tcp;
    if (ws) return ws->next_layer();
    return tls_stream()->next_layer();
  }
  // Runs `f` with the byte stream of tcp:// or tls://.
  template <class F>
  void WithBytes(F&& f) {
    if (tls) {
      f(*tls);
    } else {
      f(*tcp);
    }
  }
  // Runs `f` with the WebSocket stream of ws:// or wss://.
  template <class F>
  void WithWebSocket(F&& f) {
    if (wss) {
      f(*wss);
    } else {
      f(*ws);
    }
  }
  // Why the upgrade failed: a scenecrdt framed-TCP port says so in its answer.
  Error UpgradeError() const {
    if (upgrade_response.find(session::kFramedTcpPortHeader) != upgrade_response.end()) {
      return MakeError(ErrorCode::kBadRequest,
                       "WebSocket upgrade refused: ws:// reached scenecrdt's framed-TCP port "
                       "(serve --tcp); use tcp://HOST:PORT for that port, or ws:// with the "
                       "server's --http port");
    }
    return MakeError(ErrorCode::kIo, "WebSocket upgrade refused");
  }
};

}  // namespace scenecrdt::client
