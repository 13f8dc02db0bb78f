// SPDX-License-Identifier: Apache-2.0
// Owns TcpSession: the framed TCP transport (u32 LE size prefix + envelope frame, read as
// prefix then body) of an EnvelopeSession. The prefix is checked against --max-frame-bytes
// before the body is buffered. A peer that speaks HTTP here (a ws:// client on the wrong
// port: "GET " where a size prefix should be) gets an HTTP 400 naming the --http port. With
// --tls-cert the listener speaks tls://: the TLS handshake comes first (within the Hello
// deadline), then the same frames inside TLS records.
#pragma once

#include <memory>

#include "scenecrdt/net/tls.h"
#include "scenecrdt/server/endpoint.h"
#include "scenecrdt/server/envelope_session.h"

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
  // The goodbye in HTTP for a peer that sent an HTTP request, the envelope's otherwise.
  void QueueGoodbye(ErrorCode code, std::string_view text) override;
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
  bool tls_ready_ = false;  // the handshake completed (writes wait for it)
  bool http_peer_ = false;  // the first bytes were an HTTP request line
};

}  // namespace scenecrdt::server
