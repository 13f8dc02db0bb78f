// SPDX-License-Identifier: Apache-2.0
// Owns HttpSession: one connection on the --http listener before it becomes a WebSocket
// session: GET /healthz, GET /metrics, and WebSocket upgrades dispatched by path
// (/scene/<name>: WebSocketSession<EnvelopeSession>; /dcl/<name>?token=T: authorised here,
// then WebSocketSession<DclSession>). Keep-alive requests are served one after the other;
// each read and write has a deadline. A framed-TCP client on this port (an envelope frame
// where a request line should be) gets a fatal Error frame naming the --tcp port.
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "scenecrdt/server/context.h"
#include "scenecrdt/server/endpoint.h"

namespace scenecrdt::server {

class HttpSession : public std::enable_shared_from_this<HttpSession> {
 public:
  HttpSession(ServerContext& ctx, StrandSocket socket);
  void Start() { Read(); }

 private:
  using Request = net::beast::http::request<net::beast::http::string_body>;

  void Read();
  // A request that does not parse; a tcp:// client's Hello gets a fatal Error frame.
  void OnReadError(const net::error_code& ec);
  void Route();
  void UpgradeDcl(std::string scene, std::string token, Request req);
  void Respond(net::beast::http::status status, std::string body, const Request& req,
               const char* content_type = "text/plain");

  ServerContext& ctx_;
  StrandSocket socket_;
  net::asio::steady_timer deadline_;
  net::tcp::endpoint peer_;
  net::beast::flat_buffer buffer_;
  std::optional<net::beast::http::request_parser<net::beast::http::string_body>> parser_;
};

}  // namespace scenecrdt::server
