// SPDX-License-Identifier: Apache-2.0
// Owns TcpTransport: the framed TCP transport (u32 LE size prefix + envelope frame, read as
// prefix then body), a Transport (sessions/session_transport.h) under the envelope protocol.
// The prefix is checked against --max-frame-bytes before the body is buffered. A peer that
// speaks HTTP here (a ws:// client on the wrong port: "GET " where a size prefix should be)
// gets an HTTP 400 naming the --http port. With --tls-cert the listener speaks tls://: the TLS
// handshake comes first (within the Hello deadline), then the same frames inside TLS records,
// and a graceful close sends a TLS close_notify (bounded by the session's close grace). A plain
// TCP close is a lingering close: the goodbye, a FIN, then whatever the peer still sends is
// read and dropped until its own FIN (bounded by the same grace), so unread bytes never turn
// the close into a reset that could destroy the goodbye before the peer read it.
// When the Hello offers zstd, everything after the Welcome is one zstd stream (plain and TLS).
#pragma once

#include <memory>
#include <optional>
#include <vector>

#include "scenecrdt/net/tls.h"
#include "scenecrdt/protocol/session/zstd_stream.h"
#include "scenecrdt/server/context.h"
#include "scenecrdt/server/sessions/session_transport.h"
#include "scenecrdt/server/transport/endpoint.h"

namespace scenecrdt::server {

class TcpTransport final : public Transport {
 public:
  // `tls`: the context of a TLS listener (nullptr: plain framed TCP).
  TcpTransport(ServerContext& ctx, StrandSocket socket, std::shared_ptr<net::ssl::context> tls);

  const net::Strand& strand() const override { return strand_; }
  const net::tcp::endpoint& peer() const override { return peer_; }
  void Start(std::weak_ptr<TransportEvents> events) override;
  void Read() override;
  void Write(const std::vector<net::asio::const_buffer>& buffers) override;
  void Close(const CloseStatus& status) override;
  bool CanCompressStream() const override { return true; }
  void StartStreamCompression(const SharedFrame& last_plain) override;
  // HTTP 400 for a peer that sent an HTTP request (nullptr otherwise).
  SharedFrame ForeignGoodbye(ErrorCode code, std::string_view text) override;

 private:
  // The session, held for one operation in flight (it owns this transport).
  std::shared_ptr<TransportEvents> Owner() { return events_.lock(); }
  void OnPrefix(const net::error_code& ec);
  // After shutdown(send): reads and drops until the peer's FIN or an error, then closes.
  void Linger();
  // A read completed while lingering: continue dropping, or close on its end.
  void OnLingerRead(const net::error_code& ec);
  void CloseSocket();
  void WriteWire(const std::vector<net::asio::const_buffer>& buffers);
  // Runs `f` with the stream the frames travel on (the TLS stream or the socket).
  template <class F>
  void WithStream(F&& f) {
    if (tls_) {
      f(*tls_);
    } else {
      f(socket_);
    }
  }
  StrandSocket& lowest() { return tls_ ? tls_->next_layer() : socket_; }

  ServerContext& ctx_;
  const net::Strand strand_;
  const net::tcp::endpoint peer_;
  std::weak_ptr<TransportEvents> events_;
  StrandSocket socket_;  // moved into tls_ for a TLS connection
  std::optional<net::ssl::stream<StrandSocket>> tls_;
  std::vector<uint8_t> frame_buffer_;  // one frame, 8-byte aligned (std::vector storage)
  bool tls_ready_ = false;             // the handshake completed (writes wait for it)
  bool shutdown_started_ = false;      // close_notify sent (a second close cuts the socket)
  bool http_peer_ = false;             // the first bytes were an HTTP request line
  bool read_pending_ = false;          // an async read is in flight on the stream
  bool write_pending_ = false;         // a write is in flight (until OnWriteDone)
  bool lingering_ = false;             // plain TCP: FIN sent, dropping the peer's bytes
  bool closed_ = false;                // OnClosed was reported
  // Compressed mode (docs/PROTOCOL.md section 2, "Compression"): frames after `last_plain_`
  // (the Welcome) go through the connection's zstd stream, each write flushed.
  std::unique_ptr<session::ZstdEncoder> zstd_;
  SharedFrame last_plain_;
  std::vector<uint8_t> compressed_;  // the compressed bytes of the write in flight
  std::vector<net::asio::const_buffer> wire_;
};

}  // namespace scenecrdt::server
