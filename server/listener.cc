// SPDX-License-Identifier: Apache-2.0
// Owns the transports: framed TCP sessions, the HTTP session (health, metrics, upgrade
// dispatch by path) and WebSocket sessions, plus the acceptor loop.
#include "scenecrdt/server/listener.h"

#include <array>
#include <cstdio>

#include "scenecrdt/server/session.h"

namespace scenecrdt::server {

namespace {

namespace http = net::beast::http;
namespace websocket = net::beast::websocket;
using StrandSocket = net::asio::basic_stream_socket<net::tcp, net::Strand>;

net::tcp::endpoint RemoteOf(const StrandSocket& socket) {
  net::error_code ec;
  net::tcp::endpoint endpoint = socket.remote_endpoint(ec);
  return ec ? net::tcp::endpoint() : endpoint;
}

// ---- Framed TCP: u32 LE size prefix + envelope, read as prefix then body ----

class TcpSession final : public Session {
 public:
  TcpSession(ServerContext& ctx, StrandSocket socket)
      : Session(ctx, socket.get_executor(), SessionKind::kTcp, {}, RemoteOf(socket)),
        socket_(std::move(socket)) {}

 private:
  void TransportStart() override {
    net::error_code ec;
    socket_.set_option(net::tcp::no_delay(true), ec);
    ReadNext();
  }
  void TransportRead() override {
    frame_buffer_.resize(session::kSizePrefixBytes);
    net::asio::async_read(
        socket_, net::asio::buffer(frame_buffer_.data(), session::kSizePrefixBytes),
        net::asio::bind_executor(strand_, [self = Self()](const net::error_code& ec, std::size_t) {
          self->OnPrefix(ec);
        }));
  }
  void OnPrefix(const net::error_code& ec) {
    if (ec) {
      OnReadError(ec);
      return;
    }
    const uint64_t size = *session::PeekFrameSize(frame_buffer_);
    if (size > max_frame_bytes()) {
      Fatal(ErrorCode::kFrameTooLarge, "frame above the server's limit");
      return;
    }
    if (size <= session::kSizePrefixBytes) {
      Fatal(ErrorCode::kEnvelopeInvalid, "empty frame");
      return;
    }
    frame_buffer_.resize(static_cast<std::size_t>(size));
    net::asio::async_read(
        socket_,
        net::asio::buffer(frame_buffer_.data() + session::kSizePrefixBytes,
                          frame_buffer_.size() - session::kSizePrefixBytes),
        net::asio::bind_executor(strand_, [self = Self()](const net::error_code& e, std::size_t) {
          if (e) {
            self->OnReadError(e);
            return;
          }
          self->OnFrame(self->frame_buffer_);
          self->ReadNext();
        }));
  }
  void TransportWrite(const std::vector<net::asio::const_buffer>& buffers) override {
    net::asio::async_write(socket_, buffers,
                           net::asio::bind_executor(
                               strand_, [self = Self()](const net::error_code& ec, std::size_t n) {
                                 self->OnWriteDone(ec, n);
                               }));
  }
  void TransportClose() override {
    net::error_code ec;
    socket_.shutdown(net::tcp::socket::shutdown_both, ec);
    socket_.close(ec);
    OnClosed();
  }
  std::shared_ptr<TcpSession> Self() {
    return std::static_pointer_cast<TcpSession>(shared_from_this());
  }

  StrandSocket socket_;
};

// ---- WebSocket sessions: /scene/<name> (binary messages of one or more whole envelope
// frames) and /dcl/<name> (binary messages that are plain DCL chunks, no envelope) ----

class WsSession final : public Session {
 public:
  // `kind`: kWebSocket (envelope) or kDcl (raw, joined at once with `dcl_role`).
  WsSession(ServerContext& ctx, StrandSocket socket, http::request<http::string_body> request,
            std::string scene, SessionKind kind, Role dcl_role = Role::kRead)
      : Session(ctx, socket.get_executor(), kind, std::move(scene), RemoteOf(socket), dcl_role),
        ws_(std::move(socket)),
        request_(std::move(request)) {}

 private:
  void TransportStart() override {
    net::error_code ec;
    net::beast::get_lowest_layer(ws_).set_option(net::tcp::no_delay(true), ec);
    ws_.binary(true);
    ws_.read_message_max(max_frame_bytes());
    const Limits& limits = ctx_.config().limits;
    websocket::stream_base::timeout timeout{};
    timeout.handshake_timeout = std::chrono::milliseconds(limits.handshake_timeout_ms);
    if (raw()) {
      // No envelope Ping on this path: WebSocket pings at half the idle timeout keep a quiet
      // (receive-only) engine joined, and a peer that answers nothing is cut after it.
      timeout.idle_timeout = std::chrono::milliseconds(limits.idle_timeout_ms);
      timeout.keep_alive_pings = true;
    } else {
      timeout.idle_timeout = websocket::stream_base::none();  // the session watchdog owns it
      timeout.keep_alive_pings = false;
    }
    ws_.set_option(timeout);
    ws_.async_accept(request_,
                     net::asio::bind_executor(strand_, [self = Self()](const net::error_code& e) {
                       if (e) {
                         self->OnReadError(e);
                         return;
                       }
                       if (self->raw()) self->JoinPathScene();
                       self->ReadNext();
                     }));
  }
  void TransportRead() override {
    ws_.async_read(
        buffer_,
        net::asio::bind_executor(strand_, [self = Self()](const net::error_code& ec, std::size_t) {
          if (ec) {
            self->OnReadError(ec);
            return;
          }
          if (self->raw() && self->ws_.got_text()) {
            self->Fatal(ErrorCode::kBadRequest, "text messages are not DCL chunks");
            return;
          }
          const auto data = self->buffer_.cdata();
          self->OnMessage(
              std::span<const uint8_t>(static_cast<const uint8_t*>(data.data()), data.size()));
          self->buffer_.consume(self->buffer_.size());
          self->ReadNext();
        }));
  }
  void TransportWrite(const std::vector<net::asio::const_buffer>& buffers) override {
    ws_.async_write(buffers,
                    net::asio::bind_executor(
                        strand_, [self = Self()](const net::error_code& ec, std::size_t n) {
                          self->OnWriteDone(ec, n);
                        }));
  }
  void TransportClose() override {
    if (close_started_ || writing() || !ws_.is_open()) {
      net::error_code ec;
      net::beast::get_lowest_layer(ws_).close(ec);
      OnClosed();
      return;
    }
    close_started_ = true;
    // Raw sessions learn why they were closed from the close code and reason (there is no
    // Error frame on /dcl/); envelope sessions already got their Error frame.
    websocket::close_reason reason(static_cast<websocket::close_code>(close_code()));
    reason.reason.assign(close_text().data(), std::min<std::size_t>(close_text().size(), 123));
    ws_.async_close(reason,
                    net::asio::bind_executor(strand_, [self = Self()](const net::error_code&) {
                      net::error_code ec;
                      net::beast::get_lowest_layer(self->ws_).close(ec);
                      self->OnClosed();
                    }));
  }
  std::shared_ptr<WsSession> Self() {
    return std::static_pointer_cast<WsSession>(shared_from_this());
  }

  websocket::stream<StrandSocket> ws_;
  http::request<http::string_body> request_;
  net::beast::flat_buffer buffer_;
  bool close_started_ = false;
};

// The value of `key` in a URL query string ("a=1&token=x"), percent-decoded ('+' is a space,
// as URLSearchParams writes it); nullopt when absent or badly encoded.
std::optional<std::string> QueryParam(std::string_view query, std::string_view key) {
  while (!query.empty()) {
    const auto amp = query.find('&');
    const std::string_view pair = query.substr(0, amp);
    query = amp == std::string_view::npos ? std::string_view() : query.substr(amp + 1);
    const auto eq = pair.find('=');
    if (pair.substr(0, eq) != key) continue;
    const std::string_view value =
        eq == std::string_view::npos ? std::string_view() : pair.substr(eq + 1);
    std::string out;
    out.reserve(value.size());
    for (std::size_t i = 0; i < value.size(); ++i) {
      if (value[i] == '+') {
        out += ' ';
      } else if (value[i] != '%') {
        out += value[i];
      } else {
        const auto hex = [](char c) -> int {
          if (c >= '0' && c <= '9') return c - '0';
          if (c >= 'a' && c <= 'f') return c - 'a' + 10;
          if (c >= 'A' && c <= 'F') return c - 'A' + 10;
          return -1;
        };
        if (i + 2 >= value.size()) return std::nullopt;
        const int hi = hex(value[i + 1]);
        const int lo = hex(value[i + 2]);
        if (hi < 0 || lo < 0) return std::nullopt;
        out += static_cast<char>(hi * 16 + lo);
        i += 2;
      }
    }
    return out;
  }
  return std::nullopt;
}

// ---- HTTP: /healthz, /metrics, and WebSocket upgrades by path ----

class HttpSession : public std::enable_shared_from_this<HttpSession> {
 public:
  HttpSession(ServerContext& ctx, StrandSocket socket)
      : ctx_(ctx),
        socket_(std::move(socket)),
        deadline_(socket_.get_executor()),
        peer_(RemoteOf(socket_)) {}

  void Start() { Read(); }

 private:
  static constexpr std::size_t kMaxHeaderBytes = 8 * 1024;

  void Read() {
    parser_.emplace();
    parser_->header_limit(kMaxHeaderBytes);
    parser_->body_limit(0);  // GET only
    deadline_.expires_after(std::chrono::milliseconds(ctx_.config().limits.handshake_timeout_ms));
    deadline_.async_wait([self = shared_from_this()](const net::error_code& ec) {
      if (!ec) {
        net::error_code ignored;
        self->socket_.close(ignored);
      }
    });
    http::async_read(socket_, buffer_, *parser_,
                     [self = shared_from_this()](const net::error_code& ec, std::size_t) {
                       self->deadline_.cancel();
                       if (ec) {
                         net::error_code ignored;
                         self->socket_.close(ignored);
                         return;
                       }
                       self->Route();
                     });
  }

  void Route() {
    Metrics::Add(ctx_.metrics().http_requests);
    http::request<http::string_body> req = parser_->release();
    const std::string_view target(req.target().data(), req.target().size());
    const std::string_view path = target.substr(0, target.find('?'));
    if (websocket::is_upgrade(req)) {
      // The WebSocket paths: each prefix owns its protocol.
      constexpr std::string_view kScenePrefix = "/scene/";
      constexpr std::string_view kDclPrefix = "/dcl/";
      if (path.starts_with(kScenePrefix)) {
        const std::string scene(path.substr(kScenePrefix.size()));
        if (!session::IsValidSceneName(scene)) {
          Respond(http::status::bad_request, "bad scene name\n", req);
          return;
        }
        std::make_shared<WsSession>(ctx_, std::move(socket_), std::move(req), scene,
                                    SessionKind::kWebSocket)
            ->Start();
        return;
      }
      if (path.starts_with(kDclPrefix)) {
        // Read the token before `req` moves: `target` views into it.
        const auto query_at = target.find('?');
        const std::string_view query =
            query_at == std::string_view::npos ? std::string_view() : target.substr(query_at + 1);
        std::string token = QueryParam(query, "token").value_or(std::string());
        UpgradeDcl(std::string(path.substr(kDclPrefix.size())), std::move(token), std::move(req));
        return;
      }
      Respond(http::status::not_found, "WebSocket paths: /scene/<name>, /dcl/<name>\n", req);
      return;
    }
    if (req.method() != http::verb::get && req.method() != http::verb::head) {
      Respond(http::status::method_not_allowed, "GET only\n", req);
    } else if (path == "/healthz") {
      Respond(http::status::ok, "ok\n", req);
    } else if (path == "/metrics") {
      Respond(http::status::ok, ctx_.metrics().RenderPrometheus(), req,
              "text/plain; version=0.0.4");
    } else {
      Respond(http::status::not_found,
              "paths: /healthz /metrics /scene/<name> /dcl/<name> (WebSocket)\n", req);
    }
  }

  // /dcl/<scene>?token=T: authorised before the upgrade, so a refused client gets a plain
  // HTTP status (401 unknown token, 403 scene not granted, 400 bad scene name) and costs
  // nothing more. Same auth table and roles as the envelope's Hello.
  void UpgradeDcl(std::string scene, std::string token, http::request<http::string_body> req) {
    if (!session::IsValidSceneName(scene)) {
      Respond(http::status::bad_request, "bad scene name\n", req);
      return;
    }
    auto role = ctx_.auth().Check(token, scene);
    if (!role.has_value()) {
      ctx_.metrics().CountRefusal(ErrorCode::kUnauthorized);
      const bool unknown = !ctx_.auth().Knows(token);
      ctx_.log().Write("refusal",
                       "scene=%s session=- kind=dcl peer=%s reason=unauthorized fatal=yes "
                       "messages=0 detail=\"%s\" http=%d",
                       scene.c_str(), EndpointText(peer_).c_str(), role.error().detail,
                       unknown ? 401 : 403);
      Respond(unknown ? http::status::unauthorized : http::status::forbidden,
              std::string(role.error().detail) + "\n", req);
      return;
    }
    std::make_shared<WsSession>(ctx_, std::move(socket_), std::move(req), std::move(scene),
                                SessionKind::kDcl, role.value())
        ->Start();
  }

  void Respond(http::status status, std::string body, const http::request<http::string_body>& req,
               const char* content_type = "text/plain") {
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
        self->socket_.close(ignored);
      }
    });
    http::async_write(socket_, *res,
                      [self = shared_from_this(), res](const net::error_code& ec, std::size_t) {
                        self->deadline_.cancel();
                        if (ec || !res->keep_alive()) {
                          net::error_code ignored;
                          self->socket_.shutdown(net::tcp::socket::shutdown_send, ignored);
                          self->socket_.close(ignored);
                          return;
                        }
                        self->Read();
                      });
  }

  ServerContext& ctx_;
  StrandSocket socket_;
  net::asio::steady_timer deadline_;
  net::tcp::endpoint peer_;
  net::beast::flat_buffer buffer_;
  std::optional<http::request_parser<http::string_body>> parser_;
};

}  // namespace

Result<net::tcp::endpoint> ParseEndpoint(const std::string& host_port) {
  const auto colon = host_port.rfind(':');
  if (colon == std::string::npos || colon + 1 >= host_port.size()) {
    return MakeError(ErrorCode::kInvalidArgument, "expected HOST:PORT");
  }
  std::string host = host_port.substr(0, colon);
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') {
    host = host.substr(1, host.size() - 2);
  }
  const std::string port_text = host_port.substr(colon + 1);
  unsigned long port = 0;
  for (char c : port_text) {
    if (c < '0' || c > '9') return MakeError(ErrorCode::kInvalidArgument, "bad port number");
    port = port * 10 + static_cast<unsigned long>(c - '0');
    if (port > 65535) return MakeError(ErrorCode::kInvalidArgument, "port above 65535");
  }
  if (host == "localhost") host = "127.0.0.1";
  net::error_code ec;
  const auto address = net::asio::ip::make_address(host.empty() ? "0.0.0.0" : host, ec);
  if (ec) return MakeError(ErrorCode::kInvalidArgument, "HOST must be an IP address");
  return net::tcp::endpoint(address, static_cast<uint16_t>(port));
}

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
