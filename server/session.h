// SPDX-License-Identifier: Apache-2.0
// Owns Session: one client connection's protocol logic, shared by the TCP and WebSocket
// transports (subclasses provide reading, writing and closing). Everything runs on the
// session's strand; the scene talks to it only through the Post* methods.
//
// Read side: every frame is verified (ReadFrame), then Hello (auth, scene join), Crdt
// (read-only check, strict DCL decode, stateless limits, token bucket, then Scene::Submit),
// Ping/Pong. Protocol violations send a fatal Error and close; refusals send a non-fatal
// Error naming the frame. Nothing refused reaches the scene.
// Write side: a bounded control queue (Welcome, Error, Pong, Ping), one cumulative pending Ack,
// and at most one scene delivery at a time; whatever is pending goes out in one gather write.
// A write in flight longer than slow_consumer_ms drops the session (kSlowConsumer).
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "protocol/session/envelope.h"
#include "server/context.h"

namespace scenecrdt::server {

class Session : public std::enable_shared_from_this<Session> {
 public:
  Session(ServerContext& ctx, net::Strand strand, std::string path_scene);
  virtual ~Session();
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

  // Registers the session and starts the transport (on the strand).
  void Start();
  uint64_t id() const { return id_; }

  // ---- Any thread (each posts to the strand) ----
  void PostJoined(session::Welcome welcome, std::vector<SharedFrame> state);
  void PostSceneFrames(std::vector<SharedFrame> frames, uint64_t messages);
  void PostAck(uint64_t frame_sequence);
  void PostRefusal(ErrorCode code, const char* text, uint64_t frame_sequence);
  // Sends a fatal Error, flushes what is queued, closes.
  void PostClose(ErrorCode code, std::string text);
  // Stops reading (shutdown); `done` runs on the strand afterwards.
  void PostStopReading(std::function<void()> done);

 protected:
  // ---- Transport hooks, run on the strand ----
  virtual void TransportStart() = 0;  // handshake if any, then ReadNext()
  virtual void TransportRead() = 0;   // one read; then OnFrame()/OnMessage() or OnReadError()
  virtual void TransportWrite(const std::vector<net::asio::const_buffer>& buffers) = 0;
  virtual void TransportClose() = 0;  // graceful when possible; must end in OnClosed()
  virtual const char* transport_name() const = 0;

  // ---- Called by transports ----
  void ReadNext();
  // A complete size-prefixed frame in an 8-byte aligned buffer.
  void OnFrame(std::span<const uint8_t> frame);
  // A WebSocket message: one or more complete frames.
  void OnMessage(std::span<const uint8_t> message);
  void OnReadError(const net::error_code& ec);
  void OnWriteDone(const net::error_code& ec, std::size_t bytes);
  void OnClosed();
  bool writing() const { return writing_; }
  uint32_t max_frame_bytes() const { return ctx_.config().limits.max_frame_bytes; }
  // A fatal protocol violation: typed Error (fatal), flush, close.
  void Fatal(ErrorCode code, const char* text);

  ServerContext& ctx_;
  net::Strand strand_;
  std::string path_scene_;             // from the WebSocket path (empty for TCP)
  std::vector<uint8_t> frame_buffer_;  // aligned (std::vector storage)

 private:
  void HandleFrame(session::Frame& frame);
  void HandleHello(const session::Hello& hello);
  void HandleCrdt(const session::Crdt& crdt);
  void QueueControl(const session::Frame& frame);
  void WriteNext();
  void Watchdog();
  void BeginClose();

  uint64_t id_ = 0;
  Scene* scene_ = nullptr;
  bool joined_ = false;
  bool can_write_ = false;
  bool reading_ = true;  // false after a violation or on shutdown
  bool close_after_flush_ = false;
  bool closing_ = false;
  bool closed_ = false;
  // Token bucket over DCL messages.
  double tokens_ = 0.0;
  int64_t tokens_at_ms_ = 0;
  // Write side.
  std::deque<SharedFrame> control_;
  std::optional<uint64_t> ack_pending_;
  std::vector<SharedFrame> scene_frames_;
  uint64_t scene_messages_ = 0;
  std::vector<SharedFrame> in_flight_;
  std::vector<net::asio::const_buffer> buffers_;
  bool writing_ = false;
  bool in_flight_has_scene_ = false;
  int64_t write_started_ms_ = 0;
  int64_t in_flight_bytes_ = 0;
  // Timeouts.
  int64_t started_ms_ = 0;
  int64_t last_read_ms_ = 0;
  int64_t last_ping_ms_ = 0;
  net::asio::steady_timer watchdog_;
};

}  // namespace scenecrdt::server
