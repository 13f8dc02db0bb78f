// SPDX-License-Identifier: Apache-2.0
// Owns TcpSession: the framed TCP transport (u32 LE size prefix + envelope frame, read as
// prefix then body) of an EnvelopeSession. The prefix is checked against --max-frame-bytes
// before the body is buffered. A peer that speaks HTTP here (a ws:// client on the wrong
// port: "GET " where a size prefix should be) gets an HTTP 400 naming the --http port. With
// --tls-cert the listener speaks tls://: the TLS handshake comes first (within the Hello
// deadline), then the same frames inside TLS records, and a graceful close sends a TLS
// close_notify (bounded by Session's close grace). A plain TCP close is a lingering close:
// the goodbye, a FIN, then whatever the peer still sends is read and dropped until its own
// FIN (bounded by the same grace), so unread bytes never turn the close into a reset that
// could destroy the goodbye before the peer read it.
// When the Hello offers zstd, everything after the Welcome is one zstd stream (plain and TLS).
#pragma once

#include <memory>

#include "scenecrdt/net/tls.h"
#include "scenecrdt/protocol/session/zstd_stream.h"
#include "scenecrdt/server/sessions/envelope_session.h"
#include "scenecrdt/server/transport/endpoint.h"

namespace scenecrdt::server {

class TcpSession final : public EnvelopeSession {
 public:
  // `tls`: the context of a TLS listener (nullptr: plain framed TCP).
  TcpSession(ServerContext& ctx, StrandSocket socket, std::shared_ptr<net::ssl::context> tls);

 private:
  void TransportStart() override;
  void TransportRead() override;
  void TransportWrite(const std::vector<net::asio::const_buffer>& buffers) override;
  void TransportClose() override;
  void OnPrefix(const net::error_code& ec);
  // After shutdown(send): reads and drops until the peer's FIN or an error, then closes.
  void Linger();
  // A read completed while lingering: continue dropping, or close on its end.
  void OnLingerRead(const net::error_code& ec);
  void CloseSocket();
  // The goodbye in HTTP for a peer that sent an HTTP request, the envelope's otherwise.
  void QueueGoodbye(ErrorCode code, std::string_view text) override;
  bool CanCompress() const override { return true; }
  void StartCompression(const SharedFrame& last_plain) override;
  void WriteWire(const std::vector<net::asio::const_buffer>& buffers);
  std::shared_ptr<TcpSession> Self();
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

  StrandSocket socket_;  // moved into tls_ for a TLS connection
  std::optional<net::ssl::stream<StrandSocket>> tls_;
  bool tls_ready_ = false;         // the handshake completed (writes wait for it)
  bool shutdown_started_ = false;  // close_notify sent (a second close cuts the socket)
  bool http_peer_ = false;         // the first bytes were an HTTP request line
  bool read_pending_ = false;      // an async read is in flight on the stream
  bool lingering_ = false;         // plain TCP: FIN sent, dropping the peer's bytes
  // Compressed mode (docs/PROTOCOL.md section 2, "Compression"): frames after `last_plain_`
  // (the Welcome) go through the connection's zstd stream, each write flushed.
  std::unique_ptr<session::ZstdEncoder> zstd_;
  SharedFrame last_plain_;
  std::vector<uint8_t> compressed_;  // the compressed bytes of the write in flight
  std::vector<net::asio::const_buffer> wire_;
};

}  // namespace scenecrdt::server
