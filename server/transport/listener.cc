// SPDX-License-Identifier: Apache-2.0
// Owns binding, the accept loop with its backoff, and admission against the connection caps.
#include "scenecrdt/server/transport/listener.h"

#include <cstring>
#include <memory>
#include <string>

#include "scenecrdt/server/observability/endpoint_text.h"
#include "scenecrdt/server/sessions/envelope_protocol.h"
#include "scenecrdt/server/sessions/session.h"
#include "scenecrdt/server/transport/http_session.h"
#include "scenecrdt/server/transport/tcp_transport.h"

namespace scenecrdt::server {

namespace {
unsigned long long U(uint64_t v) { return static_cast<unsigned long long>(v); }
}  // namespace

Listener::Listener(const ConnectionContext& connections, ListenerKind kind,
                   ConnectionLimiter& limiter, const TlsContexts* tls)
    : connections_(connections),
      ctx_(connections.server),
      kind_(kind),
      limiter_(limiter),
      tls_(tls),
      acceptor_(net::asio::make_strand(ctx_.ioc())),
      retry_(acceptor_.get_executor()) {}

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
    retry_.cancel();
  });
}

void Listener::Accept() {
  acceptor_.async_accept(net::asio::make_strand(ctx_.ioc()),
                         [this](const net::error_code& ec, StrandSocket socket) {
                           if (ec == net::asio::error::operation_aborted || !acceptor_.is_open())
                             return;
                           if (ec) {
                             OnAcceptError(ec);
                             return;
                           }
                           backoff_.Reset();
                           Admit(std::move(socket));
                           Accept();
                         });
}

void Listener::OnAcceptError(const net::error_code& ec) {
  // EMFILE/ENFILE leave the connection in the backlog: accepting again at once fails again at
  // once. Wait (50 ms doubling to 1 s) for sessions to end and free descriptors.
  Metrics::Add(ctx_.metrics().accept_errors);
  const auto delay = backoff_.Next();
  uint64_t suppressed = 0;
  if (error_log_.Allow(NowMs(), suppressed)) {
    // Out of descriptors, keep this path free of anything that may need one: the system
    // category's text via strerror, not the category's virtual message() (UBSan's vptr check
    // opens /proc files to verify a dynamic type, which fails at EMFILE).
    const std::string text = ec.category() == net::asio::error::get_system_category()
                                 ? std::string(std::strerror(ec.value()))
                                 : ec.message();
    ctx_.log().Write(LogLevel::kError, "accept_error",
                     "listener=%s error=\"%s\" retry_ms=%lld open_connections=%u "
                     "suppressed=%llu hint=\"raise ulimit -n or lower --max-connections\"",
                     name(), text.c_str(), static_cast<long long>(delay.count()), limiter_.open(),
                     U(suppressed));
  }
  retry_.expires_after(delay);
  retry_.async_wait([this](const net::error_code& e) {
    if (!e && acceptor_.is_open()) Accept();
  });
}

void Listener::Admit(StrandSocket socket) {
  net::error_code ec;
  const auto peer = socket.remote_endpoint(ec);
  if (ec) return;  // gone already
  ConnectionLimiter::Verdict verdict;
  auto ticket = limiter_.TryAdmit(peer.address(), kind_ == ListenerKind::kHttp, verdict);
  if (!ticket) {
    Refuse(std::move(socket), verdict);
    return;
  }
  if (verdict == ConnectionLimiter::Verdict::kReserveEvicting) {
    Metrics::Add(ctx_.metrics().http_reserve_evictions);
    uint64_t suppressed = 0;
    if (refusal_log_.Allow(NowMs(), suppressed)) {
      ctx_.log().Write(LogLevel::kWarn, "http_reserve_eviction",
                       "new_peer=%s detail=\"the reserve is full: its oldest connection with no "
                       "/healthz or /metrics request read yet was closed\" suppressed=%llu",
                       EndpointText(peer).c_str(), U(suppressed));
    }
  }
  // The context current now: a certificate reload (SIGHUP) applies to later connections.
  std::shared_ptr<net::ssl::context> tls = tls_ ? tls_->current() : nullptr;
  if (kind_ == ListenerKind::kFramedTcp) {
    auto session = std::make_shared<Session>(
        connections_.session(), SessionKind::kTcp,
        std::make_unique<TcpTransport>(ctx_, std::move(socket), std::move(tls)),
        std::make_unique<EnvelopeProtocol>(ctx_));
    session->AdoptConnection(std::move(ticket));
    session->Start();
  } else {
    std::make_shared<HttpSession>(connections_, std::move(socket), std::move(ticket),
                                  std::move(tls))
        ->Start();
  }
}

void Listener::Refuse(StrandSocket socket, ConnectionLimiter::Verdict verdict) {
  const bool per_ip = verdict == ConnectionLimiter::Verdict::kPerIp;
  Metrics::Add(per_ip ? ctx_.metrics().connections_refused_per_ip
                      : ctx_.metrics().connections_refused_total);
  const ConnectionCaps& caps = limiter_.caps();
  const std::string text =
      per_ip ? "too many connections from your address (--max-connections-per-ip " +
                   std::to_string(caps.max_per_ip) + "); close some or retry later"
             : "the server is at its connection limit (--max-connections " +
                   std::to_string(caps.max_total) + "); retry later";
  uint64_t suppressed = 0;
  if (refusal_log_.Allow(NowMs(), suppressed)) {
    ctx_.log().Write(LogLevel::kWarn, "refusal",
                     "scene=- session=- kind=%s peer=%s reason=%s fatal=yes messages=0 "
                     "detail=\"%s\" suppressed=%llu",
                     name(), EndpointText(RemoteEndpoint(socket)).c_str(),
                     per_ip ? "max_connections_per_ip" : "max_connections", text.c_str(),
                     U(suppressed));
  }
  // One small write into an empty send buffer: it does not block, and a peer that does not
  // read it loses only the explanation.
  std::vector<uint8_t> answer;
  if (kind_ == ListenerKind::kFramedTcp) {
    answer = session::BuildFrame(session::ErrorFrame{ErrorCode::kUnavailable, text, 0, true});
  } else {
    const std::string body = text + "\n";
    const std::string response =
        "HTTP/1.1 503 Service Unavailable\r\nServer: scenecrdt\r\nRetry-After: 1\r\n"
        "Content-Type: text/plain\r\nConnection: close\r\nContent-Length: " +
        std::to_string(body.size()) + "\r\n\r\n" + body;
    answer.assign(response.begin(), response.end());
  }
  net::error_code ec;
  socket.non_blocking(true, ec);
  // (Over TLS a plain answer would be noise before a handshake: the close says it.)
  if (!tls_) socket.write_some(net::asio::buffer(answer), ec);
  socket.shutdown(net::tcp::socket::shutdown_send, ec);
  socket.close(ec);
}

}  // namespace scenecrdt::server
