// SPDX-License-Identifier: Apache-2.0
// Owns the raw-DCL protocol's chunk handling, drop policy and throttling (its close codes:
// close_codes.h).
#include "scenecrdt/server/sessions/dcl_protocol.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "scenecrdt/runtime/crdt_store.h"
#include "scenecrdt/server/scene/scene.h"
#include "scenecrdt/server/sessions/close_codes.h"
#include "scenecrdt/server/sessions/session.h"

namespace scenecrdt::server {

DclProtocol::DclProtocol(ServerContext& ctx, const net::Strand& strand, std::string scene,
                         Role role)
    : ctx_(ctx), scene_(std::move(scene)), role_(role), throttle_timer_(strand) {}

void DclProtocol::OnOpen() { session().JoinScene(scene_, CanWrite(role_), std::nullopt); }

void DclProtocol::OnMessage(std::span<const uint8_t> message, bool text) {
  if (text) {
    session().Fatal(ErrorCode::kBadRequest, "text messages are not DCL chunks");
    return;
  }
  HandleChunk(message);
}

void DclProtocol::HandleChunk(std::span<const uint8_t> chunk) {
  if (!session().reading() || session().closing() || !session().joined()) return;
  Metrics& metrics = ctx_.metrics();
  Metrics::Add(metrics.dcl_chunks_in);
  session().NoteInput(chunk.size());
  ++chunks_in_;
  if (chunk.empty()) return;  // an @dcl/ecs engine sends one per update, even with nothing new
  // Strictly decoded as a whole first (an error rejects all of it); the messages the store
  // would refuse are left out and the rest is kept, in order, as sent.
  runtime::Admission admission = runtime::CrdtStore::Admit(
      chunk, session().scene()->store_limits(),
      {session().limits().max_message_bytes, runtime::AdmitMode::kDropRefused});
  if (admission.verdict != runtime::Admission::Verdict::kAdmitted) {
    // Nothing of the chunk reaches the scene: close with 1007 and say where it broke.
    char text[96];
    std::snprintf(text, sizeof text, "malformed DCL chunk: %s at byte %llu",
                  ErrorCodeName(admission.error.code),
                  static_cast<unsigned long long>(admission.error.offset));
    session().Fatal(admission.error.code, text);
    return;
  }
  if (!session().can_write()) {
    // Dropped, not closed: a spectator engine still emits incidental messages (the
    // DELETE_COMPONENTs @dcl/ecs sends after a remote DELETE_ENTITY), and must stay joined.
    metrics.CountDclDrop(ErrorCode::kReadOnly, admission.messages);
    session().LogRefusal(ErrorCode::kReadOnly, "read-only token: the chunk was dropped", false,
                         admission.messages);
    return;
  }
  for (const runtime::RefusalCount& dropped : admission.dropped) {
    metrics.CountDclDrop(dropped.code, dropped.messages);
    session().LogRefusal(dropped.code, runtime::RefusalText(dropped.code), false, dropped.messages);
  }
  if (admission.batch.empty()) return;
  // The rate limit delays instead of refusing: there is no refusal a raw client could act on.
  // The chunk is admitted; a bucket in debt pauses reading until it has refilled, so the
  // peer's later chunks wait in its socket (TCP backpressure) and nothing is lost.
  const std::size_t kept = admission.batch.size();
  session().RefillTokens();
  const double tokens = session().SpendTokens(static_cast<double>(kept));
  session().CountMessagesIn(kept);
  session().scene()->Submit(session().id(), chunks_in_, std::move(admission.batch));
  if (tokens < 0.0) {
    session().PauseReading();
    Metrics::Add(metrics.dcl_throttles);
    const double rate = std::max<double>(1.0, session().limits().messages_per_second);
    const auto wait_ms = static_cast<int64_t>(std::ceil(-tokens * 1000.0 / rate));
    throttle_timer_.expires_after(std::chrono::milliseconds(wait_ms));
    // The session (and with it this protocol) lives until the timer fires or is cancelled.
    throttle_timer_.async_wait([self = session().shared_from_this()](const net::error_code& ec) {
      if (!ec) self->ResumeReading();
    });
  }
}

void DclProtocol::Refuse(ErrorCode code, const char* text, uint64_t, uint64_t messages) {
  // A scene-level refusal (entity or tombstone limit) of a whole chunk: dropped, counted.
  ctx_.metrics().CountDclDrop(code, messages);
  session().LogRefusal(code, text, false, messages);
}

void DclProtocol::OnWriteRefused(const session::Refusal& refusal) {
  // The scene answers with a correction that wins in the engine (docs/AUTHORITY.md): the
  // refusal itself is only counted and logged.
  ctx_.metrics().CountDclDrop(refusal.code, 1);
  session().LogRefusal(refusal.code, "a write refused by the scene's authority (corrected)", false,
                       1);
}

void DclProtocol::QueueGoodbye(ErrorCode code, std::string_view text) {
  session().SetCloseStatus(WebSocketCloseCode(CloseCodeProtocol::kDcl, code), text);
}

CloseReason DclProtocol::FatalCloseReason(ErrorCode code) const {
  return IsMalformedDcl(code) ? CloseReason::kMalformedDcl : DefaultFatalCloseReason(code);
}

void DclProtocol::OnWriteStarted(std::size_t) {
  Metrics::Add(ctx_.metrics().dcl_chunks_out);  // one WebSocket message per write
}

void DclProtocol::OnClosed() { throttle_timer_.cancel(); }

}  // namespace scenecrdt::server
