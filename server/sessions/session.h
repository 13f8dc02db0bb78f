// SPDX-License-Identifier: Apache-2.0
// Owns Session: one client connection, composed of two objects it owns: a Transport that moves
// the bytes (session_transport.h: framed TCP or WebSocket, ../transport/) and a Protocol that
// says what they mean (protocol.h: the envelope or raw DCL). The session itself does what
// every connection shares: registration, scene membership, the token bucket, the write side,
// the slow-consumer watchdog, closing, refusal logging and the close line. The transport
// reports back through TransportEvents; the protocol calls the public calls below. Everything
// runs on the session's strand; the scene talks to it only through SceneMember
// (scene/scene_member.h).
//
// Write side: whatever the protocol has pending ahead of scene data (Welcome, Error, Pong,
// Ack: TakeControlFrames) plus at most one scene delivery go out in one gather write. A write
// in flight longer than slow_consumer_ms drops the session.
#pragma once

#include <bitset>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "scenecrdt/protocol/session/envelope.h"
#include "scenecrdt/server/context.h"
#include "scenecrdt/server/scene/interest/member_view.h"
#include "scenecrdt/server/scene/scene_member.h"
#include "scenecrdt/server/scene/scenes.h"
#include "scenecrdt/server/sessions/protocol.h"
#include "scenecrdt/server/sessions/session_registry.h"
#include "scenecrdt/server/sessions/session_transport.h"

namespace scenecrdt::server {

// How long a graceful close (a WebSocket close handshake, a TLS close_notify) waits for the
// peer's answer before the socket is cut (at most --slow-consumer-ms).
inline constexpr int64_t kCloseGraceMs = 1500;

// What a session is handed besides its transport and protocol: the server's shared state, the
// scenes it joins and the registry it stays in while open (all outlive it).
struct SessionContext {
  ServerContext& server;
  Scenes& scenes;
  SessionRegistry& sessions;
};

class Session final : public std::enable_shared_from_this<Session>,
                      public SceneMember,
                      public TransportEvents {
 public:
  // `transport`: the connection (its strand and peer address are the session's);
  // `protocol`: what its bytes mean (attached to this session here).
  Session(const SessionContext& ctx, SessionKind kind, std::unique_ptr<Transport> transport,
          std::unique_ptr<Protocol> protocol);
  ~Session();
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

  // Registers the session and starts the transport (on the strand).
  void Start();
  uint64_t id() const override { return id_; }
  // Immutable after construction: readable from any strand.
  SessionKind kind() const override { return kind_; }
  const net::tcp::endpoint& peer() const override { return peer_; }
  const std::string& peer_text() const override { return peer_text_; }
  // The connection's place under the connection caps (a transport/connection_limiter.h
  // ConnectionTicket, which gives the place back when dropped), held until the socket closes.
  void AdoptConnection(std::shared_ptr<void> ticket) { ticket_ = std::move(ticket); }
  // The scene hands this session its frames as zstd records, compressed once per scene
  // (Welcome.compression = zstd frames). Set before the join; read by the scene's strand.
  bool zstd_frames() const override { return zstd_frames_; }
  std::string principal() const override {
    return principal_.empty() ? "session#" + std::to_string(id_) : principal_;
  }
  bool admin() const override { return admin_; }
  std::vector<std::pair<uint32_t, uint32_t>> entity_ranges() const override {
    return entity_ranges_;
  }
  // The credential the session joins with: its subject is logged on join, and a grant that
  // expires closes the session then (fatal kUnauthorized "token_expired"). The token is kept
  // (never logged) so that a reload of the server's credentials can check it again.
  void NoteGrant(const AccessGrant& grant, std::string token, std::string scene) {
    subject_ = grant.subject;
    principal_ = grant.principal;
    admin_ = grant.role == Role::kAdmin;
    entity_ranges_ = grant.entity_ranges;
    grant_expires_ = grant.expires_at;
    token_ = std::move(token);
    granted_scene_ = std::move(scene);
    has_grant_ = true;
  }

  // ---- SceneMember: any thread (each posts to the strand) ----
  void PostJoined(session::Welcome welcome, std::vector<SharedFrame> state) final;
  void PostSceneFrames(std::vector<SharedFrame> frames) final;
  // Only to a protocol that acks (the envelope; raw DCL cannot).
  void PostAck(uint64_t frame_sequence) final;
  void PostRefusal(ErrorCode code, const char* text, uint64_t frame_sequence,
                   uint64_t messages = 0) final;
  void PostClose(ErrorCode code, std::string text) final;
  void PostWriteRefused(session::Refusal refusal) final;
  void PostOwnershipTransferred(session::TransferOwnership transfer) final;

  // ---- Any thread (each posts to the strand) ----
  // The server's credentials were reloaded (SIGHUP): a joined session whose token no longer
  // grants its scene, or no longer grants writing to a writer, ends with fatal kUnauthorized;
  // one still granted takes the new grant's expiry. docs/AUTH.md "Reloading".
  void PostRecheckGrant();
  // Stops reading (shutdown); `done` runs on the strand afterwards.
  void PostStopReading(std::function<void()> done);

  // ---- Called by protocols, on the strand ----
  ServerContext& ctx() const { return ctx_; }
  const net::Strand& strand() const { return strand_; }
  Transport& transport() { return *transport_; }
  void ReadNext();
  // Counts `bytes` received and moves the idle clock.
  void NoteInput(std::size_t bytes);
  void SetZstdFrames(bool on) { zstd_frames_ = on; }
  // Looks the scene up and joins it (the scene logs the open line).
  // `interest`: declared before the Hello (docs/INTEREST.md).
  void JoinScene(const std::string& name, bool can_write, std::optional<uint64_t> resume,
                 std::optional<InterestSpec> interest = std::nullopt);
  // A fatal condition: logged (unless kShuttingDown), goodbye queued, flushed, closed.
  void Fatal(ErrorCode code, std::string_view text);
  // Starts the write of whatever is pending (no-op while one is in flight).
  void WriteNext();
  void BeginClose(CloseReason reason);
  void NoteClose(CloseReason reason) {
    if (close_reason_ == CloseReason::kNone) close_reason_ = reason;
  }
  void StopReading() { reading_ = false; }
  // Reading paused by the protocol (rate limit backpressure); ResumeReading reads again.
  void PauseReading() { read_paused_ = true; }
  void ResumeReading();
  // Token bucket over DCL messages, refilled to now; the tokens left (may be negative).
  double RefillTokens();
  // Takes `n` tokens; the tokens left (negative: in debt).
  double SpendTokens(double n) { return tokens_ -= n; }
  void CountMessagesIn(uint64_t n) { messages_in_ += n; }
  // Counts a refusal and logs it (the first of each reason per session; the rest are counted
  // and summed up in the close line).
  void LogRefusal(ErrorCode code, std::string_view text, bool fatal, uint64_t messages);
  // The WebSocket close status the transport sends when it closes (1000 "" by default).
  void SetCloseStatus(uint16_t code, std::string_view text);

  bool joined() const { return joined_; }
  bool can_write() const { return can_write_; }
  bool reading() const { return reading_; }
  bool closing() const { return closing_; }
  bool closed() const { return closed_; }
  // A fatal goodbye is queued: nothing more is queued or read.
  bool ending() const { return closed_ || close_after_flush_; }
  bool writing() const { return writing_; }
  int64_t started_ms() const { return started_ms_; }
  int64_t last_read_ms() const { return last_read_ms_; }
  Scene* scene() const { return scene_; }
  const char* scene_name() const;
  const Limits& limits() const { return ctx_.config().limits; }

 private:
  // ---- TransportEvents: the transport's reports, on the strand ----
  void OnOpened() final;  // the protocol's OnOpen(), then the first read
  void OnMessage(std::span<const uint8_t> message, bool text) final;
  void OnTransportFatal(ErrorCode code, std::string_view text) final { Fatal(code, text); }
  void OnReadError(const net::error_code& ec) final;
  void OnWriteDone(const net::error_code& ec, std::size_t bytes) final;
  void OnClosed() final;

  void Watchdog();

  ServerContext& ctx_;
  Scenes& scenes_;
  SessionRegistry& registry_;
  const net::Strand strand_;
  const SessionKind kind_;
  const net::tcp::endpoint peer_;
  const std::string peer_text_;
  uint64_t id_ = 0;
  Scene* scene_ = nullptr;
  std::string joined_scene_;  // for the close line after leaving
  bool joined_ = false;
  bool can_write_ = false;
  bool zstd_frames_ = false;
  bool reading_ = true;  // false after a violation or on shutdown
  bool read_paused_ = false;
  bool close_after_flush_ = false;
  bool closing_ = false;
  bool closed_ = false;
  CloseReason close_reason_ = CloseReason::kNone;
  CloseStatus close_status_;
  // Token bucket over DCL messages.
  double tokens_ = 0.0;
  int64_t tokens_at_ms_ = 0;
  // Totals for the close line.
  uint64_t messages_in_ = 0;
  uint64_t bytes_in_ = 0;
  uint64_t bytes_out_ = 0;
  uint64_t refusals_ = 0;
  std::bitset<128> logged_refusals_;  // ErrorCodes already logged (non-fatal refusals)
  // Write side.
  std::vector<SharedFrame> scene_frames_;
  std::vector<SharedFrame> in_flight_;
  std::vector<net::asio::const_buffer> buffers_;
  bool writing_ = false;
  bool in_flight_has_scene_ = false;
  int64_t write_started_ms_ = 0;
  int64_t in_flight_bytes_ = 0;
  // Timeouts.
  int64_t started_ms_ = 0;
  int64_t last_read_ms_ = 0;
  net::asio::steady_timer watchdog_;
  std::shared_ptr<void> ticket_;  // the connection's place under the caps
  std::string subject_;
  std::string principal_;  // empty: the session is its own principal
  bool admin_ = false;
  std::vector<std::pair<uint32_t, uint32_t>> entity_ranges_;  // JWT `entities`
  std::optional<std::chrono::sys_seconds> grant_expires_;
  bool has_grant_ = false;
  std::string token_;          // the credential joined with (never logged)
  std::string granted_scene_;  // the scene it was checked for
  const std::unique_ptr<Protocol> protocol_;
  // Last: destroyed first (its socket closes before the session's state goes).
  std::unique_ptr<Transport> transport_;
};

}  // namespace scenecrdt::server
