// SPDX-License-Identifier: Apache-2.0
// Owns the transport-independent session logic: validation, rate limiting, write batching,
// timeouts, closing, and the session's event lines.
#include "scenecrdt/server/session.h"

#include <arpa/inet.h>

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "scenecrdt/runtime/crdt_store.h"
#include "scenecrdt/server/scene.h"

namespace scenecrdt::server {

namespace {

// The decoder's verdicts on a malformed DCL chunk.
bool IsMalformedDcl(ErrorCode code) {
  switch (code) {
    case ErrorCode::kTruncated:
    case ErrorCode::kLengthTooSmall:
    case ErrorCode::kLengthTooLarge:
    case ErrorCode::kLengthMismatch:
    case ErrorCode::kDataLengthMismatch:
    case ErrorCode::kUnknownMessageType:
      return true;
    default:
      return false;
  }
}

// The WebSocket close code a raw-DCL session gets for a fatal condition (RFC 6455 7.4.1).
uint16_t WebSocketCloseCode(ErrorCode code) {
  if (IsMalformedDcl(code)) return 1007;  // invalid frame payload data
  switch (code) {
    case ErrorCode::kFrameTooLarge:
      return 1009;  // message too big
    case ErrorCode::kShuttingDown:
      return 1001;  // going away
    case ErrorCode::kSceneFull:
      return 1013;  // try again later
    case ErrorCode::kBadRequest:
      return 1003;  // unsupported data (a text message)
    default:
      return 1008;  // policy violation
  }
}

CloseReason CloseReasonFor(ErrorCode code, bool raw) {
  if (IsMalformedDcl(code))
    return raw ? CloseReason::kMalformedDcl : CloseReason::kProtocolViolation;
  switch (code) {
    case ErrorCode::kUnauthorized:
      return CloseReason::kUnauthorized;
    case ErrorCode::kSlowConsumer:
      return CloseReason::kUnreadControl;
    case ErrorCode::kShuttingDown:
      return CloseReason::kShuttingDown;
    case ErrorCode::kSceneFull:
      return CloseReason::kSceneFull;
    default:
      return CloseReason::kProtocolViolation;
  }
}

unsigned long long U(uint64_t v) { return static_cast<unsigned long long>(v); }

}  // namespace

std::string EndpointText(const net::tcp::endpoint& endpoint) {
  char text[64] = "?";
  const net::asio::ip::address address = endpoint.address();
  if (address.is_v4()) {
    const auto bytes = address.to_v4().to_bytes();
    inet_ntop(AF_INET, bytes.data(), text, sizeof text);
    return std::string(text) + ':' + std::to_string(endpoint.port());
  }
  const auto bytes = address.to_v6().to_bytes();
  inet_ntop(AF_INET6, bytes.data(), text, sizeof text);
  return '[' + std::string(text) + "]:" + std::to_string(endpoint.port());
}

Session::Session(ServerContext& ctx, net::Strand strand, SessionKind kind, std::string path_scene,
                 net::tcp::endpoint peer, Role dcl_role)
    : ctx_(ctx),
      strand_(std::move(strand)),
      path_scene_(std::move(path_scene)),
      kind_(kind),
      peer_(peer),
      peer_text_(EndpointText(peer)),
      can_write_(kind == SessionKind::kDcl && dcl_role == Role::kWrite),
      watchdog_(strand_),
      throttle_timer_(strand_) {}

Session::~Session() { Metrics::Add(ctx_.metrics().queued_bytes, -in_flight_bytes_); }

void Session::Start() {
  id_ = ctx_.RegisterSession(shared_from_this());
  Metrics::Add(ctx_.metrics().sessions, 1);
  Metrics::Add(ctx_.metrics().sessions_of(kind_), 1);
  Metrics::Add(ctx_.metrics().sessions_accepted);
  started_ms_ = last_read_ms_ = NowMs();
  tokens_ = ctx_.config().limits.message_burst;
  tokens_at_ms_ = started_ms_;
  net::asio::dispatch(strand_, [self = shared_from_this()] {
    self->Watchdog();
    self->TransportStart();
  });
}

const char* Session::scene_name() const {
  return joined_scene_.empty() ? "-" : joined_scene_.c_str();
}

void Session::ReadNext() {
  if (reading_ && !closing_ && !throttled_) TransportRead();
}

void Session::OnMessage(std::span<const uint8_t> message) {
  if (raw()) {
    HandleDclChunk(message);
    return;
  }
  // A WebSocket message carries one or more complete frames (docs/PROTOCOL.md section 2).
  while (!message.empty() && reading_) {
    const auto size = session::PeekFrameSize(message);
    if (!size || *size > message.size()) {
      Fatal(ErrorCode::kEnvelopeInvalid, "a WebSocket message must hold whole frames");
      return;
    }
    if (*size > max_frame_bytes()) {
      Fatal(ErrorCode::kFrameTooLarge, "frame above the server's limit");
      return;
    }
    // Copy into the aligned frame buffer (flatbuffers reads scalars in place).
    frame_buffer_.assign(message.begin(), message.begin() + static_cast<std::ptrdiff_t>(*size));
    message = message.subspan(*size);
    OnFrame(frame_buffer_);
  }
}

void Session::OnFrame(std::span<const uint8_t> frame) {
  if (!reading_ || closing_) return;
  Metrics& metrics = ctx_.metrics();
  Metrics::Add(metrics.frames_in);
  Metrics::Add(metrics.bytes_in, frame.size());
  bytes_in_ += frame.size();
  last_read_ms_ = NowMs();
  session::ReadOptions options;
  options.max_frame_bytes = max_frame_bytes();
  auto read = session::ReadFrame(frame, options);
  if (!read.has_value()) {
    Fatal(read.error().code, read.error().detail);
    return;
  }
  HandleFrame(read.value());
}

void Session::HandleFrame(session::Frame& frame) {
  if (auto* hello = std::get_if<session::Hello>(&frame)) {
    HandleHello(*hello);
  } else if (auto* crdt = std::get_if<session::Crdt>(&frame)) {
    HandleCrdt(*crdt);
  } else if (auto* ping = std::get_if<session::Ping>(&frame)) {
    QueueControl(session::Pong{ping->nonce, ping->sent_us});
  } else if (std::get_if<session::Pong>(&frame)) {
    // last_read_ms_ already moved: that is all a Pong is for.
  } else if (auto* error = std::get_if<session::ErrorFrame>(&frame)) {
    if (error->fatal) BeginClose(CloseReason::kClientClosed);  // the client says goodbye
  } else {
    Fatal(ErrorCode::kUnexpectedPayload, "clients send Hello, Crdt, Ping, Pong or Error");
  }
}

void Session::HandleHello(const session::Hello& hello) {
  if (joined_) {
    Fatal(ErrorCode::kUnexpectedPayload, "Hello sent twice");
    return;
  }
  if (!path_scene_.empty() && hello.scene != path_scene_) {
    Fatal(ErrorCode::kBadRequest, "Hello.scene differs from the WebSocket path's scene");
    return;
  }
  auto role = ctx_.auth().Check(hello.token, hello.scene);
  if (!role.has_value()) {
    Fatal(ErrorCode::kUnauthorized, role.error().detail);
    return;
  }
  JoinScene(hello.scene, role.value() == Role::kWrite, hello.resume_sequence);
}

void Session::JoinPathScene() { JoinScene(path_scene_, can_write_, std::nullopt); }

void Session::JoinScene(const std::string& name, bool can_write, std::optional<uint64_t> resume) {
  Scene* scene = ctx_.FindOrCreateScene(name);
  if (!scene) {
    Fatal(ErrorCode::kShuttingDown, "the server is stopping");
    return;
  }
  joined_ = true;
  scene_ = scene;
  joined_scene_ = name;
  can_write_ = can_write;
  // The scene logs the open line: it knows how the join is served.
  scene_->Join(shared_from_this(), can_write_, resume);
}

double Session::RefillTokens() {
  const Limits& limits = ctx_.config().limits;
  const int64_t now = NowMs();
  tokens_ =
      std::min<double>(limits.message_burst, tokens_ + static_cast<double>(now - tokens_at_ms_) *
                                                           limits.messages_per_second / 1000.0);
  tokens_at_ms_ = now;
  return tokens_;
}

void Session::HandleCrdt(const session::Crdt& crdt) {
  if (!joined_) {
    Fatal(ErrorCode::kUnexpectedPayload, "Crdt before Hello");
    return;
  }
  if (!can_write_) {
    PostRefusal(ErrorCode::kReadOnly, "this session's token is read-only", crdt.frame_sequence);
    return;
  }
  // The frame's one decode: a malformed stream is a protocol violation (fatal); a message the
  // store would refuse refuses the frame.
  runtime::Admission admission = runtime::CrdtStore::Admit(
      crdt.data, scene_->store_limits(), {max_message_bytes(), runtime::AdmitMode::kWholeChunk});
  if (admission.verdict == runtime::Admission::Verdict::kMalformed) {
    Fatal(admission.error.code, "malformed DCL stream in a Crdt frame");
    return;
  }
  if (admission.verdict == runtime::Admission::Verdict::kRefused) {
    PostRefusal(admission.error.code, admission.error.detail, crdt.frame_sequence);
    return;
  }
  // Token bucket over messages: a frame is admitted whole or refused whole.
  if (RefillTokens() < admission.messages) {
    PostRefusal(ErrorCode::kRateLimited, "over the messages-per-second limit", crdt.frame_sequence);
    return;
  }
  tokens_ -= admission.messages;
  messages_in_ += admission.messages;
  scene_->Submit(id_, crdt.frame_sequence, std::move(admission.batch));
}

void Session::HandleDclChunk(std::span<const uint8_t> chunk) {
  if (!reading_ || closing_ || !joined_) return;
  Metrics& metrics = ctx_.metrics();
  Metrics::Add(metrics.dcl_chunks_in);
  Metrics::Add(metrics.bytes_in, chunk.size());
  bytes_in_ += chunk.size();
  last_read_ms_ = NowMs();
  ++chunks_in_;
  if (chunk.empty()) return;  // an @dcl/ecs engine sends one per update, even with nothing new
  // Strictly decoded as a whole first (an error rejects all of it); the messages the store
  // would refuse are left out and the rest is kept, in order, as sent.
  runtime::Admission admission = runtime::CrdtStore::Admit(
      chunk, scene_->store_limits(), {max_message_bytes(), runtime::AdmitMode::kDropRefused});
  if (admission.verdict != runtime::Admission::Verdict::kAdmitted) {
    // Nothing of the chunk reaches the scene: close with 1007 and say where it broke.
    char text[96];
    std::snprintf(text, sizeof text, "malformed DCL chunk: %s at byte %llu",
                  ErrorCodeName(admission.error.code), U(admission.error.offset));
    Fatal(admission.error.code, text);
    return;
  }
  if (!can_write_) {
    // Dropped, not closed: a spectator engine still emits incidental messages (the
    // DELETE_COMPONENTs @dcl/ecs sends after a remote DELETE_ENTITY), and must stay joined.
    metrics.CountDclDrop(ErrorCode::kReadOnly, admission.messages);
    LogRefusal(ErrorCode::kReadOnly, "read-only token: the chunk was dropped", false,
               admission.messages);
    return;
  }
  for (const runtime::RefusalCount& dropped : admission.dropped) {
    metrics.CountDclDrop(dropped.code, dropped.messages);
    LogRefusal(dropped.code, runtime::RefusalText(dropped.code), false, dropped.messages);
  }
  if (admission.batch.empty()) return;
  // The rate limit delays instead of refusing: there is no refusal a raw client could act on.
  // The chunk is admitted; a bucket in debt pauses reading until it has refilled, so the
  // peer's later chunks wait in its socket (TCP backpressure) and nothing is lost.
  const auto kept = static_cast<double>(admission.batch.size());
  RefillTokens();
  tokens_ -= kept;
  messages_in_ += admission.batch.size();
  scene_->Submit(id_, chunks_in_, std::move(admission.batch));
  if (tokens_ < 0.0) {
    const Limits& limits = ctx_.config().limits;
    throttled_ = true;
    Metrics::Add(metrics.dcl_throttles);
    const double rate = std::max<double>(1.0, limits.messages_per_second);
    const auto wait_ms = static_cast<int64_t>(std::ceil(-tokens_ * 1000.0 / rate));
    throttle_timer_.expires_after(std::chrono::milliseconds(wait_ms));
    throttle_timer_.async_wait([self = shared_from_this()](const net::error_code& ec) {
      if (ec) return;
      self->throttled_ = false;
      self->ReadNext();
    });
  }
}

void Session::QueueControl(const session::Frame& frame) {
  if (closed_ || close_after_flush_ || raw()) return;
  if (control_.size() >= ctx_.config().limits.max_control_frames) {
    // The client does not read what it provokes (errors, pongs): drop it.
    Fatal(ErrorCode::kSlowConsumer, "too many unread control frames");
    return;
  }
  control_.push_back(MakeShared(session::BuildFrame(frame)));
  WriteNext();
}

void Session::LogRefusal(ErrorCode code, const char* text, bool fatal, uint64_t messages) {
  ctx_.metrics().CountRefusal(code);
  ++refusals_;
  const auto bit = static_cast<std::size_t>(code) % logged_refusals_.size();
  if (!fatal && logged_refusals_.test(bit)) {
    Metrics::Add(ctx_.metrics().log_lines_suppressed);
    return;
  }
  logged_refusals_.set(bit);
  ctx_.log().Write("refusal",
                   "scene=%s session=%llu kind=%s peer=%s reason=%s fatal=%s messages=%llu "
                   "detail=\"%s\"%s",
                   scene_name(), U(id_), SessionKindName(kind_), peer_text_.c_str(),
                   ErrorCodeName(code), fatal ? "yes" : "no", U(messages), text,
                   fatal ? "" : " (later refusals of this reason: counted, not logged)");
}

void Session::Fatal(ErrorCode code, const char* text) {
  if (closed_ || close_after_flush_) return;
  LogRefusal(code, text, true, 0);
  NoteClose(CloseReasonFor(code, raw()));
  reading_ = false;
  if (raw()) {
    close_code_ = WebSocketCloseCode(code);
    // RFC 6455: a close reason holds at most 123 bytes.
    close_text_ = text;
    if (close_text_.size() > 123) close_text_.resize(123);
  } else {
    // The fatal Error goes out even when the control queue is full.
    control_.push_back(MakeShared(session::BuildFrame(session::ErrorFrame{code, text, 0, true})));
  }
  close_after_flush_ = true;
  WriteNext();
}

void Session::PostJoined(session::Welcome welcome, std::vector<SharedFrame> state) {
  net::asio::post(strand_, [self = shared_from_this(), welcome, state = std::move(state)]() {
    if (self->closed_ || self->close_after_flush_) return;
    if (!self->raw()) self->control_.push_back(MakeShared(session::BuildFrame(welcome)));
    self->scene_frames_.insert(self->scene_frames_.end(), state.begin(), state.end());
    self->WriteNext();
  });
}

void Session::PostSceneFrames(std::vector<SharedFrame> frames, uint64_t messages) {
  net::asio::post(strand_, [self = shared_from_this(), frames = std::move(frames), messages]() {
    if (self->closed_ || self->close_after_flush_) return;
    self->scene_frames_.insert(self->scene_frames_.end(), frames.begin(), frames.end());
    self->scene_messages_ += messages;
    self->WriteNext();
  });
}

void Session::PostAck(uint64_t frame_sequence) {
  if (raw()) return;  // durability is not observable on the raw path
  net::asio::post(strand_, [self = shared_from_this(), frame_sequence] {
    if (self->closed_) return;
    self->ack_pending_ = std::max(self->ack_pending_.value_or(0), frame_sequence);
    self->WriteNext();
  });
}

void Session::PostRefusal(ErrorCode code, const char* text, uint64_t frame_sequence,
                          uint64_t messages) {
  net::asio::dispatch(strand_, [self = shared_from_this(), code, text, frame_sequence, messages] {
    if (self->raw()) {
      // A scene-level refusal (entity or tombstone limit) of a whole chunk: dropped, counted.
      self->ctx_.metrics().CountDclDrop(code, messages);
      self->LogRefusal(code, text, false, messages);
      return;
    }
    self->LogRefusal(code, text, false, messages);
    self->QueueControl(session::ErrorFrame{code, text, frame_sequence, false});
  });
}

void Session::PostClose(ErrorCode code, std::string text) {
  net::asio::post(strand_, [self = shared_from_this(), code, text = std::move(text)] {
    if (self->closed_ || self->close_after_flush_) return;
    if (code != ErrorCode::kShuttingDown) {
      self->LogRefusal(code, text.c_str(), true, 0);
    }
    self->NoteClose(CloseReasonFor(code, self->raw()));
    self->reading_ = false;
    if (self->raw()) {
      self->close_code_ = WebSocketCloseCode(code);
      self->close_text_ = text.substr(0, 123);
    } else {
      self->control_.push_back(
          MakeShared(session::BuildFrame(session::ErrorFrame{code, text, 0, true})));
    }
    self->close_after_flush_ = true;
    self->WriteNext();
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
  if (!control_.empty()) {
    in_flight_.assign(control_.begin(), control_.end());
    control_.clear();
  }
  if (ack_pending_) {
    in_flight_.push_back(MakeShared(session::BuildFrame(session::Ack{*ack_pending_})));
    ack_pending_.reset();
    Metrics::Add(ctx_.metrics().acks_out);
  }
  in_flight_has_scene_ = !scene_frames_.empty();
  in_flight_.insert(in_flight_.end(), scene_frames_.begin(), scene_frames_.end());
  scene_frames_.clear();
  scene_messages_ = 0;
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
  if (raw()) {
    Metrics::Add(ctx_.metrics().dcl_chunks_out);  // one WebSocket message per write
  } else {
    Metrics::Add(ctx_.metrics().frames_out, in_flight_.size());
  }
  writing_ = true;
  write_started_ms_ = NowMs();
  TransportWrite(buffers_);
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
    // Beast's keep-alive (raw sessions): no data and no pong within the idle timeout.
    if (close_reason_ == CloseReason::kNone) {
      ctx_.log().Write("drop", "scene=%s session=%llu kind=%s peer=%s reason=idle_timeout",
                       scene_name(), U(id_), SessionKindName(kind_), peer_text_.c_str());
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
  const Limits& limits = ctx_.config().limits;
  const int64_t now = NowMs();
  if (writing_ && now - write_started_ms_ > limits.slow_consumer_ms) {
    // Its scene changes have been coalescing in the store meanwhile; it did not even take one
    // coalesced frame within the deadline. Nothing more can go to it, so no Error frame.
    ctx_.metrics().CountRefusal(ErrorCode::kSlowConsumer);
    if (closing_) {
      TransportClose();
    } else {
      ctx_.log().Write("drop",
                       "scene=%s session=%llu kind=%s peer=%s reason=slow_consumer "
                       "write_in_flight_ms=%lld bytes=%lld",
                       scene_name(), U(id_), SessionKindName(kind_), peer_text_.c_str(),
                       static_cast<long long>(now - write_started_ms_),
                       static_cast<long long>(in_flight_bytes_));
      BeginClose(CloseReason::kSlowConsumer);
    }
    write_started_ms_ = now;
  } else if (closing_ && now - write_started_ms_ > limits.slow_consumer_ms) {
    // A graceful close that does not finish: cut it.
    TransportClose();
  }
  if (closing_ || raw()) {
    // Only the two cuts above apply while closing. Raw sessions: Beast's WebSocket timeouts
    // (handshake, idle with keep-alive pings) replace the envelope's Hello deadline and Ping.
  } else if (!joined_ && reading_ && now - started_ms_ > limits.handshake_timeout_ms) {
    ctx_.log().Write("drop", "scene=- session=%llu kind=%s peer=%s reason=handshake_timeout",
                     U(id_), SessionKindName(kind_), peer_text_.c_str());
    NoteClose(CloseReason::kHandshakeTimeout);
    Fatal(ErrorCode::kUnauthorized, "no Hello within the handshake timeout");
  } else if (reading_ && now - last_read_ms_ > limits.idle_timeout_ms) {
    ctx_.log().Write("drop", "scene=%s session=%llu kind=%s peer=%s reason=idle_timeout",
                     scene_name(), U(id_), SessionKindName(kind_), peer_text_.c_str());
    reading_ = false;
    BeginClose(CloseReason::kIdleTimeout);
  } else if (joined_ && reading_ && now - last_read_ms_ > limits.idle_timeout_ms / 3 &&
             now - last_ping_ms_ > limits.idle_timeout_ms / 3) {
    last_ping_ms_ = now;
    QueueControl(session::Ping{static_cast<uint64_t>(now), 0});
  }
  watchdog_.expires_after(std::chrono::milliseconds(std::clamp<int64_t>(
      std::min<int64_t>(limits.slow_consumer_ms, limits.idle_timeout_ms) / 4, 10, 1000)));
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
  TransportClose();
}

void Session::OnClosed() {
  if (closed_) return;
  closed_ = true;
  closing_ = true;
  watchdog_.cancel();
  throttle_timer_.cancel();
  NoteClose(CloseReason::kPeerGone);
  if (scene_) scene_->Leave(id_, close_reason_);
  scene_ = nullptr;
  control_.clear();
  scene_frames_.clear();
  Metrics& metrics = ctx_.metrics();
  Metrics::Add(metrics.sessions, -1);
  Metrics::Add(metrics.sessions_of(kind_), -1);
  Metrics::Add(metrics.sessions_closed);
  metrics.CountClose(close_reason_);
  ctx_.log().Write("close",
                   "scene=%s session=%llu kind=%s peer=%s reason=%s duration_ms=%lld "
                   "messages_in=%llu bytes_in=%llu bytes_out=%llu refusals=%llu",
                   scene_name(), U(id_), SessionKindName(kind_), peer_text_.c_str(),
                   CloseReasonName(close_reason_), static_cast<long long>(NowMs() - started_ms_),
                   U(messages_in_), U(bytes_in_), U(bytes_out_), U(refusals_));
  ctx_.UnregisterSession(id_);
}

}  // namespace scenecrdt::server
