// SPDX-License-Identifier: Apache-2.0
// Owns EnvelopeProtocol: the session envelope protocol (docs/PROTOCOL.md section 2), a
// Protocol (protocol.h) over either transport (framed TCP, WebSocket /scene/<name>). Every
// frame is verified (ReadFrame), then Hello (auth, scene join), Crdt (read-only check,
// CrdtStore::Admit of the whole frame, token bucket, then Scene::Submit), SetInterest
// (docs/INTEREST.md), Ping/Pong. Protocol violations send a fatal Error frame and close;
// refusals send a non-fatal Error naming the frame. It owns the bounded control queue
// (Welcome, Error, Pong, Ping) and the one cumulative pending Ack, and the Hello deadline,
// idle timeout and Ping of its watchdog.
#pragma once

#include <deque>
#include <optional>
#include <string>
#include <vector>

#include "scenecrdt/server/scene/interest/member_view.h"
#include "scenecrdt/server/sessions/protocol.h"

namespace scenecrdt::server {

class EnvelopeProtocol final : public Protocol {
 public:
  // Liveness is the watchdog's (Ping, idle timeout), not the WebSocket keep-alive.
  static constexpr bool kTransportKeepAlive = false;

  // `path_scene`: the scene named by the WebSocket path, which Hello must name too (empty for
  // framed TCP).
  explicit EnvelopeProtocol(ServerContext& ctx, std::string path_scene = {});

  bool acks() const override { return true; }
  // A message: one or more complete frames (a framed-TCP message is exactly one).
  void OnMessage(std::span<const uint8_t> message, bool text) override;
  void QueueGoodbye(ErrorCode code, std::string_view text) override;
  void Refuse(ErrorCode code, const char* text, uint64_t frame_sequence,
              uint64_t messages) override;
  void OnWriteRefused(const session::Refusal& refusal) override;
  void OnOwnershipTransferred(const session::TransferOwnership& transfer) override {
    QueueControl(transfer);
  }
  void OnAck(uint64_t frame_sequence) override;
  void TakeControlFrames(std::vector<SharedFrame>& out) override;
  void OnJoined(const session::Welcome& welcome) override;
  void OnWriteStarted(std::size_t frames) override;
  void OnWatchdog(int64_t now_ms) override;
  void OnClosed() override;

 private:
  // A complete size-prefixed frame, in an 8-byte aligned buffer.
  void OnFrame(std::span<const uint8_t> frame);
  void HandleHello(const session::Hello& hello);
  void HandleCrdt(const session::Crdt& crdt);
  // Before Hello it shapes the join; after, it goes to the scene (docs/INTEREST.md).
  void HandleSetInterest(const session::SetInterest& interest);
  // Queues a frame the peer provoked; a peer that leaves too many unread is dropped.
  void QueueControl(const session::Frame& frame);
  // Queues bytes ahead of scene data, outside the control limit (a goodbye).
  void QueueRaw(SharedFrame bytes) { control_.push_back(std::move(bytes)); }

  ServerContext& ctx_;
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
