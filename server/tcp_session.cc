// SPDX-License-Identifier: Apache-2.0
// Owns the framed TCP transport: reads prefix then body, gather writes, closes.
#include "scenecrdt/server/tcp_session.h"

namespace scenecrdt::server {

TcpSession::TcpSession(ServerContext& ctx, StrandSocket socket)
    : EnvelopeSession(ctx, socket.get_executor(), RemoteEndpoint(socket), SessionKind::kTcp),
      socket_(std::move(socket)) {}

std::shared_ptr<TcpSession> TcpSession::Self() {
  return std::static_pointer_cast<TcpSession>(shared_from_this());
}

void TcpSession::TransportStart() {
  net::error_code ec;
  socket_.set_option(net::tcp::no_delay(true), ec);
  Opened();
}

void TcpSession::TransportRead() {
  frame_buffer_.resize(session::kSizePrefixBytes);
  net::asio::async_read(
      socket_, net::asio::buffer(frame_buffer_.data(), session::kSizePrefixBytes),
      net::asio::bind_executor(strand_, [self = Self()](const net::error_code& ec, std::size_t) {
        self->OnPrefix(ec);
      }));
}

void TcpSession::OnPrefix(const net::error_code& ec) {
  if (ec) {
    OnReadError(ec);
    return;
  }
  const uint64_t size = *session::PeekFrameSize(frame_buffer_);
  if (size > limits().max_frame_bytes) {
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

void TcpSession::TransportWrite(const std::vector<net::asio::const_buffer>& buffers) {
  net::asio::async_write(
      socket_, buffers,
      net::asio::bind_executor(strand_, [self = Self()](const net::error_code& ec, std::size_t n) {
        self->OnWriteDone(ec, n);
      }));
}

void TcpSession::TransportClose() {
  net::error_code ec;
  socket_.shutdown(net::tcp::socket::shutdown_both, ec);
  socket_.close(ec);
  OnClosed();
}

}  // namespace scenecrdt::server
