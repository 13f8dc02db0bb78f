// SPDX-License-Identifier: Apache-2.0
// Owns DclProtocol: the raw-DCL protocol of WebSocket /dcl/<name> (docs/PROTOCOL.md section
// 3) for unmodified @dcl/ecs engines, a Protocol (protocol.h). Authorised from the URL before
// the upgrade and joined as soon as it completes; each binary message is a plain DCL chunk,
// admitted with CrdtStore::Admit in kDropRefused mode: a chunk that does not decode strictly
// closes the session (close code 1007); a message the store would refuse is left out and
// counted (the rest merges); a read-only session's chunks are dropped and counted; the
// message rate limit pauses reading instead of refusing (nothing is lost). No Welcome, Ack or
// Error frames: a fatal end is a WebSocket close code and reason. Scene changes go out as
// plain DCL chunks.
#pragma once

#include <string>

#include "scenecrdt/server/auth/auth.h"
#include "scenecrdt/server/sessions/protocol.h"

namespace scenecrdt::server {

class DclProtocol final : public Protocol {
 public:
  // Beast's WebSocket keep-alive pings keep a quiet (receive-only) engine joined and cut a
  // peer that answers nothing: the envelope's Hello deadline and Ping do not exist here.
  static constexpr bool kTransportKeepAlive = true;

  // `strand`: the session's (the throttle timer runs on it); `scene`: from the path; `role`:
  // what the URL's token was granted.
  DclProtocol(ServerContext& ctx, const net::Strand& strand, std::string scene, Role role);

  // Durability is not observable on the raw path: no acks (acks() stays false).
  void OnOpen() override;
  void OnMessage(std::span<const uint8_t> message, bool text) override;
  void QueueGoodbye(ErrorCode code, std::string_view text) override;
  CloseReason FatalCloseReason(ErrorCode code) const override;
  void Refuse(ErrorCode code, const char* text, uint64_t frame_sequence,
              uint64_t messages) override;
  void OnWriteRefused(const session::Refusal& refusal) override;
  void OnWriteStarted(std::size_t frames) override;
  void OnClosed() override;

 private:
  void HandleChunk(std::span<const uint8_t> chunk);

  ServerContext& ctx_;
  const std::string scene_;
  const Role role_;
  uint64_t chunks_in_ = 0;  // chunks received (their Submit sequence)
  net::asio::steady_timer throttle_timer_;
};

}  // namespace scenecrdt::server
