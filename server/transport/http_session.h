// SPDX-License-Identifier: Apache-2.0
// Owns HttpSession: one connection on the --http listener before it becomes a WebSocket
// session: GET /healthz, GET /metrics, and WebSocket upgrades dispatched by path
// (/scene/<name>: a Session with an EnvelopeProtocol over a WebSocketTransport;
// /dcl/<name>?token=T: authorised here, then one with a DclProtocol). Keep-alive requests
// are served one after the other; each read and write has a deadline. A framed-TCP client on
// this port (an envelope frame where a request line should be) gets a fatal Error frame
// naming the --tcp port.
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "scenecrdt/server/context.h"
#include "scenecrdt/server/transport/connection_context.h"
#include "scenecrdt/server/transport/connection_limiter.h"
#include "scenecrdt/server/transport/endpoint.h"

namespace scenecrdt::server {

class Transport;

class HttpSession : public std::enable_shared_from_this<HttpSession> {
 public:
  // `connections`: the listener's; `tls`: the context of a TLS listener (https://, wss://);
  // nullptr: plain HTTP.
  HttpSession(const ConnectionContext& connections, StrandSocket socket,
              std::shared_ptr<ConnectionTicket> ticket, std::shared_ptr<net::ssl::context> tls);
  // The TLS handshake if any (within the handshake timeout), then the first request.
  void Start();

 private:
  using Request = net::beast::http::request<net::beast::http::string_body>;

  void Read();
  // A request that does not parse; a tcp:// client's Hello gets a fatal Error frame.
  void OnReadError(const net::error_code& ec);
  void Route();
  void UpgradeDcl(std::string scene, std::string token, Request req);
  void Respond(net::beast::http::status status, std::string body, const Request& req,
               const char* content_type = "text/plain");
  // An answer to a request that could not be read (over a limit): sent with
  // "Connection: close", then the rest of the request is drained (bounded) before closing.
  void RespondAndClose(net::beast::http::status status, std::string body);
  void Drain(std::size_t drained);
  // Ends the connection: over TLS with a close_notify when `graceful` (bounded by the close
  // grace), otherwise (and for plain HTTP) by closing the socket after a FIN.
  void CloseConnection(bool graceful);
  // A grant checked before the upgrade, with the token and scene it was checked for.
  struct UpgradeGrant {
    AccessGrant grant;
    std::string token;
    std::string scene;
  };
  // Hands this connection's stream to a WebSocketTransport answering `req` (`keep_alive`:
  // Beast's keep-alive pings own liveness).
  std::unique_ptr<Transport> UpgradeTransport(Request req, bool keep_alive);
  // Gives the session this connection's place under the caps and `grant`, and starts it.
  void StartSession(const std::shared_ptr<Session>& session, const UpgradeGrant* grant);
  template <class F>
  void WithStream(F&& f) {
    if (tls_) {
      f(*tls_);
    } else {
      f(socket_);
    }
  }
  StrandSocket& lowest() { return tls_ ? tls_->next_layer() : socket_; }

  const ConnectionContext connections_;
  ServerContext& ctx_;   // connections_.server
  StrandSocket socket_;  // moved into tls_ for a TLS connection
  std::optional<TlsSocket> tls_;
  net::asio::steady_timer deadline_;
  net::tcp::endpoint peer_;
  net::beast::flat_buffer buffer_;
  std::optional<net::beast::http::request_parser<net::beast::http::string_body>> parser_;
  // Handed to the WebSocket session on an upgrade (a reserve ticket may not upgrade).
  std::shared_ptr<ConnectionTicket> ticket_;
};

}  // namespace scenecrdt::server
