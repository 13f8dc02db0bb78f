// SPDX-License-Identifier: Apache-2.0
// Owns WebSocketTransport<Next>: the WebSocket transport (Beast, binary messages, read limit
// lowered to --max-frame-bytes), a Transport (sessions/session_transport.h) under either
// protocol: the envelope on /scene/<name> (each message holds whole envelope frames) and raw
// DCL on /dcl/<name> (each message is one DCL chunk). `keep_alive` says whether Beast's
// keep-alive pings own liveness (raw DCL) or the protocol's watchdog does (the envelope);
// messages up to kMaxDeflatedMessageBytes are compressed (permessage-deflate) when the client
// offers it, larger ones (snapshots, catch-ups) go as they are, in one frame. Built by
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
#include "scenecrdt/server/context.h"
#include "scenecrdt/server/sessions/session_transport.h"
#include "scenecrdt/server/transport/endpoint.h"
#include "scenecrdt/server/transport/ws_message_compression.h"

namespace scenecrdt::server {

template <class Next = StrandSocket>
class WebSocketTransport final : public Transport {
 public:
  using Request = net::beast::http::request<net::beast::http::string_body>;

  WebSocketTransport(ServerContext& ctx, Next socket, Request request, bool keep_alive)
      : ctx_(ctx),
        strand_(net::beast::get_lowest_layer(socket).get_executor()),
        peer_(RemoteEndpoint(net::beast::get_lowest_layer(socket))),
        keep_alive_(keep_alive),
        ws_(std::move(socket)),
        request_(std::move(request)) {}

  const net::Strand& strand() const override { return strand_; }
  const net::tcp::endpoint& peer() const override { return peer_; }

  void Start(std::weak_ptr<TransportEvents> events) override {
    namespace websocket = net::beast::websocket;
    events_ = std::move(events);
    const Limits& limits = ctx_.config().limits;
    net::error_code ec;
    net::beast::get_lowest_layer(ws_).set_option(net::tcp::no_delay(true), ec);
    ws_.binary(true);
    // A message goes as one frame: an uncompressed snapshot is one gather write of the shared
    // bytes, not 4 KiB fragments (compressed messages are framed by the deflate buffer anyway).
    ws_.auto_fragment(false);
    ws_.read_message_max(limits.max_frame_bytes);
    websocket::stream_base::timeout timeout{};
    timeout.handshake_timeout = std::chrono::milliseconds(limits.handshake_timeout_ms);
    if (keep_alive_) {
      // Pings at half the idle timeout; a peer that answers nothing is cut after it.
      timeout.idle_timeout = std::chrono::milliseconds(limits.idle_timeout_ms);
      timeout.keep_alive_pings = true;
    } else {
      timeout.idle_timeout = websocket::stream_base::none();  // the protocol's watchdog owns it
      timeout.keep_alive_pings = false;
    }
    ws_.set_option(timeout);
    // permessage-deflate when the client offers it (bounded state: net/ws_compression.h).
    ws_.set_option(net::ServerDeflate(ctx_.config().compression));
    ws_.async_accept(request_, net::asio::bind_executor(
                                   strand_, [owner = events_.lock()](const net::error_code& e) {
                                     if (e) {
                                       owner->OnReadError(e);
                                       return;
                                     }
                                     owner->OnOpened();
                                   }));
  }

  void Read() override {
    // The previous message was handed over and is done with.
    buffer_.consume(buffer_.size());
    ws_.async_read(
        buffer_, net::asio::bind_executor(strand_, [this, owner = events_.lock()](
                                                       const net::error_code& ec, std::size_t) {
          if (ec) {
            owner->OnReadError(ec);
            return;
          }
          const auto data = buffer_.cdata();
          owner->OnMessage(
              std::span<const uint8_t>(static_cast<const uint8_t*>(data.data()), data.size()),
              ws_.got_text());
        }));
  }

  void Write(const std::vector<net::asio::const_buffer>& buffers) override {
    // Deflate runs per session (its own context): a large message would cost every member a
    // pass over it, so it goes uncompressed (ws_message_compression.h).
    SetMessageCompression(ws_, net::asio::buffer_size(buffers) <= kMaxDeflatedMessageBytes);
    write_pending_ = true;
    ws_.async_write(
        buffers, net::asio::bind_executor(strand_, [this, owner = events_.lock()](
                                                       const net::error_code& ec, std::size_t n) {
          write_pending_ = false;
          owner->OnWriteDone(ec, n);
        }));
  }

  void Close(const CloseStatus& status) override {
    namespace websocket = net::beast::websocket;
    if (close_started_ || write_pending_ || !ws_.is_open()) {
      net::error_code ec;
      net::beast::get_lowest_layer(ws_).close(ec);
      if (auto owner = events_.lock()) owner->OnClosed();
      return;
    }
    close_started_ = true;
    // The protocol's close status: raw DCL says why only in it (it has no Error frame); the
    // envelope sent its Error frame and closes with a matching policy/protocol code.
    websocket::close_reason reason(static_cast<websocket::close_code>(status.code));
    reason.reason.assign(status.text.data(), std::min<std::size_t>(status.text.size(), 123));
    ws_.async_close(reason, net::asio::bind_executor(
                                strand_, [this, owner = events_.lock()](const net::error_code&) {
                                  net::error_code ec;
                                  net::beast::get_lowest_layer(ws_).close(ec);
                                  owner->OnClosed();
                                }));
  }

 private:
  using Stream = net::beast::websocket::stream<Next>;

  ServerContext& ctx_;
  const net::Strand strand_;
  const net::tcp::endpoint peer_;
  const bool keep_alive_;
  std::weak_ptr<TransportEvents> events_;
  Stream ws_;
  Request request_;
  net::beast::flat_buffer buffer_;
  bool write_pending_ = false;  // a write is in flight (until OnWriteDone)
  bool close_started_ = false;
};

}  // namespace scenecrdt::server
