// SPDX-License-Identifier: Apache-2.0
// Owns TcpSession: the framed TCP transport (u32 LE size prefix + envelope frame, read as
// prefix then body) of an EnvelopeSession. The prefix is checked against --max-frame-bytes
// before the body is buffered.
#pragma once

#include <memory>

#include "scenecrdt/server/endpoint.h"
#include "scenecrdt/server/envelope_session.h"

namespace scenecrdt::server {

class TcpSession final : public EnvelopeSession {
 public:
  TcpSession(ServerContext& ctx, StrandSocket socket);

 private:
  void TransportStart() override;
  void TransportRead() override;
  void TransportWrite(const std::vector<net::asio::const_buffer>& buffers) override;
  void TransportClose() override;
  void OnPrefix(const net::error_code& ec);
  std::shared_ptr<TcpSession> Self();

  StrandSocket socket_;
};

}  // namespace scenecrdt::server
