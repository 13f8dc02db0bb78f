// SPDX-License-Identifier: Apache-2.0
// Owns Protocol: what a session's bytes mean, the one object per session that says it (the
// envelope: envelope_protocol.h; raw DCL on /dcl/<scene>: dcl_protocol.h). The Session
// (session.h) calls these hooks on its strand and does everything the two protocols share
// (membership, token bucket, write side, watchdog, closing); a protocol reaches the session
// back through the reference it is attached to, with the session's public calls.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "scenecrdt/protocol/result.h"
#include "scenecrdt/protocol/session/envelope.h"
#include "scenecrdt/server/context.h"

namespace scenecrdt::server {

class Session;

// Why a session ends after a fatal `code` when the protocol has no reason of its own.
CloseReason DefaultFatalCloseReason(ErrorCode code);

class Protocol {
 public:
  virtual ~Protocol() = default;

  // Called once by the Session that owns this protocol, in its constructor.
  void Attach(Session& session) { session_ = &session; }

  // Acks reach this protocol (PostAck): whether it says durability at all (raw DCL cannot).
  // Fixed at construction: read from any thread.
  virtual bool acks() const { return false; }

  // ---- Hooks, run on the session's strand ----
  // The transport is ready (after the WebSocket upgrade): raw DCL joins its path's scene.
  virtual void OnOpen() {}
  // One message from the transport (`text`: a WebSocket text message).
  virtual void OnMessage(std::span<const uint8_t> message, bool text) = 0;
  // Queues the protocol's fatal goodbye for `code` (it goes out after what is queued).
  virtual void QueueGoodbye(ErrorCode code, std::string_view text) = 0;
  // Why the session ends after a fatal `code` (the close line and metrics).
  virtual CloseReason FatalCloseReason(ErrorCode code) const {
    return DefaultFatalCloseReason(code);
  }
  // A refusal of a submitted batch (the scene's PostRefusal, or the protocol's own).
  virtual void Refuse(ErrorCode code, const char* text, uint64_t frame_sequence,
                      uint64_t messages) = 0;
  // One write refused by the scene's authority.
  virtual void OnWriteRefused(const session::Refusal& refusal) = 0;
  // The scene applied this session's TransferOwnership (envelope only).
  virtual void OnOwnershipTransferred(const session::TransferOwnership& transfer) {
    (void)transfer;
  }
  // Frames up to `frame_sequence` are durable (only when acks()).
  virtual void OnAck(uint64_t frame_sequence) { (void)frame_sequence; }
  // Moves the frames to send ahead of scene data into `out` (the write being started).
  virtual void TakeControlFrames(std::vector<SharedFrame>& out) { (void)out; }
  // The scene accepted the join (before its state frames are queued).
  virtual void OnJoined(const session::Welcome& welcome) { (void)welcome; }
  // A write of `frames` frames starts (metrics).
  virtual void OnWriteStarted(std::size_t frames) = 0;
  // The protocol's own timeouts, every watchdog tick while not closing.
  virtual void OnWatchdog(int64_t now_ms) { (void)now_ms; }
  // The connection ended: drop queues, cancel timers.
  virtual void OnClosed() {}

 protected:
  Session& session() const { return *session_; }

 private:
  Session* session_ = nullptr;
};

}  // namespace scenecrdt::server
