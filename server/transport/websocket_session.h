// SPDX-License-Identifier: Apache-2.0
// Owns WebSocketSession<Protocol>: the WebSocket transport (Beast, binary messages, read
// limit lowered to --max-frame-bytes) under either protocol: WebSocketSession<EnvelopeSession>
// for /scene/<name> (each message holds whole envelope frames) and
// WebSocketSession<DclSession> for /dcl/<name> (each message is one DCL chunk). The
// protocol's kTransportKeepAlive says whether Beast's keep-alive pings own liveness; messages
// up to kMaxDeflatedMessageBytes are compressed (permessage-deflate) when the client offers
// it, larger ones (snapshots, catch-ups) go as they are, in one frame. Built by
// HttpSession from an upgrade request; the handshake is answered on the session's strand.
// `Next` is the connection under the WebSocket: the strand socket (ws://) or a TLS stream
// over it whose handshake HttpSession already did (wss://).
#pragma once

#include <algorithm>
#include <chrono>
#include <memory>
#include <span>
#include <utility>
#include <vector>

#include "scenecrdt/net/tls.h"
#include "scenecrdt/net/ws_compression.h"
#include "scenecrdt/server/sessions/session.h"
#include "scenecrdt/server/transport/endpoint.h"
#include "scenecrdt/server/transport/ws_message_compression.h"

namespace scenecrdt::server {

template <class Protocol, class Next = StrandSocket>
class WebSocketSession final : public Protocol {
 public:
  using Request = net::beast::http::request<net::beast::http::string_body>;

  // `args`: the protocol's own constructor arguments after (ctx, strand, peer).
  template <class... Args>
  WebSocketSession(ServerContext& ctx, Next socket, Request request, Args&&... args)
      : Protocol(ctx, net::beast::get_lowest_layer(socket).get_executor(),
                 RemoteEndpoint(net::beast::get_lowest_layer(socket)), std::forward<Args>(args)...),
        ws_(std::move(socket)),
        request_(std::move(request)) {}

 private:
  using Stream = net::beast::websocket::stream<Next>;

  std::shared_ptr<WebSocketSession> Self() {
    return std::static_pointer_cast<WebSocketSession>(this->shared_from_this());
  }

  void TransportStart() override {
    namespace websocket = net::beast::websocket;
    net::error_code ec;
    net::beast::get_lowest_layer(ws_).set_option(net::tcp::no_delay(true), ec);
    ws_.binary(true);
    // A message goes as one frame: an uncompressed snapshot is one gather write of the shared
    // bytes, not 4 KiB fragments (compressed messages are framed by the deflate buffer anyway).
    ws_.auto_fragment(false);
    ws_.read_message_max(this->limits().max_frame_bytes);
    websocket::stream_base::timeout timeout{};
    timeout.handshake_timeout = std::chrono::milliseconds(this->limits().handshake_timeout_ms);
    if constexpr (Protocol::kTransportKeepAlive) {
      // Pings at half the idle timeout; a peer that answers nothing is cut after it.
      timeout.idle_timeout = std::chrono::milliseconds(this->limits().idle_timeout_ms);
      timeout.keep_alive_pings = true;
    } else {
      timeout.idle_timeout = websocket::stream_base::none();  // the protocol's watchdog owns it
      timeout.keep_alive_pings = false;
    }
    ws_.set_option(timeout);
    // permessage-deflate when the client offers it (bounded state: net/ws_compression.h).
    ws_.set_option(net::ServerDeflate(this->ctx_.config().compression));
    ws_.async_accept(request_, net::asio::bind_executor(this->strand_,
                                                        [self = Self()](const net::error_code& e) {
                                                          if (e) {
                                                            self->OnReadError(e);
                                                            return;
                                                          }
                                                          self->Opened();
                                                        }));
  }

  void TransportRead() override {
    ws_.async_read(buffer_,
                   net::asio::bind_executor(
                       this->strand_, [self = Self()](const net::error_code& ec, std::size_t) {
                         if (ec) {
                           self->OnReadError(ec);
                           return;
                         }
                         const auto data = self->buffer_.cdata();
                         self->OnMessage(std::span<const uint8_t>(
                                             static_cast<const uint8_t*>(data.data()), data.size()),
                                         self->ws_.got_text());
                         self->buffer_.consume(self->buffer_.size());
                         self->ReadNext();
                       }));
  }

  void TransportWrite(const std::vector<net::asio::const_buffer>& buffers) override {
    // Deflate runs per session (its own context): a large message would cost every member a
    // pass over it, so it goes uncompressed (ws_message_compression.h).
    SetMessageCompression(ws_, net::asio::buffer_size(buffers) <= kMaxDeflatedMessageBytes);
    ws_.async_write(buffers,
                    net::asio::bind_executor(
                        this->strand_, [self = Self()](const net::error_code& ec, std::size_t n) {
                          self->OnWriteDone(ec, n);
                        }));
  }

  void TransportClose() override {
    namespace websocket = net::beast::websocket;
    if (close_started_ || this->writing() || !ws_.is_open()) {
      net::error_code ec;
      net::beast::get_lowest_layer(ws_).close(ec);
      this->OnClosed();
      return;
    }
    close_started_ = true;
    // The protocol's close status: raw DCL says why only in it (it has no Error frame); the
    // envelope sent its Error frame and closes with a matching policy/protocol code.
    websocket::close_reason reason(static_cast<websocket::close_code>(this->close_code()));
    reason.reason.assign(this->close_text().data(),
                         std::min<std::size_t>(this->close_text().size(), 123));
    ws_.async_close(
        reason, net::asio::bind_executor(this->strand_, [self = Self()](const net::error_code&) {
          net::error_code ec;
          net::beast::get_lowest_layer(self->ws_).close(ec);
          self->OnClosed();
        }));
  }

  Stream ws_;
  Request request_;
  net::beast::flat_buffer buffer_;
  bool close_started_ = false;
};

}  // namespace scenecrdt::server
