// SPDX-License-Identifier: Apache-2.0
// Owns the client transports: connect with a deadline, frame reassembly, gather writes.
#include "scenecrdt/client/internal/connection.h"

#include <netinet/in.h>
#include <sys/socket.h>

#include <algorithm>
#include <cerrno>

#include "scenecrdt/client/internal/client_tls.h"
#include "scenecrdt/client/internal/connection_streams.h"
#include "scenecrdt/client/internal/receive_timestamp.h"
#include "scenecrdt/net/tls.h"
#include "scenecrdt/net/ws_compression.h"

namespace scenecrdt::client {

void OfferCompression(const ServerUrl& url, const ConnectionOptions& options,
                      session::Hello& hello) {
  const bool zstd = url.scheme == ServerUrl::Scheme::kTcp && options.zstd;
  hello.compression = zstd ? session::Compression::kZstd : session::Compression::kNone;
  hello.zstd_frames = zstd && options.zstd_frames;
}

Connection::Connection(net::asio::io_context& ioc, ServerUrl url, std::string scene,
                       ConnectionOptions options, ConnectionHandlers handlers)
    : strand_(net::asio::make_strand(ioc)),
      url_(std::move(url)),
      scene_(std::move(scene)),
      options_(options),
      handlers_(std::move(handlers)),
      streams_(std::make_unique<ConnectionStreams>(strand_)) {
  if (url_.tls) {
    auto ctx = MakeTlsContext(options_.ca_file);
    if (!ctx.has_value()) {
      setup_error_ = ctx.error();
      // A socket to close in Fail; Start reports the error.
      streams_->tcp.emplace(strand_);
      return;
    }
    streams_->tls_context = std::move(ctx.value());
  }
  const bool ws = url_.scheme != ServerUrl::Scheme::kTcp;
  if (url_.tls && ws) {
    streams_->wss.emplace(strand_, *streams_->tls_context);
  } else if (url_.tls) {
    streams_->tls.emplace(strand_, *streams_->tls_context);
  } else if (ws) {
    streams_->ws.emplace(strand_);
  } else {
    streams_->tcp.emplace(strand_);
  }
}

Connection::~Connection() = default;

void Connection::Start() {
  net::asio::post(strand_, [self = shared_from_this()] {
    ConnectionStreams& impl = *self->streams_;
    if (self->setup_error_) {
      self->Fail(*self->setup_error_);
      return;
    }
    impl.deadline.expires_after(std::chrono::milliseconds(self->options_.connect_timeout_ms));
    impl.deadline.async_wait([self](const net::error_code& ec) {
      if (!ec && !self->open_) {
        self->Fail(MakeError(ErrorCode::kIo, "timed out connecting to the server"));
      }
    });
    impl.resolver.async_resolve(
        self->url_.host, std::to_string(self->url_.port),
        [self](const net::error_code& ec, const net::tcp::resolver::results_type& results) {
          if (self->closed_) return;
          if (ec) {
            self->Fail(MakeError(ErrorCode::kIo, "cannot resolve the server host"));
            return;
          }
          if (!self->options_.local_address.empty()) {
            self->ConnectFrom(results);
            return;
          }
          net::asio::async_connect(self->streams_->lowest(), results,
                                   [self](const net::error_code& e, const net::tcp::endpoint&) {
                                     self->OnTcpConnected(e);
                                   });
        });
  });
}

void Connection::ConnectFrom(const net::tcp::resolver::results_type& results) {
  net::error_code ec;
  const net::asio::ip::address local = net::asio::ip::make_address(options_.local_address, ec);
  if (ec) {
    Fail(MakeError(ErrorCode::kInvalidArgument,
                   "ConnectionOptions::local_address is not an IP address"));
    return;
  }
  // A socket bound to an IPv4 address cannot reach an IPv6 server (nor the reverse), and
  // async_connect over a list would reopen the socket without the binding: the first address
  // of the same family only.
  const auto match = std::find_if(results.begin(), results.end(), [&](const auto& entry) {
    return entry.endpoint().address().is_v4() == local.is_v4();
  });
  if (match == results.end()) {
    Fail(MakeError(ErrorCode::kIo,
                   "the server host has no address of the local address's family (IPv4 or "
                   "IPv6)"));
    return;
  }
  const net::tcp::endpoint server = match->endpoint();
  net::tcp::socket& socket = streams_->lowest();
  socket.open(server.protocol(), ec);
  if (!ec) {
    // The port is picked at connect time (per destination), not at bind time: thousands of
    // bound sockets do not exhaust the ephemeral ports of their address. Best effort (Linux).
    const int on = 1;
    setsockopt(socket.native_handle(), IPPROTO_IP, IP_BIND_ADDRESS_NO_PORT, &on, sizeof on);
    socket.bind(net::tcp::endpoint(local, 0), ec);
  }
  if (ec) {
    Fail(MakeError(ErrorCode::kIo,
                   "cannot bind ConnectionOptions::local_address (it must be an address of this "
                   "machine; on Linux every 127.x.y.z is)"));
    return;
  }
  socket.async_connect(
      server, [self = shared_from_this()](const net::error_code& e) { self->OnTcpConnected(e); });
}

void Connection::OnTcpConnected(const net::error_code& e) {
  if (closed_) return;
  if (e) {
    Fail(MakeError(ErrorCode::kIo,
                   "cannot connect to the server (is `scenecrdt serve` running on that address?)"));
    return;
  }
  net::error_code ignored;
  streams_->lowest().set_option(net::tcp::no_delay(true), ignored);
  // Kernel receive stamps: plain tcp:// only (TLS and WebSocket read through their own
  // layers; those connections use user-space times).
  if (options_.kernel_receive_timestamps) {
    const int on = 1;
    if (!streams_->tcp || setsockopt(streams_->tcp->native_handle(), SOL_SOCKET, SO_TIMESTAMPNS,
                                     &on, sizeof on) != 0) {
      options_.kernel_receive_timestamps = false;  // user-space times
    }
  }
  if (streams_->tls_stream()) {
    TlsHandshake();
  } else {
    Upgrade();
  }
}

void Connection::TlsHandshake() {
  TlsStream& tls = *streams_->tls_stream();
  PrepareClientHandshake(tls, url_.host);
  tls.async_handshake(
      net::ssl::stream_base::client, [self = shared_from_this()](const net::error_code& ec) {
        if (self->closed_) return;
        if (ec) {
          // Error keeps a pointer to its text: both live as long as the program.
          static const std::string untrusted = "TLS: " + std::string(kUntrustedCertificate);
          self->Fail(MakeError(ErrorCode::kIo,
                               IsCertificateRefused(ec)
                                   ? untrusted.c_str()
                                   : "TLS handshake with the server failed (a plain server "
                                     "needs tcp:// or ws://)"));
          return;
        }
        self->Upgrade();
      });
}

void Connection::Upgrade() {
  if (!streams_->websocket()) {
    OnConnected();
    return;
  }
  streams_->WithWebSocket([this](auto& ws) {
    ws.binary(true);
    ws.read_message_max(options_.max_frame_bytes);
    ws.set_option(net::ClientDeflate(options_.deflate));
    ws.async_handshake(streams_->upgrade_response, url_.host + ":" + std::to_string(url_.port),
                       "/scene/" + scene_, [self = shared_from_this()](const net::error_code& h) {
                         if (self->closed_) return;
                         if (h) {
                           self->Fail(self->streams_->UpgradeError());
                           return;
                         }
                         self->OnConnected();
                       });
  });
}

void Connection::OnConnected() {
  open_ = true;
  streams_->deadline.cancel();
  if (handlers_.on_open) handlers_.on_open();
  if (options_.ping_interval_ms > 0 && options_.pong_timeout_ms > 0) {
    last_pong_ = std::chrono::steady_clock::now();
    ArmKeepalive();
  }
  Read();
  WriteNext();
}

void Connection::ArmKeepalive() {
  streams_->keepalive.expires_after(std::chrono::milliseconds(options_.ping_interval_ms));
  streams_->keepalive.async_wait([self = shared_from_this()](const net::error_code& ec) {
    if (ec || self->closed_) return;
    const auto now = std::chrono::steady_clock::now();
    if (now - self->last_pong_ > std::chrono::milliseconds(self->options_.pong_timeout_ms)) {
      self->Fail(MakeError(ErrorCode::kIo, "no Pong from the server within the keepalive timeout"));
      return;
    }
    const auto sent_us =
        std::chrono::duration_cast<std::chrono::microseconds>(now.time_since_epoch());
    self->Queue(session::BuildFrame(
        session::Ping{++self->ping_nonce_, static_cast<uint64_t>(sent_us.count())}));
    self->ArmKeepalive();
  });
}

void Connection::Read() {
  if (closed_ || !reading_ || read_pending_) return;
  read_pending_ = true;
  if (streams_->websocket()) {
    auto on_message = [self = shared_from_this()](const net::error_code& ec, std::size_t n) {
      self->read_pending_ = false;
      if (self->closed_) return;
      if (ec) {
        self->Fail(ec == websocket::error::closed ? MakeError(ErrorCode::kOk, "closed")
                                                  : MakeError(ErrorCode::kIo, "connection lost"));
        return;
      }
      self->bytes_received_.fetch_add(n, std::memory_order_relaxed);
      const auto data = self->streams_->ws_buffer.cdata();
      std::span<const uint8_t> message(static_cast<const uint8_t*>(data.data()), data.size());
      while (!message.empty() && !self->closed_) {
        const auto size = session::PeekFrameSize(message);
        if (!size || *size > message.size()) {
          self->Fail(MakeError(ErrorCode::kEnvelopeInvalid, "partial frame in a message"));
          return;
        }
        self->Deliver(message.first(static_cast<std::size_t>(*size)));
        message = message.subspan(static_cast<std::size_t>(*size));
      }
      self->streams_->ws_buffer.consume(self->streams_->ws_buffer.size());
      self->Read();
    };
    streams_->WithWebSocket(
        [&](auto& ws) { ws.async_read(streams_->ws_buffer, std::move(on_message)); });
    return;
  }
  constexpr std::size_t kReadChunk = 64 * 1024;
  if (in_.size() < in_used_ + kReadChunk) in_.resize(in_used_ + kReadChunk);
  if (options_.kernel_receive_timestamps) {
    ReadStamped();
    return;
  }
  auto on_bytes = [self = shared_from_this()](const net::error_code& ec, std::size_t n) {
    self->read_pending_ = false;
    if (self->closed_) return;
    if (ec) {
      // Over TLS a server that closes after its last frame may skip close_notify.
      const bool end = ec == net::asio::error::eof || ec == net::ssl::error::stream_truncated;
      self->Fail(end ? MakeError(ErrorCode::kOk, "closed")
                     : MakeError(ErrorCode::kIo, "connection lost"));
      return;
    }
    self->in_used_ += n;
    self->bytes_received_.fetch_add(n, std::memory_order_relaxed);
    self->OnBytes(n);
  };
  streams_->WithBytes([&](auto& stream) {
    stream.async_read_some(net::asio::buffer(in_.data() + in_used_, in_.size() - in_used_),
                           std::move(on_bytes));
  });
}

void Connection::ReadStamped() {
  streams_->tcp->async_wait(
      net::tcp::socket::wait_read, [self = shared_from_this()](const net::error_code& ec) {
        self->read_pending_ = false;
        if (self->closed_) return;
        if (ec) {
          self->Fail(MakeError(ErrorCode::kIo, "connection lost"));
          return;
        }
        const ssize_t n = ReceiveStamped(self->streams_->tcp->native_handle(),
                                         std::span<uint8_t>(self->in_.data() + self->in_used_,
                                                            self->in_.size() - self->in_used_),
                                         self->receive_time_ns_);
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) {
          self->read_pending_ = true;
          self->ReadStamped();
          return;
        }
        if (n <= 0) {
          self->Fail(n == 0 ? MakeError(ErrorCode::kOk, "closed")
                            : MakeError(ErrorCode::kIo, "connection lost"));
          return;
        }
        self->in_used_ += static_cast<std::size_t>(n);
        self->bytes_received_.fetch_add(static_cast<uint64_t>(n), std::memory_order_relaxed);
        self->OnBytes(static_cast<std::size_t>(n));
      });
}

void Connection::OnBytes(std::size_t) {
  if (zstd_ || records_) {
    FeedCompressed(std::span<const uint8_t>(in_.data(), in_used_));
    in_used_ = 0;
    if (!closed_) Read();
    return;
  }
  std::size_t pos = 0;
  while (!closed_) {
    const std::span<const uint8_t> rest(in_.data() + pos, in_used_ - pos);
    const auto size = session::PeekFrameSize(rest);
    if (!size) break;
    if (*size > options_.max_frame_bytes) {
      if (std::memcmp(rest.data(), "HTTP", 4) == 0) {
        // An HTTP status line where a size prefix should be: tcp:// dialled an HTTP port.
        Fail(MakeError(ErrorCode::kBadRequest,
                       "the server answered in HTTP: tcp:// reached an HTTP port (scenecrdt "
                       "serve --http); use ws://HOST:PORT for that port, or tcp:// with the "
                       "server's --tcp port"));
        return;
      }
      Fail(MakeError(ErrorCode::kFrameTooLarge, "frame above the client's limit"));
      return;
    }
    if (*size > rest.size()) {
      // Make room for the whole frame (bounded by max_frame_bytes).
      if (in_.size() < *size) in_.resize(static_cast<std::size_t>(*size));
      break;
    }
    Deliver(rest.first(static_cast<std::size_t>(*size)));
    pos += static_cast<std::size_t>(*size);
    if ((zstd_ || records_) && !closed_) {
      // The Welcome switched the stream: what follows it is compressed.
      FeedCompressed(std::span<const uint8_t>(in_.data() + pos, in_used_ - pos));
      in_used_ = 0;
      if (!closed_) Read();
      return;
    }
  }
  if (closed_) return;
  if (pos > 0) {
    std::memmove(in_.data(), in_.data() + pos, in_used_ - pos);
    in_used_ -= pos;
  }
  Read();
}

void Connection::Deliver(std::span<const uint8_t> frame) {
  std::span<const uint8_t> aligned = frame;
  if (reinterpret_cast<std::uintptr_t>(frame.data()) % 8 != 0) {
    frame_.assign(frame.begin(), frame.end());
    aligned = frame_;
  }
  session::ReadOptions options;
  options.max_frame_bytes = options_.max_frame_bytes;
  auto read = session::ReadFrame(aligned, options);
  if (!read.has_value()) {
    Fail(read.error());
    return;
  }
  if (std::holds_alternative<session::Pong>(read.value())) {
    last_pong_ = std::chrono::steady_clock::now();
  }
  if (const auto* w = std::get_if<session::Welcome>(&read.value())) {
    send_limit_bytes_ = session::ServerMaxFrameBytes(*w);
  }
  if (const auto* w = std::get_if<session::Welcome>(&read.value());
      w && w->compression != session::Compression::kNone) {
    session::Hello offered;
    OfferCompression(url_, options_, offered);
    const bool frames = w->compression == session::Compression::kZstdFrames;
    if (streams_->websocket() || zstd_ || records_ ||
        (frames ? !offered.zstd_frames : offered.compression != w->compression)) {
      Fail(MakeError(ErrorCode::kEnvelopeInvalid,
                     "the server chose a compression this connection did not offer"));
      return;
    }
    if (frames) {
      records_ = std::make_unique<session::ZstdRecordReader>(options_.max_frame_bytes);
    } else {
      zstd_ = std::make_unique<session::ZstdFrameReader>(options_.max_frame_bytes);
    }
  }
  if (handlers_.on_frame) handlers_.on_frame(read.value(), aligned);
}

void Connection::FeedCompressed(std::span<const uint8_t> bytes) {
  const auto deliver = [this](std::span<const uint8_t> frame) {
    Deliver(frame);
    return !closed_;
  };
  auto fed = records_ ? records_->Feed(bytes, deliver) : zstd_->Feed(bytes, deliver);
  if (!fed.has_value()) Fail(fed.error());
}

bool Connection::Send(std::vector<uint8_t> frame) {
  const std::size_t size = frame.size();
  if (queued_bytes_.load(std::memory_order_relaxed) + size > options_.max_queued_bytes) {
    return false;
  }
  queued_bytes_.fetch_add(size, std::memory_order_relaxed);
  net::asio::dispatch(strand_, [self = shared_from_this(), frame = std::move(frame)]() mutable {
    if (self->closed_ || self->write_failed_) {  // nothing more can be written
      self->queued_bytes_.fetch_sub(frame.size(), std::memory_order_relaxed);
      return;
    }
    self->out_.push_back(std::move(frame));
    self->WriteNext();
  });
  return true;
}

void Connection::Queue(std::vector<uint8_t> frame) {
  // On the strand: the keepalive's own frames (not bounded by max_queued_bytes: one per
  // interval, and a connection that does not drain them fails on the missing Pong).
  if (write_failed_) return;
  queued_bytes_.fetch_add(frame.size(), std::memory_order_relaxed);
  out_.push_back(std::move(frame));
  WriteNext();
}

void Connection::WriteNext() {
  if (writing_ || write_failed_ || !open_ || closed_ || out_.empty()) return;
  in_flight_.clear();
  buffers_.clear();
  // Over WebSocket the frames of one write are one message, which the server reads whole up
  // to its frame limit (docs/PROTOCOL.md section 2, "Frame limit"): gather only that much.
  const bool bounded = streams_->websocket();
  std::size_t message_bytes = 0;
  while (!out_.empty()) {
    if (bounded && !in_flight_.empty() && message_bytes + out_.front().size() > send_limit_bytes_) {
      break;
    }
    message_bytes += out_.front().size();
    in_flight_.push_back(std::move(out_.front()));
    out_.pop_front();
  }
  for (const auto& f : in_flight_) buffers_.emplace_back(f.data(), f.size());
  writing_ = true;
  auto done = [self = shared_from_this()](const net::error_code& ec, std::size_t n) {
    self->writing_ = false;
    std::size_t total = 0;
    for (const auto& f : self->in_flight_) total += f.size();
    self->queued_bytes_.fetch_sub(total, std::memory_order_relaxed);
    self->in_flight_.clear();
    if (self->closed_) return;
    if (ec) {
      self->OnWriteFailed();
      return;
    }
    self->bytes_sent_.fetch_add(n, std::memory_order_relaxed);
    if (self->closing_ && self->out_.empty()) {
      self->Fail(MakeError(ErrorCode::kOk, "closed by the client"));
      return;
    }
    self->WriteNext();
  };
  if (streams_->websocket()) {
    streams_->WithWebSocket([&](auto& ws) { ws.async_write(buffers_, std::move(done)); });
  } else {
    streams_->WithBytes(
        [&](auto& stream) { net::asio::async_write(stream, buffers_, std::move(done)); });
  }
}

void Connection::OnWriteFailed() {
  const Error error = MakeError(ErrorCode::kIo, "connection lost while writing");
  if (!read_pending_) {
    Fail(error);
    return;
  }
  // A server that closes (a goodbye, then its FIN) while this side still writes makes the
  // write fail; its last frames may still wait in the socket, and they say why. Read them:
  // the read side fails the connection at the end of the stream, or the deadline does.
  write_failed_ = true;
  std::size_t dropped = 0;
  for (const auto& f : out_) dropped += f.size();
  queued_bytes_.fetch_sub(dropped, std::memory_order_relaxed);
  out_.clear();
  streams_->deadline.expires_after(std::chrono::milliseconds(kWriteFailureGraceMs));
  streams_->deadline.async_wait([self = shared_from_this(), error](const net::error_code& ec) {
    if (!ec && !self->closed_) self->Fail(error);
  });
}

void Connection::SetReading(bool on) {
  net::asio::dispatch(strand_, [self = shared_from_this(), on] {
    self->reading_ = on;
    if (on && self->open_) self->Read();
  });
}

void Connection::Close() {
  net::asio::dispatch(strand_, [self = shared_from_this()] {
    self->Fail(MakeError(ErrorCode::kOk, "closed by the client"));
  });
}

void Connection::CloseAfter(std::vector<uint8_t> last, std::chrono::milliseconds limit) {
  net::asio::dispatch(
      strand_, [self = shared_from_this(), last = std::move(last), limit]() mutable {
        if (self->closed_) return;
        if (!self->open_) {
          self->Fail(MakeError(ErrorCode::kOk, "closed by the client"));
          return;
        }
        self->closing_ = true;
        self->streams_->deadline.expires_after(limit);
        self->streams_->deadline.async_wait([self](const net::error_code& ec) {
          if (!ec) self->Fail(MakeError(ErrorCode::kOk, "closed by the client (goodbye unsent)"));
        });
        self->Queue(std::move(last));
      });
}

void Connection::Fail(const Error& error) {
  if (closed_) return;
  closed_ = true;
  net::error_code ignored;
  streams_->deadline.cancel();
  streams_->keepalive.cancel();
  streams_->resolver.cancel();
  streams_->lowest().shutdown(net::tcp::socket::shutdown_both, ignored);
  streams_->lowest().close(ignored);
  std::size_t dropped = 0;
  for (const auto& f : out_) dropped += f.size();
  queued_bytes_.fetch_sub(dropped, std::memory_order_relaxed);
  out_.clear();
  if (handlers_.on_closed) handlers_.on_closed(error);
}

}  // namespace scenecrdt::client
