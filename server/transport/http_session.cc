// SPDX-License-Identifier: Apache-2.0
// Owns the HTTP connection: request parsing with limits, routing, upgrade dispatch by path.
#include "scenecrdt/server/transport/http_session.h"

#include <algorithm>
#include <string_view>

#include "scenecrdt/server/observability/endpoint_text.h"
#include "scenecrdt/server/sessions/dcl_protocol.h"
#include "scenecrdt/server/sessions/envelope_protocol.h"
#include "scenecrdt/server/sessions/session.h"
#include "scenecrdt/server/storage/persistence.h"
#include "scenecrdt/server/transport/websocket_transport.h"
#include "scenecrdt/server/web/admin_routes.h"
#include "scenecrdt/server/web/web_routes.h"

namespace scenecrdt::server {

namespace {

namespace http = net::beast::http;
namespace websocket = net::beast::websocket;

constexpr std::size_t kMaxHeaderBytes = 8 * 1024;

// An attacker-chosen header value made safe to quote in a log line or an answer: printable
// ASCII without '"' and '\\', at most 100 characters.
std::string Printable(std::string_view text) {
  std::string out;
  for (const char c : text.substr(0, 100)) {
    out += c >= 0x20 && c < 0x7f && c != '"' && c != '\\' ? c : '?';
  }
  return out;
}

}  // namespace

HttpSession::HttpSession(const ConnectionContext& connections, StrandSocket socket,
                         std::shared_ptr<ConnectionTicket> ticket,
                         std::shared_ptr<net::ssl::context> tls)
    : connections_(connections),
      ctx_(connections.server),
      socket_(std::move(socket)),
      deadline_(socket_.get_executor()),
      peer_(RemoteEndpoint(socket_)),
      ticket_(std::move(ticket)) {
  if (tls) tls_.emplace(std::move(socket_), *tls);
}

void HttpSession::Start() {
  if (ticket_ && ticket_->reserve()) {
    // Over the cap, this connection holds a reserve place only until its request is read and
    // names /healthz or /metrics; before that a newer connection may take the place.
    ticket_->OnEvict([weak = weak_from_this(), executor = lowest().get_executor()] {
      net::asio::post(executor, [weak] {
        if (auto self = weak.lock()) {
          net::error_code ignored;
          self->lowest().close(ignored);
        }
      });
    });
  }
  if (!tls_) {
    Read();
    return;
  }
  deadline_.expires_after(std::chrono::milliseconds(ctx_.config().limits.handshake_timeout_ms));
  deadline_.async_wait([self = shared_from_this()](const net::error_code& ec) {
    if (!ec) {
      net::error_code ignored;
      self->lowest().close(ignored);
    }
  });
  tls_->async_handshake(net::ssl::stream_base::server,
                        [self = shared_from_this()](const net::error_code& ec) {
                          self->deadline_.cancel();
                          if (ec) {
                            Metrics::Add(self->ctx_.metrics().tls_handshake_failures);
                            net::error_code ignored;
                            self->lowest().close(ignored);
                            return;
                          }
                          self->Read();
                        });
}

void HttpSession::Read() {
  parser_.emplace();
  parser_->header_limit(kMaxHeaderBytes);
  parser_->body_limit(0);  // GET only
  deadline_.expires_after(std::chrono::milliseconds(ctx_.config().limits.handshake_timeout_ms));
  deadline_.async_wait([self = shared_from_this()](const net::error_code& ec) {
    if (!ec) {
      net::error_code ignored;
      self->lowest().close(ignored);
    }
  });
  auto handler = [self = shared_from_this()](const net::error_code& ec, std::size_t) {
    self->deadline_.cancel();
    if (ec) {
      self->OnReadError(ec);
      return;
    }
    self->Route();
  };
  WithStream(
      [&](auto& stream) { http::async_read(stream, buffer_, *parser_, std::move(handler)); });
}

void HttpSession::OnReadError(const net::error_code& ec) {
  if (ec == http::error::header_limit || ec == http::error::body_limit) {
    // Beast stopped at its limit: answer with a status (not a reset), then drain and close.
    const bool headers = ec == http::error::header_limit;
    ctx_.metrics().CountRefusal(ErrorCode::kBadRequest);
    ctx_.log().Write(LogLevel::kWarn, "refusal",
                     "scene=- session=- kind=http peer=%s reason=bad_request fatal=yes "
                     "messages=0 detail=\"%s\"",
                     EndpointText(peer_).c_str(),
                     headers ? "request headers above the limit" : "a request with a body");
    RespondAndClose(
        headers ? http::status::request_header_fields_too_large : http::status::bad_request,
        headers ? "request line and headers above 8 KiB: shorten the path or headers\n"
                : "this server takes no request bodies (GET only)\n");
    return;
  }
  const auto data = buffer_.cdata();
  const std::span<const uint8_t> received(static_cast<const uint8_t*>(data.data()), data.size());
  if (ec == net::asio::error::operation_aborted || !session::HasFrameIdentifier(received)) {
    net::error_code ignored;
    lowest().close(ignored);
    return;
  }
  // An envelope frame where a request line should be: a tcp:// client dialled the HTTP port.
  // Answered in its own language, a fatal Error frame naming the port it wanted.
  constexpr const char* kDetail = "an envelope frame on the HTTP port (tcp:// belongs on --tcp)";
  ctx_.metrics().CountRefusal(ErrorCode::kBadRequest);
  ctx_.log().Write(LogLevel::kWarn, "refusal",
                   "scene=- session=- kind=tcp peer=%s reason=bad_request fatal=yes messages=0 "
                   "detail=\"%s\"",
                   EndpointText(peer_).c_str(), kDetail);
  const uint16_t tcp = ctx_.tcp_port();
  std::string text = "this is scenecrdt's HTTP port: WebSocket clients use ws://HOST:" +
                     std::to_string(ctx_.http_port()) + "/scene/<name> (or /dcl/<name>) here. ";
  text += tcp != 0 ? "Framed TCP (tcp://) is on the --tcp port: tcp://HOST:" + std::to_string(tcp)
                   : std::string("This server has no --tcp listener.");
  auto frame = std::make_shared<const std::vector<uint8_t>>(
      session::BuildFrame(session::ErrorFrame{ErrorCode::kBadRequest, text, 0, true}));
  deadline_.expires_after(std::chrono::milliseconds(ctx_.config().limits.slow_consumer_ms));
  deadline_.async_wait([self = shared_from_this()](const net::error_code& e) {
    if (!e) {
      net::error_code ignored;
      self->lowest().close(ignored);
    }
  });
  auto handler = [self = shared_from_this(), frame](const net::error_code& e, std::size_t) {
    self->deadline_.cancel();
    self->CloseConnection(!e);
  };
  WithStream([&](auto& stream) {
    net::asio::async_write(stream, net::asio::buffer(*frame), std::move(handler));
  });
}

void HttpSession::Route() {
  Metrics::Add(ctx_.metrics().http_requests);
  Request req = parser_->release();
  const std::string_view target(req.target().data(), req.target().size());
  const bool upgrade = websocket::is_upgrade(req);
  // The one route table (web/web_request.h): every path below is named there.
  const WebRequest route = ParseWebTarget(target, upgrade);
  using Route = WebRequest::Route;
  const auto origin_field = req.find(http::field::origin);
  const std::optional<std::string_view> origin =
      origin_field == req.end() ? std::nullopt
                                : std::optional<std::string_view>(std::string_view(
                                      origin_field->value().data(), origin_field->value().size()));
  const auto host_field = req[http::field::host];
  const std::string_view host(host_field.data(), host_field.size());
  if (ticket_ && ticket_->reserve()) {
    // Above --max-connections: the reserve answers one /healthz or /metrics request, then
    // closes; anything else is refused as at the cap.
    req.keep_alive(false);
    const bool monitoring = route.route == Route::kHealthz || route.route == Route::kMetrics;
    if (!monitoring || !ticket_->Confirm()) {
      Metrics::Add(ctx_.metrics().connections_refused_total);
      Metrics::Add(ctx_.metrics().http_reserve_refused);
      Respond(http::status::service_unavailable,
              "the server is at its connection limit (--max-connections): above it only "
              "/healthz and /metrics are answered; retry later\n",
              req);
      return;
    }
  }
  if (!ctx_.origins().AllowsHost(host)) {
    // DNS rebinding: a page on a name the attacker points at this machine sends that name.
    const std::string shown = Printable(host);
    ctx_.metrics().CountRefusal(ErrorCode::kUnauthorized);
    Metrics::Add(ctx_.metrics().http_host_refused);
    ctx_.log().Write(LogLevel::kWarn, "refusal",
                     "scene=- session=- kind=http peer=%s reason=host_not_allowed fatal=yes "
                     "messages=0 detail=\"Host %s\" http=403",
                     EndpointText(peer_).c_str(), shown.c_str());
    req.keep_alive(false);
    Respond(http::status::forbidden,
            "this server does not answer to the host name '" + shown +
                "' (DNS-rebinding guard): use localhost or an IP address, or start it with "
                "--allowed-hosts NAME\n",
            req);
    return;
  }
  if (!ctx_.origins().Allows(origin, host)) {
    // A page from another site: no WebSocket, no metrics (a browser would otherwise let any
    // page it shows write to a local server).
    ctx_.metrics().CountRefusal(ErrorCode::kUnauthorized);
    ctx_.log().Write(LogLevel::kWarn, "refusal",
                     "scene=- session=- kind=http peer=%s reason=origin_not_allowed fatal=yes "
                     "messages=0 detail=\"%.*s\" http=403",
                     EndpointText(peer_).c_str(),
                     static_cast<int>(std::min<std::size_t>(origin->size(), 200)), origin->data());
    Respond(http::status::forbidden,
            "this Origin may not use this server: add it to the server's --allowed-origins\n", req);
    return;
  }
  if (IsAdminRoute(route.route)) {
    // The admin API (web/admin_routes.h): 404 unless --admin-token-file; answers may come
    // from a scene's strand.
    const auto auth_field = req[http::field::authorization];
    const auto method = req.method_string();
    ServeAdmin(connections_.web(), std::string_view(method.data(), method.size()), route,
               std::string_view(auth_field.data(), auth_field.size()), peer_,
               [self = shared_from_this(), req](WebResponse r) {
                 net::asio::post(self->socket_.get_executor(),
                                 [self, req, r = std::move(r)]() mutable {
                                   self->Respond(static_cast<http::status>(r.status),
                                                 std::move(r.body), req, r.content_type);
                                 });
               });
    return;
  }
  if (upgrade) {
    // The WebSocket paths: each owns its protocol.
    if (route.route == Route::kSceneSocket) {
      if (route.name.empty()) {
        Respond(http::status::bad_request, "bad scene name\n", req);
        return;
      }
      StartSession(std::make_shared<Session>(
                       connections_.session(), SessionKind::kWebSocket,
                       UpgradeTransport(std::move(req), EnvelopeProtocol::kTransportKeepAlive),
                       std::make_unique<EnvelopeProtocol>(ctx_, route.name)),
                   nullptr);
      return;
    }
    if (route.route == Route::kDclSocket) {
      UpgradeDcl(route.name, route.token, std::move(req));
      return;
    }
    Respond(http::status::not_found, "WebSocket paths: /scene/<name>, /dcl/<name>\n", req);
    return;
  }
  if (req.method() != http::verb::get && req.method() != http::verb::head) {
    Respond(http::status::method_not_allowed, "GET only\n", req);
  } else if (route.route == Route::kHealthz) {
    // Not ok while group commits fail: nothing written now can be acknowledged.
    // Cluster mode: the node serves reads without Redis; writes wait (docs/CLUSTER.md).
    if (ctx_.commits().shared()) {
      Respond(http::status::ok, "ok\n", req);
      return;
    }
    const StorageHealth& storage = ctx_.persistence().health();
    if (storage.ok()) {
      Respond(http::status::ok, "ok\n", req);
    } else {
      Respond(http::status::service_unavailable,
              "storage_unavailable: " + storage.last_error() + "\n", req);
    }
  } else if (route.route == Route::kMetrics) {
    Respond(http::status::ok, ctx_.metrics().RenderPrometheus(), req, "text/plain; version=0.0.4");
  } else if (IsViewerRoute(route.route)) {  // web_routes.h; answers may come from a scene
    ServeWeb(connections_.web(), route, peer_, [self = shared_from_this(), req](WebResponse r) {
      net::asio::post(self->socket_.get_executor(), [self, req, r = std::move(r)]() mutable {
        self->Respond(static_cast<http::status>(r.status), std::move(r.body), req, r.content_type);
      });
    });
  } else {
    Respond(http::status::not_found,
            "paths: / /view/<scene> /healthz /metrics /scene/<name> /dcl/<name> (WebSocket)\n",
            req);
  }
}

// /dcl/<scene>?token=T: authorised before the upgrade, so a refused client gets a plain
// HTTP status (401 unknown token, 403 scene not granted, 400 bad scene name, 404 a read-only
// token for a scene with nothing stored, 503 the scene cap or a scene that cannot be read) and
// costs nothing more. Same auth table and roles as the envelope's Hello.
void HttpSession::UpgradeDcl(std::string scene, std::string token, Request req) {
  if (!session::IsValidSceneName(scene)) {
    Respond(http::status::bad_request, "bad scene name\n", req);
    return;
  }
  auto grant = ctx_.auth().CheckNow(token, scene);
  if (!grant.has_value()) {
    ctx_.metrics().CountRefusal(ErrorCode::kUnauthorized);
    const bool unknown = !IsSceneNotGranted(grant.error());
    ctx_.log().Write(LogLevel::kWarn, "refusal",
                     "scene=%s session=- kind=dcl peer=%s reason=unauthorized fatal=yes "
                     "messages=0 detail=\"%s\" http=%d",
                     scene.c_str(), EndpointText(peer_).c_str(), grant.error().detail,
                     unknown ? 401 : 403);
    Respond(unknown ? http::status::unauthorized : http::status::forbidden,
            std::string(grant.error().detail) + "\n", req);
    return;
  }
  const Role role = grant->role;
  if (role == Role::kRead) {
    // A read-only token may not create the scene: a scene with nothing stored (in Redis too,
    // on a cluster node) is refused here (404), as are a full scene cap and a scene that
    // cannot be read now (503), rather than after the upgrade. The scene stays in memory
    // (unreferenced, until idle) for the join.
    auto held = connections_.scenes.Acquire(scene, /*may_create=*/false);
    if (!held.has_value()) {
      const ErrorCode code = held.error().code;
      const http::status status = code == ErrorCode::kUnauthorized
                                      ? http::status::not_found
                                      : http::status::service_unavailable;
      ctx_.metrics().CountRefusal(code);
      ctx_.log().Write(LogLevel::kWarn, "refusal",
                       "scene=%s session=- kind=dcl peer=%s reason=%s fatal=yes messages=0 "
                       "detail=\"%s\" http=%d",
                       scene.c_str(), EndpointText(peer_).c_str(), ErrorCodeName(code),
                       held.error().detail, static_cast<int>(status));
      Respond(status, std::string(held.error().detail) + "\n", req);
      return;
    }
    connections_.scenes.Release(held.value());
  }
  const UpgradeGrant noted{grant.value(), std::move(token), scene};
  std::unique_ptr<Transport> transport =
      UpgradeTransport(std::move(req), DclProtocol::kTransportKeepAlive);
  auto protocol = std::make_unique<DclProtocol>(ctx_, transport->strand(), std::move(scene), role);
  StartSession(std::make_shared<Session>(connections_.session(), SessionKind::kDcl,
                                         std::move(transport), std::move(protocol)),
               &noted);
}

std::unique_ptr<Transport> HttpSession::UpgradeTransport(Request req, bool keep_alive) {
  if (tls_) {
    return std::make_unique<WebSocketTransport<TlsSocket>>(ctx_, std::move(*tls_), std::move(req),
                                                           keep_alive);
  }
  return std::make_unique<WebSocketTransport<StrandSocket>>(ctx_, std::move(socket_),
                                                            std::move(req), keep_alive);
}

void HttpSession::StartSession(const std::shared_ptr<Session>& session, const UpgradeGrant* grant) {
  session->AdoptConnection(std::move(ticket_));
  if (grant) session->NoteGrant(grant->grant, grant->token, grant->scene);
  session->Start();
}

void HttpSession::RespondAndClose(http::status status, std::string body) {
  auto res = std::make_shared<http::response<http::string_body>>(status, 11);
  res->set(http::field::server, "scenecrdt");
  res->set(http::field::content_type, "text/plain");
  res->keep_alive(false);
  res->body() = std::move(body);
  res->prepare_payload();
  deadline_.expires_after(std::chrono::milliseconds(ctx_.config().limits.slow_consumer_ms));
  deadline_.async_wait([self = shared_from_this()](const net::error_code& ec) {
    if (!ec) {
      net::error_code ignored;
      self->lowest().close(ignored);
    }
  });
  auto handler = [self = shared_from_this(), res](const net::error_code& ec, std::size_t) {
    net::error_code ignored;
    if (ec || self->tls_) {
      // TLS: close_notify (the shutdown reads and discards what the peer still sends).
      self->deadline_.cancel();
      self->CloseConnection(!ec);
      return;
    }
    self->lowest().shutdown(net::tcp::socket::shutdown_send, ignored);
    // Closing over unread bytes would reset the connection and could lose the answer at the
    // peer: read what it still sends (bounded by the deadline above and kMaxDrainBytes)
    // until it closes.
    self->Drain(0);
  };
  WithStream([&](auto& stream) { http::async_write(stream, *res, std::move(handler)); });
}

void HttpSession::Drain(std::size_t drained) {
  constexpr std::size_t kMaxDrainBytes = 4u << 20;
  buffer_.consume(buffer_.size());
  auto handler = [self = shared_from_this(), drained](const net::error_code& ec, std::size_t n) {
    if (ec || drained + n > kMaxDrainBytes) {
      self->deadline_.cancel();
      net::error_code ignored;
      self->lowest().close(ignored);
      return;
    }
    self->Drain(drained + n);
  };
  WithStream([&](auto& stream) {
    stream.async_read_some(buffer_.prepare(64 * 1024), std::move(handler));
  });
}

void HttpSession::Respond(http::status status, std::string body, const Request& req,
                          const char* content_type) {
  auto res = std::make_shared<http::response<http::string_body>>(status, req.version());
  res->set(http::field::server, "scenecrdt");
  res->set(http::field::content_type, content_type);
  res->keep_alive(req.keep_alive());
  res->body() = std::move(body);
  res->prepare_payload();
  deadline_.expires_after(std::chrono::milliseconds(ctx_.config().limits.slow_consumer_ms));
  deadline_.async_wait([self = shared_from_this()](const net::error_code& ec) {
    if (!ec) {
      net::error_code ignored;
      self->lowest().close(ignored);
    }
  });
  auto handler = [self = shared_from_this(), res](const net::error_code& ec, std::size_t) {
    self->deadline_.cancel();
    if (ec || !res->keep_alive()) {
      self->CloseConnection(!ec);
      return;
    }
    self->Read();
  };
  WithStream([&](auto& stream) { http::async_write(stream, *res, std::move(handler)); });
}

void HttpSession::CloseConnection(bool graceful) {
  net::error_code ignored;
  if (!tls_ || !graceful) {
    lowest().shutdown(net::tcp::socket::shutdown_send, ignored);
    lowest().close(ignored);
    return;
  }
  // https://: close_notify, so the peer reads a clean end rather than a truncation; a peer
  // that does not answer it within the close grace is cut.
  deadline_.expires_after(std::chrono::milliseconds(kCloseGraceMs));
  deadline_.async_wait([self = shared_from_this()](const net::error_code& ec) {
    if (!ec) {
      net::error_code e;
      self->lowest().close(e);
    }
  });
  tls_->async_shutdown([self = shared_from_this()](const net::error_code&) {
    self->deadline_.cancel();
    net::error_code e;
    self->lowest().close(e);
  });
}

}  // namespace scenecrdt::server
