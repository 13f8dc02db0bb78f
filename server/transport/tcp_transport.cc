// SPDX-License-Identifier: Apache-2.0
// Owns the framed TCP transport: reads prefix then body, gather writes (zstd stream after the
// Welcome when asked), the TLS handshake and close_notify, the lingering close.
#include "scenecrdt/server/transport/tcp_transport.h"

#include <algorithm>
#include <array>
#include <string>

namespace scenecrdt::server {

namespace {

// An HTTP method's first four bytes ("GET ", "POST", "HEAD", "OPTI"...) read as a size prefix:
// above 538 MB, so it is never a frame this server accepts.
bool LooksLikeHttpRequest(std::span<const uint8_t> prefix) {
  return std::all_of(prefix.begin(), prefix.end(),
                     [](uint8_t c) { return (c >= 'A' && c <= 'Z') || c == ' '; });
}

}  // namespace

TcpTransport::TcpTransport(ServerContext& ctx, StrandSocket socket,
                           std::shared_ptr<net::ssl::context> tls)
    : ctx_(ctx),
      strand_(socket.get_executor()),
      peer_(RemoteEndpoint(socket)),
      socket_(std::move(socket)) {
  if (tls) tls_.emplace(std::move(socket_), *tls);
}

void TcpTransport::Start(std::weak_ptr<TransportEvents> events) {
  events_ = std::move(events);
  net::error_code ec;
  lowest().set_option(net::tcp::no_delay(true), ec);
  if (!tls_) {
    Owner()->OnOpened();
    return;
  }
  // A peer that never finishes the handshake is cut by the Hello deadline (watchdog).
  tls_->async_handshake(
      net::ssl::stream_base::server,
      net::asio::bind_executor(strand_, [this, owner = Owner()](const net::error_code& e) {
        if (e) {
          Metrics::Add(ctx_.metrics().tls_handshake_failures);
          owner->OnReadError(e);
          return;
        }
        tls_ready_ = true;
        owner->OnOpened();
      }));
}

void TcpTransport::Read() {
  if (read_pending_ || lingering_) return;
  frame_buffer_.resize(session::kSizePrefixBytes);
  read_pending_ = true;
  WithStream([this](auto& stream) {
    net::asio::async_read(
        stream, net::asio::buffer(frame_buffer_.data(), session::kSizePrefixBytes),
        net::asio::bind_executor(strand_,
                                 [this, owner = Owner()](const net::error_code& ec, std::size_t) {
                                   read_pending_ = false;
                                   if (lingering_) {
                                     OnLingerRead(ec);
                                     return;
                                   }
                                   OnPrefix(ec);
                                 }));
  });
}

void TcpTransport::OnPrefix(const net::error_code& ec) {
  if (closed_) return;
  const std::shared_ptr<TransportEvents> owner = Owner();
  if (ec) {
    owner->OnReadError(ec);
    return;
  }
  const Limits& limits = ctx_.config().limits;
  const uint64_t size = *session::PeekFrameSize(frame_buffer_);
  if (size > limits.max_frame_bytes && LooksLikeHttpRequest(frame_buffer_)) {
    http_peer_ = true;
    // Take in the rest of the request already here: closing over unread bytes would reset
    // the connection and could lose the answer at the peer.
    net::error_code drain;
    std::array<uint8_t, 8192> discard;
    if (!tls_ && socket_.available(drain) > 0) socket_.read_some(net::asio::buffer(discard), drain);
    owner->OnTransportFatal(ErrorCode::kBadRequest,
                            "an HTTP request on the framed TCP port (ws:// belongs on --http)");
    return;
  }
  if (size > limits.max_frame_bytes) {
    owner->OnTransportFatal(ErrorCode::kFrameTooLarge, "frame above the server's limit");
    return;
  }
  if (size <= session::kSizePrefixBytes) {
    owner->OnTransportFatal(ErrorCode::kEnvelopeInvalid, "empty frame");
    return;
  }
  frame_buffer_.resize(static_cast<std::size_t>(size));
  read_pending_ = true;
  WithStream([this](auto& stream) {
    net::asio::async_read(
        stream,
        net::asio::buffer(frame_buffer_.data() + session::kSizePrefixBytes,
                          frame_buffer_.size() - session::kSizePrefixBytes),
        net::asio::bind_executor(strand_,
                                 [this, owner = Owner()](const net::error_code& e, std::size_t) {
                                   read_pending_ = false;
                                   if (lingering_) {
                                     OnLingerRead(e);
                                     return;
                                   }
                                   if (closed_) return;
                                   if (e) {
                                     owner->OnReadError(e);
                                     return;
                                   }
                                   owner->OnMessage(frame_buffer_, false);
                                 }));
  });
}

void TcpTransport::StartStreamCompression(const SharedFrame& last_plain) {
  zstd_ = std::make_unique<session::ZstdEncoder>();
  last_plain_ = last_plain;
}

void TcpTransport::Write(const std::vector<net::asio::const_buffer>& buffers) {
  write_pending_ = true;
  if (tls_ && !tls_ready_) {
    // A goodbye before the handshake finished (Hello deadline): nothing can be said in TLS.
    net::asio::post(strand_, [this, owner = Owner()] {
      write_pending_ = false;
      owner->OnWriteDone(net::asio::error::not_connected, 0);
    });
    return;
  }
  if (!zstd_) {
    WriteWire(buffers);
    return;
  }
  // Frames up to the Welcome go plain; the stream starts after it.
  wire_.clear();
  std::size_t first = 0;
  if (last_plain_) {
    first = buffers.size();  // the Welcome is not in this write: all plain
    for (std::size_t i = 0; i < buffers.size(); ++i) {
      wire_.push_back(buffers[i]);
      if (buffers[i].data() == last_plain_->data()) {
        first = i + 1;
        last_plain_.reset();
        break;
      }
    }
  }
  // Keep no more than 1 MiB of capacity between writes (a snapshot can be larger).
  if (compressed_.capacity() > (1u << 20)) std::vector<uint8_t>().swap(compressed_);
  compressed_.clear();
  for (std::size_t i = first; i < buffers.size(); ++i) {
    zstd_->Compress(
        std::span<const uint8_t>(static_cast<const uint8_t*>(buffers[i].data()), buffers[i].size()),
        i + 1 == buffers.size(), compressed_);
  }
  Metrics& m = ctx_.metrics();
  for (std::size_t i = first; i < buffers.size(); ++i) {
    Metrics::Add(m.compression_plain_bytes, buffers[i].size());
  }
  Metrics::Add(m.compression_wire_bytes, compressed_.size());
  if (!compressed_.empty()) wire_.emplace_back(compressed_.data(), compressed_.size());
  WriteWire(wire_);
}

void TcpTransport::WriteWire(const std::vector<net::asio::const_buffer>& buffers) {
  WithStream([this, &buffers](auto& stream) {
    net::asio::async_write(
        stream, buffers,
        net::asio::bind_executor(strand_,
                                 [this, owner = Owner()](const net::error_code& ec, std::size_t n) {
                                   write_pending_ = false;
                                   owner->OnWriteDone(ec, n);
                                 }));
  });
}

void TcpTransport::Close(const CloseStatus&) {
  net::error_code ec;
  if (tls_ && tls_ready_ && !shutdown_started_ && !write_pending_) {
    // TLS: close_notify after the last frame, so the peer reads a clean end (SSL_read 0,
    // SSL_ERROR_ZERO_RETURN), not a truncation. Asio waits for the peer's close_notify; the
    // watchdog cuts a peer that never answers after kCloseGraceMs (a second Close).
    shutdown_started_ = true;
    tls_->async_shutdown(
        net::asio::bind_executor(strand_, [this, owner = Owner()](const net::error_code&) {
          net::error_code ignored;
          lowest().close(ignored);
          closed_ = true;
          owner->OnClosed();
        }));
    return;
  }
  if (!tls_ && !lingering_ && !write_pending_) {
    // Plain TCP: everything queued (the goodbye) is written; send the FIN and read what the
    // peer still sends until its FIN. Closing over unread bytes would answer with a reset,
    // and a reset can destroy the goodbye in the peer's kernel before the peer read it. The
    // watchdog cuts a peer that keeps sending past kCloseGraceMs (a second Close).
    lingering_ = true;
    lowest().shutdown(net::tcp::socket::shutdown_send, ec);
    if (!read_pending_) Linger();
    return;
  }
  // A TLS session before its handshake or with a write in flight, a close_notify not answered
  // within the grace, or a lingering peer past the grace.
  CloseSocket();
}

void TcpTransport::CloseSocket() {
  net::error_code ec;
  lowest().shutdown(net::tcp::socket::shutdown_both, ec);
  lowest().close(ec);
  closed_ = true;
  if (auto owner = Owner()) owner->OnClosed();
}

void TcpTransport::Linger() {
  // Reuses the frame buffer (at least the prefix's 4 bytes, at most the largest frame read):
  // lingering allocates nothing.
  if (frame_buffer_.size() < 4096) frame_buffer_.resize(4096);
  read_pending_ = true;
  socket_.async_read_some(
      net::asio::buffer(frame_buffer_.data(), frame_buffer_.size()),
      net::asio::bind_executor(strand_,
                               [this, owner = Owner()](const net::error_code& ec, std::size_t) {
                                 read_pending_ = false;
                                 OnLingerRead(ec);
                               }));
}

void TcpTransport::OnLingerRead(const net::error_code& ec) {
  if (closed_) return;
  if (ec) {
    CloseSocket();  // the peer's FIN (eof) or its reset: nothing left to protect
    return;
  }
  Linger();
}

SharedFrame TcpTransport::ForeignGoodbye(ErrorCode, std::string_view) {
  if (!http_peer_) return nullptr;
  // Answered in the peer's language, naming the port it wanted.
  const uint16_t http = ctx_.http_port();
  std::string body =
      "this is scenecrdt's framed TCP port: scenecrdt clients connect to it with "
      "tcp://HOST:" +
      std::to_string(ctx_.tcp_port()) + ". ";
  body += http != 0 ? "WebSocket (ws://HOST:" + std::to_string(http) +
                          "/scene/<name> or /dcl/<name>) is served on the --http port " +
                          std::to_string(http) + ".\n"
                    : std::string("This server has no --http listener, so no WebSocket.\n");
  std::string response = "HTTP/1.1 400 Bad Request\r\nServer: scenecrdt\r\n";
  response +=
      std::string(session::kFramedTcpPortHeader) + ": " + std::to_string(ctx_.tcp_port()) + "\r\n";
  response += "Content-Type: text/plain\r\nConnection: close\r\nContent-Length: " +
              std::to_string(body.size()) + "\r\n\r\n" + body;
  return MakeShared(std::vector<uint8_t>(response.begin(), response.end()));
}

}  // namespace scenecrdt::server
