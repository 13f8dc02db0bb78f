// SPDX-License-Identifier: Apache-2.0
// Owns binding and the accept loop.
#include "scenecrdt/server/listener.h"

#include <memory>

#include "scenecrdt/server/endpoint.h"
#include "scenecrdt/server/http_session.h"
#include "scenecrdt/server/tcp_session.h"

namespace scenecrdt::server {

Listener::Listener(ServerContext& ctx, ListenerKind kind)
    : ctx_(ctx), kind_(kind), acceptor_(net::asio::make_strand(ctx.ioc())) {}

Result<void> Listener::Open(const net::tcp::endpoint& endpoint) {
  net::error_code ec;
  acceptor_.open(endpoint.protocol(), ec);
  if (!ec) acceptor_.set_option(net::asio::socket_base::reuse_address(true), ec);
  if (!ec) acceptor_.bind(endpoint, ec);
  if (!ec) acceptor_.listen(net::asio::socket_base::max_listen_connections, ec);
  if (ec) return MakeError(ErrorCode::kIo, "cannot listen on the address (in use?)");
  port_ = acceptor_.local_endpoint(ec).port();
  return {};
}

void Listener::Start() { Accept(); }

void Listener::Stop() {
  net::asio::post(acceptor_.get_executor(), [this] {
    net::error_code ec;
    acceptor_.close(ec);
  });
}

void Listener::Accept() {
  acceptor_.async_accept(net::asio::make_strand(ctx_.ioc()),
                         [this](const net::error_code& ec, StrandSocket socket) {
                           if (ec == net::asio::error::operation_aborted || !acceptor_.is_open())
                             return;
                           if (!ec) {
                             if (kind_ == ListenerKind::kFramedTcp) {
                               std::make_shared<TcpSession>(ctx_, std::move(socket))->Start();
                             } else {
                               std::make_shared<HttpSession>(ctx_, std::move(socket))->Start();
                             }
                           }
                           Accept();  // also after transient errors (EMFILE ...)
                         });
}

}  // namespace scenecrdt::server
