// SPDX-License-Identifier: Apache-2.0
// Owns the session core: registration, joining, the token bucket, write batching, the
// slow-consumer watchdog, closing, and the session's refusal and close lines.
#include "scenecrdt/server/sessions/session.h"

#include <algorithm>

#include "scenecrdt/server/observability/endpoint_text.h"
#include "scenecrdt/server/scene/scene.h"

namespace scenecrdt::server {

namespace {

unsigned long long U(uint64_t v) { return static_cast<unsigned long long>(v); }

// RFC 6455: a close reason holds at most 123 bytes.
constexpr std::size_t kMaxCloseTextBytes = 123;

}  // namespace

Session::Session(const SessionContext& ctx, SessionKind kind, std::unique_ptr<Transport> transport,
                 std::unique_ptr<Protocol> protocol)
    : ctx_(ctx.server),
      scenes_(ctx.scenes),
      registry_(ctx.sessions),
      strand_(transport->strand()),
      kind_(kind),
      peer_(transport->peer()),
      peer_text_(EndpointText(peer_)),
      watchdog_(strand_),
      protocol_(std::move(protocol)),
      transport_(std::move(transport)) {
  protocol_->Attach(*this);
}

Session::~Session() { Metrics::Add(ctx_.metrics().queued_bytes, -in_flight_bytes_); }

void Session::Start() {
  id_ = registry_.Register(shared_from_this());
  Metrics::Add(ctx_.metrics().sessions, 1);
  Metrics::Add(ctx_.metrics().sessions_of(kind_), 1);
  Metrics::Add(ctx_.metrics().sessions_accepted);
  started_ms_ = last_read_ms_ = NowMs();
  tokens_ = limits().message_burst;
  tokens_at_ms_ = started_ms_;
  net::asio::dispatch(strand_, [self = shared_from_this()] {
    self->Watchdog();
    self->transport_->Start(std::static_pointer_cast<TransportEvents>(self));
  });
}

const char* Session::scene_name() const {
  return joined_scene_.empty() ? "-" : joined_scene_.c_str();
}

void Session::OnOpened() {
  protocol_->OnOpen();
  ReadNext();
}

void Session::OnMessage(std::span<const uint8_t> message, bool text) {
  if (closed_) return;
  protocol_->OnMessage(message, text);
  ReadNext();
}

void Session::ReadNext() {
  if (reading_ && !closing_ && !read_paused_) transport_->Read();
}

void Session::ResumeReading() {
  read_paused_ = false;
  ReadNext();
}

void Session::NoteInput(std::size_t bytes) {
  Metrics::Add(ctx_.metrics().bytes_in, bytes);
  bytes_in_ += bytes;
  last_read_ms_ = NowMs();
}

void Session::JoinScene(const std::string& name, bool can_write, std::optional<uint64_t> resume,
                        std::optional<InterestSpec> interest) {
  // A read-only token may join a stored scene but never create one (docs/SERVER.md).
  auto scene = scenes_.Acquire(name, can_write);
  if (!scene.has_value()) {
    Fatal(scene.error().code, scene.error().detail);
    return;
  }
  joined_ = true;
  scene_ = scene.value();
  joined_scene_ = name;
  can_write_ = can_write;
  if (grant_expires_) {
    ctx_.log().Write(LogLevel::kInfo, "auth",
                     "scene=%s session=%llu kind=%s peer=%s subject=\"%s\" role=%s "
                     "expires_in_s=%lld",
                     name.c_str(), U(id_), SessionKindName(kind_), peer_text_.c_str(),
                     subject_.c_str(), can_write ? "write" : "read",
                     static_cast<long long>((*grant_expires_ - WallSeconds()).count()));
  }
  scene_->Join(shared_from_this(), can_write_, resume, interest);
}

double Session::RefillTokens() {
  const int64_t now = NowMs();
  tokens_ =
      std::min<double>(limits().message_burst, tokens_ + static_cast<double>(now - tokens_at_ms_) *
                                                             limits().messages_per_second / 1000.0);
  tokens_at_ms_ = now;
  return tokens_;
}

void Session::LogRefusal(ErrorCode code, std::string_view text, bool fatal, uint64_t messages) {
  ctx_.metrics().CountRefusal(code);
  ++refusals_;
  const auto bit = static_cast<std::size_t>(code) % logged_refusals_.size();
  if (!fatal && logged_refusals_.test(bit)) {
    Metrics::Add(ctx_.metrics().log_lines_suppressed);
    return;
  }
  logged_refusals_.set(bit);
  ctx_.log().Write(LogLevel::kWarn, "refusal",
                   "scene=%s session=%llu kind=%s peer=%s reason=%s fatal=%s messages=%llu "
                   "detail=\"%.*s\"%s",
                   scene_name(), U(id_), SessionKindName(kind_), peer_text_.c_str(),
                   ErrorCodeName(code), fatal ? "yes" : "no", U(messages),
                   static_cast<int>(text.size()), text.data(),
                   fatal ? "" : " (later refusals of this reason: counted, not logged)");
}

void Session::SetCloseStatus(uint16_t code, std::string_view text) {
  close_status_.code = code;
  close_status_.text = text.substr(0, kMaxCloseTextBytes);
}

CloseReason DefaultFatalCloseReason(ErrorCode code) {
  switch (code) {
    case ErrorCode::kUnauthorized:
      return CloseReason::kUnauthorized;
    case ErrorCode::kSlowConsumer:
      return CloseReason::kUnreadControl;
    case ErrorCode::kShuttingDown:
      return CloseReason::kShuttingDown;
    case ErrorCode::kSceneFull:
      return CloseReason::kSceneFull;
    case ErrorCode::kSceneDeleted:
      return CloseReason::kSceneDeleted;
    case ErrorCode::kStorageUnavailable:
    case ErrorCode::kCorruptData:
    case ErrorCode::kIo:
      // The scene could not be read from the database: the server's fault, not the peer's.
      return CloseReason::kStorageUnavailable;
    default:
      return CloseReason::kProtocolViolation;
  }
}

void Session::Fatal(ErrorCode code, std::string_view text) {
  if (ending()) return;
  // A server stop or a scene deletion is not the peer's fault: not a refusal.
  if (code != ErrorCode::kShuttingDown && code != ErrorCode::kSceneDeleted) {
    LogRefusal(code, text, true, 0);
  }
  NoteClose(protocol_->FatalCloseReason(code));
  reading_ = false;
  protocol_->QueueGoodbye(code, text);
  close_after_flush_ = true;
  WriteNext();
}

void Session::PostJoined(session::Welcome welcome, std::vector<SharedFrame> state) {
  net::asio::post(strand_, [self = shared_from_this(), welcome, state = std::move(state)]() {
    if (self->ending()) return;
    self->protocol_->OnJoined(welcome);
    self->scene_frames_.insert(self->scene_frames_.end(), state.begin(), state.end());
    self->WriteNext();
  });
}

void Session::PostSceneFrames(std::vector<SharedFrame> frames) {
  net::asio::post(strand_, [self = shared_from_this(), frames = std::move(frames)]() {
    if (self->ending()) return;
    self->scene_frames_.insert(self->scene_frames_.end(), frames.begin(), frames.end());
    self->WriteNext();
  });
}

void Session::PostRefusal(ErrorCode code, const char* text, uint64_t frame_sequence,
                          uint64_t messages) {
  net::asio::dispatch(strand_, [self = shared_from_this(), code, text, frame_sequence, messages] {
    self->protocol_->Refuse(code, text, frame_sequence, messages);
  });
}

void Session::PostAck(uint64_t frame_sequence) {
  if (!protocol_->acks()) return;
  net::asio::post(strand_, [self = shared_from_this(), frame_sequence] {
    if (!self->closed_) self->protocol_->OnAck(frame_sequence);
  });
}

void Session::PostWriteRefused(session::Refusal refusal) {
  net::asio::post(strand_, [self = shared_from_this(), refusal] {
    if (!self->ending()) self->protocol_->OnWriteRefused(refusal);
  });
}

void Session::PostOwnershipTransferred(session::TransferOwnership transfer) {
  net::asio::post(strand_, [self = shared_from_this(), transfer = std::move(transfer)] {
    if (!self->ending()) self->protocol_->OnOwnershipTransferred(transfer);
  });
}

void Session::PostClose(ErrorCode code, std::string text) {
  net::asio::post(strand_, [self = shared_from_this(), code, text = std::move(text)] {
    self->Fatal(code, text);
  });
}

void Session::PostRecheckGrant() {
  net::asio::post(strand_, [self = shared_from_this()] {
    if (self->ending() || !self->joined_ || !self->has_grant_) return;
    auto grant = self->ctx_.auth().CheckNow(self->token_, self->granted_scene_);
    if (!grant.has_value()) {
      self->Fatal(ErrorCode::kUnauthorized,
                  "the server reloaded its credentials and this token no longer grants the "
                  "scene: join again with a valid token");
      return;
    }
    if (self->can_write_ && !CanWrite(grant->role)) {
      self->Fatal(ErrorCode::kUnauthorized,
                  "the server reloaded its credentials and this token is read-only now: join "
                  "again to read");
      return;
    }
    self->grant_expires_ = grant->expires_at;
  });
}

void Session::PostStopReading(std::function<void()> done) {
  net::asio::post(strand_, [self = shared_from_this(), done = std::move(done)] {
    self->reading_ = false;
    done();
  });
}

void Session::WriteNext() {
  if (writing_ || closed_ || closing_) return;
  in_flight_.clear();
  protocol_->TakeControlFrames(in_flight_);
  in_flight_has_scene_ = !scene_frames_.empty();
  in_flight_.insert(in_flight_.end(), scene_frames_.begin(), scene_frames_.end());
  scene_frames_.clear();
  if (in_flight_.empty()) {
    if (close_after_flush_) BeginClose(close_reason_);
    return;
  }
  buffers_.clear();
  int64_t bytes = 0;
  for (const SharedFrame& f : in_flight_) {
    buffers_.emplace_back(f->data(), f->size());
    bytes += static_cast<int64_t>(f->size());
  }
  in_flight_bytes_ = bytes;
  Metrics::Add(ctx_.metrics().queued_bytes, bytes);
  protocol_->OnWriteStarted(in_flight_.size());
  writing_ = true;
  write_started_ms_ = NowMs();
  transport_->Write(buffers_);
}

void Session::OnWriteDone(const net::error_code& ec, std::size_t bytes) {
  writing_ = false;
  Metrics::Add(ctx_.metrics().queued_bytes, -in_flight_bytes_);
  in_flight_bytes_ = 0;
  in_flight_.clear();
  if (ec) {
    BeginClose(CloseReason::kWriteFailed);
    return;
  }
  Metrics::Add(ctx_.metrics().bytes_out, bytes);
  bytes_out_ += bytes;
  if (in_flight_has_scene_ && scene_) {
    in_flight_has_scene_ = false;
    scene_->Ready(id_);
  }
  WriteNext();
}

void Session::OnReadError(const net::error_code& ec) {
  // Nothing to tell a peer that is gone; only the reason is recorded.
  reading_ = false;
  if (ec == net::beast::websocket::error::closed) {
    NoteClose(CloseReason::kClientClosed);
  } else if (ec == net::beast::error::timeout) {
    // Beast's WebSocket timeouts: no data and no pong within the idle timeout (raw DCL), or
    // no upgrade within the handshake timeout.
    if (close_reason_ == CloseReason::kNone) {
      ctx_.log().Write(LogLevel::kWarn, "drop",
                       "scene=%s session=%llu kind=%s peer=%s reason=idle_timeout", scene_name(),
                       U(id_), SessionKindName(kind_), peer_text_.c_str());
    }
    NoteClose(CloseReason::kIdleTimeout);
  } else if (ec == net::beast::websocket::error::message_too_big) {
    // Beast already closed with 1009 before buffering it.
    LogRefusal(ErrorCode::kFrameTooLarge, "WebSocket message above the frame limit", true, 0);
    NoteClose(CloseReason::kProtocolViolation);
  } else {
    NoteClose(CloseReason::kPeerGone);
  }
  if (!close_after_flush_) BeginClose(close_reason_);
}

void Session::Watchdog() {
  if (closed_) return;
  const int64_t now = NowMs();
  if (writing_ && now - write_started_ms_ > limits().slow_consumer_ms) {
    // Its scene changes have been coalescing in the store meanwhile; it did not even take one
    // coalesced frame within the deadline. Nothing more can go to it, so no goodbye.
    ctx_.metrics().CountRefusal(ErrorCode::kSlowConsumer);
    if (closing_) {
      transport_->Close(close_status_);
    } else {
      ctx_.log().Write(LogLevel::kWarn, "drop",
                       "scene=%s session=%llu kind=%s peer=%s reason=slow_consumer "
                       "write_in_flight_ms=%lld bytes=%lld",
                       scene_name(), U(id_), SessionKindName(kind_), peer_text_.c_str(),
                       static_cast<long long>(now - write_started_ms_),
                       static_cast<long long>(in_flight_bytes_));
      BeginClose(CloseReason::kSlowConsumer);
    }
    write_started_ms_ = now;
  } else if (closing_ && now - write_started_ms_ >
                             std::min<int64_t>(limits().slow_consumer_ms, kCloseGraceMs)) {
    // A graceful close (WebSocket close handshake, TLS close_notify) the peer does not
    // answer: cut it.
    transport_->Close(close_status_);
  }
  if (!closing_ && !ending() && grant_expires_ && WallSeconds() >= *grant_expires_) {
    // The token ran out while connected: the client must fetch a new one and rejoin.
    Fatal(ErrorCode::kUnauthorized, auth_reason::kTokenExpired);
  }
  if (!closing_) protocol_->OnWatchdog(now);  // only the two cuts above apply while closing
  // While closing, ticks fine enough to cut an unanswered close soon after the grace.
  const int64_t tick = std::clamp<int64_t>(
      std::min<int64_t>(limits().slow_consumer_ms, limits().idle_timeout_ms) / 4, 10, 1000);
  watchdog_.expires_after(
      std::chrono::milliseconds(closing_ ? std::min<int64_t>(tick, kCloseGraceMs / 6) : tick));
  watchdog_.async_wait([self = shared_from_this()](const net::error_code& ec) {
    if (!ec) self->Watchdog();
  });
}

void Session::BeginClose(CloseReason reason) {
  NoteClose(reason);
  if (closing_ || closed_) return;
  closing_ = true;
  reading_ = false;
  write_started_ms_ = NowMs();
  if (scene_) scene_->Leave(id_, close_reason_);
  transport_->Close(close_status_);
}

void Session::OnClosed() {
  if (closed_) return;
  closed_ = true;
  closing_ = true;
  watchdog_.cancel();
  NoteClose(CloseReason::kPeerGone);
  if (scene_) scene_->Leave(id_, close_reason_);
  scenes_.Release(scene_);  // the last use of scene_: it may be evicted once idle
  scene_ = nullptr;
  scene_frames_.clear();
  protocol_->OnClosed();
  ticket_.reset();
  Metrics& metrics = ctx_.metrics();
  Metrics::Add(metrics.sessions, -1);
  Metrics::Add(metrics.sessions_of(kind_), -1);
  Metrics::Add(metrics.sessions_closed);
  metrics.CountClose(close_reason_);
  ctx_.log().Write(LogLevel::kInfo, "close",
                   "scene=%s session=%llu kind=%s peer=%s reason=%s duration_ms=%lld "
                   "messages_in=%llu bytes_in=%llu bytes_out=%llu refusals=%llu",
                   scene_name(), U(id_), SessionKindName(kind_), peer_text_.c_str(),
                   CloseReasonName(close_reason_), static_cast<long long>(NowMs() - started_ms_),
                   U(messages_in_), U(bytes_in_), U(bytes_out_), U(refusals_));
  registry_.Unregister(id_);
}

}  // namespace scenecrdt::server
