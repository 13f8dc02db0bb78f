// SPDX-License-Identifier: Apache-2.0
// Owns EnvelopeSession: the session envelope protocol (docs/PROTOCOL.md section 2) over any
// transport (framed TCP, WebSocket /scene/<name>). Every frame is verified
// (ReadFrame), then Hello (auth, scene join), Crdt (read-only check, CrdtStore::Admit of the
// whole frame, token bucket, then Scene::Submit), SetInterest (docs/INTEREST.md), Ping/Pong.
// Protocol violations send a fatal
// Error frame and close; refusals send a non-fatal Error naming the frame. It owns the bounded
// control queue (Welcome, Error, Pong, Ping) and the one cumulative pending Ack, and the
// Hello deadline, idle timeout and Ping of its watchdog.
#pragma once

#include <deque>
#include <optional>
#include <string>

#include "scenecrdt/server/sessions/session.h"

namespace scenecrdt::server {

class EnvelopeSession final : public Session {
 public:
  // Liveness is the watchdog's (Ping, idle timeout), not the WebSocket keep-alive.
  static constexpr bool kTransportKeepAlive = false;

  // `kind`: kTcp or kWebSocket. `path_scene`: the scene named by the WebSocket path, which
  // Hello must name too (empty for TCP).
  EnvelopeSession(ServerContext& ctx, SessionKind kind, std::unique_ptr<Transport> transport,
                  std::string path_scene = {});

  void PostAck(uint64_t frame_sequence) override;

 private:
  // A complete size-prefixed frame, in an 8-byte aligned buffer.
  void OnFrame(std::span<const uint8_t> frame);
  // A message: one or more complete frames (a framed-TCP message is exactly one).
  void HandleMessage(std::span<const uint8_t> message, bool text) override;
  // Queues a frame the peer provoked; a peer that leaves too many unread is dropped.
  void QueueControl(const session::Frame& frame);
  // Queues bytes ahead of scene data, outside the control limit (a goodbye).
  void QueueRaw(SharedFrame bytes) { control_.push_back(std::move(bytes)); }

  void QueueGoodbye(ErrorCode code, std::string_view text) override;
  void Refuse(ErrorCode code, const char* text, uint64_t frame_sequence,
              uint64_t messages) override;
  void OnWriteRefused(const session::Refusal& refusal) override;
  void OnOwnershipTransferred(const session::TransferOwnership& transfer) override {
    QueueControl(transfer);
  }
  void TakeControlFrames(std::vector<SharedFrame>& out) override;
  void OnJoined(const session::Welcome& welcome) override;
  void OnWriteStarted(std::size_t frames) override;
  void OnWatchdog(int64_t now_ms) override;
  void OnSessionClosed() override;

  void HandleHello(const session::Hello& hello);
  void HandleCrdt(const session::Crdt& crdt);
  // Before Hello it shapes the join; after, it goes to the scene (docs/INTEREST.md).
  void HandleSetInterest(const session::SetInterest& interest);

  const std::string path_scene_;
  std::vector<uint8_t> frame_buffer_;  // one frame, 8-byte aligned (std::vector storage)
  std::deque<SharedFrame> control_;
  std::optional<uint64_t> ack_pending_;
  int64_t last_ping_ms_ = 0;
  // Welcome.compression: what the Hello offered and the server and transport can do.
  session::Compression mode_ = session::Compression::kNone;
  std::optional<InterestSpec> interest_;  // the latest valid SetInterest (nullopt: none)
};

}  // namespace scenecrdt::server
