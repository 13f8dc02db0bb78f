// SPDX-License-Identifier: Apache-2.0
// Owns Session: one client connection's protocol logic, shared by the transports (subclasses
// provide reading, writing and closing). Everything runs on the session's strand; the scene
// talks to it only through the Post* methods.
//
// Two session kinds speak two protocols over the same machinery (scene join, fan-out,
// backpressure, persistence):
// * envelope sessions (framed TCP, WebSocket /scene/<name>): every frame is verified
//   (ReadFrame), then Hello (auth, scene join), Crdt (read-only check, strict DCL decode,
//   stateless limits, token bucket, then Scene::Submit), Ping/Pong. Protocol violations send a
//   fatal Error and close; refusals send a non-fatal Error naming the frame.
// * raw-DCL sessions (WebSocket /dcl/<name>, docs/PROTOCOL.md section 3): authorised from the
//   URL before the upgrade and joined at once; each binary message is a plain DCL chunk. A
//   chunk that does not decode strictly closes the session (close code 1007); a message the
//   store would refuse is dropped from its chunk (the rest merges) and counted; a read-only
//   session's chunks are dropped and counted; the message rate limit pauses reading instead of
//   refusing (nothing is lost). Scene changes go out as plain DCL chunks, one per message.
// Nothing refused reaches the scene.
// Write side: a bounded control queue (Welcome, Error, Pong, Ping: envelope only), one
// cumulative pending Ack, and at most one scene delivery at a time; whatever is pending goes
// out in one gather write. A write in flight longer than slow_consumer_ms drops the session.
#pragma once

#include <bitset>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "scenecrdt/protocol/session/envelope.h"
#include "scenecrdt/server/auth.h"
#include "scenecrdt/server/context.h"

namespace scenecrdt::server {

// "IP:PORT" ("[IPv6]:PORT") for logs.
std::string EndpointText(const net::tcp::endpoint& endpoint);

class Session : public std::enable_shared_from_this<Session> {
 public:
  // `path_scene`: the scene named by the WebSocket path (empty for TCP). `peer`: the remote
  // address ("IP:PORT", for logs and reconnect detection). Raw-DCL sessions pass the role the
  // URL's token was granted (`dcl_role`); envelope sessions learn theirs from Hello.
  Session(ServerContext& ctx, net::Strand strand, SessionKind kind, std::string path_scene,
          net::tcp::endpoint peer, Role dcl_role = Role::kRead);
  virtual ~Session();
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

  // Registers the session and starts the transport (on the strand).
  void Start();
  uint64_t id() const { return id_; }
  // Immutable after construction: readable from any strand.
  SessionKind kind() const { return kind_; }
  bool raw() const { return kind_ == SessionKind::kDcl; }
  const net::tcp::endpoint& peer() const { return peer_; }
  const std::string& peer_text() const { return peer_text_; }

  // ---- Any thread (each posts to the strand) ----
  // `welcome` is sent to envelope sessions only; `state` holds envelope frames or, for a raw
  // session, one plain DCL chunk.
  void PostJoined(session::Welcome welcome, std::vector<SharedFrame> state);
  void PostSceneFrames(std::vector<SharedFrame> frames, uint64_t messages);
  void PostAck(uint64_t frame_sequence);
  // A non-fatal refusal of a frame (raw: of a chunk holding `messages` messages, dropped).
  // `text` must be a static string.
  void PostRefusal(ErrorCode code, const char* text, uint64_t frame_sequence,
                   uint64_t messages = 0);
  // Sends a fatal Error (raw: a WebSocket close code), flushes what is queued, closes.
  void PostClose(ErrorCode code, std::string text);
  // Stops reading (shutdown); `done` runs on the strand afterwards.
  void PostStopReading(std::function<void()> done);

 protected:
  // ---- Transport hooks, run on the strand ----
  virtual void TransportStart() = 0;  // handshake if any, then ReadNext() (raw: JoinPathScene)
  virtual void TransportRead() = 0;   // one read; then OnFrame()/OnMessage() or OnReadError()
  virtual void TransportWrite(const std::vector<net::asio::const_buffer>& buffers) = 0;
  virtual void TransportClose() = 0;  // graceful when possible; must end in OnClosed()

  // ---- Called by transports ----
  void ReadNext();
  // A complete size-prefixed frame in an 8-byte aligned buffer.
  void OnFrame(std::span<const uint8_t> frame);
  // A WebSocket message: one or more complete frames (envelope) or one DCL chunk (raw).
  void OnMessage(std::span<const uint8_t> message);
  void OnReadError(const net::error_code& ec);
  void OnWriteDone(const net::error_code& ec, std::size_t bytes);
  void OnClosed();
  // Raw sessions: joins the scene of the path once the WebSocket upgrade completed.
  void JoinPathScene();
  bool writing() const { return writing_; }
  uint32_t max_frame_bytes() const { return ctx_.config().limits.max_frame_bytes; }
  uint32_t max_message_bytes() const { return ctx_.config().limits.max_message_bytes; }
  // A fatal protocol violation: typed Error (fatal; raw: close code), flush, close.
  void Fatal(ErrorCode code, const char* text);
  // Raw sessions: the WebSocket close code and reason to close with (1000 "" by default).
  uint16_t close_code() const { return close_code_; }
  const std::string& close_text() const { return close_text_; }

  ServerContext& ctx_;
  net::Strand strand_;
  std::string path_scene_;             // from the WebSocket path (empty for TCP)
  std::vector<uint8_t> frame_buffer_;  // aligned (std::vector storage)

 private:
  void HandleFrame(session::Frame& frame);
  void HandleHello(const session::Hello& hello);
  void HandleCrdt(const session::Crdt& crdt);
  void HandleDclChunk(std::span<const uint8_t> chunk);
  void JoinScene(const std::string& name, bool can_write, std::optional<uint64_t> resume);
  // Token bucket over DCL messages, refilled to now; the tokens left.
  double RefillTokens();
  void QueueControl(const session::Frame& frame);
  void WriteNext();
  void Watchdog();
  void BeginClose(CloseReason reason);
  void NoteClose(CloseReason reason) {
    if (close_reason_ == CloseReason::kNone) close_reason_ = reason;
  }
  // Counts a refusal and logs it (the first of each reason per session; the rest are counted
  // and summed up in the close line).
  void LogRefusal(ErrorCode code, const char* text, bool fatal, uint64_t messages);
  const char* scene_name() const;

  const SessionKind kind_;
  const net::tcp::endpoint peer_;
  const std::string peer_text_;
  uint64_t id_ = 0;
  Scene* scene_ = nullptr;
  std::string joined_scene_;  // for the close line after leaving
  bool joined_ = false;
  bool can_write_ = false;
  bool reading_ = true;     // false after a violation or on shutdown
  bool throttled_ = false;  // raw: reading paused by the rate limit
  bool close_after_flush_ = false;
  bool closing_ = false;
  bool closed_ = false;
  CloseReason close_reason_ = CloseReason::kNone;
  uint16_t close_code_ = 1000;
  std::string close_text_;
  // Token bucket over DCL messages.
  double tokens_ = 0.0;
  int64_t tokens_at_ms_ = 0;
  uint64_t chunks_in_ = 0;  // raw: chunks received (their Submit sequence)
  // Totals for the close line.
  uint64_t messages_in_ = 0;
  uint64_t bytes_in_ = 0;
  uint64_t bytes_out_ = 0;
  uint64_t refusals_ = 0;
  std::bitset<128> logged_refusals_;  // ErrorCodes already logged (non-fatal refusals)
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
  net::asio::steady_timer throttle_timer_;
};

}  // namespace scenecrdt::server
