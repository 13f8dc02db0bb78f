// SPDX-License-Identifier: Apache-2.0
// Owns the transport-independent session logic: validation, rate limiting, write batching,
// timeouts and closing.
#include "server/session.h"

#include <algorithm>
#include <cstdio>

#include "protocol/crdt_codec.h"
#include "server/scene.h"

namespace scenecrdt::server {

namespace {

struct CrdtCheck {
  ErrorCode code = ErrorCode::kOk;
  const char* text = "";
  bool fatal = false;
  uint32_t messages = 0;
};

// Everything about a client Crdt frame that does not depend on the scene state. A malformed
// stream is a protocol violation (fatal); a message the store would refuse refuses the frame.
CrdtCheck CheckCrdt(std::span<const uint8_t> data, const Limits& limits) {
  CrdtCheck check;
  protocol::DecodeOptions options;
  options.max_message_bytes = limits.max_message_bytes;
  options.reject_unknown_types = true;
  auto decoded = protocol::DecodeStream(data, options, [&](const protocol::CrdtMessage& m) {
    ++check.messages;
    if (check.code != ErrorCode::kOk) return;
    using protocol::MessageType;
    if (protocol::HasData(m.type) && m.data.size() > limits.max_payload_bytes) {
      check = {ErrorCode::kPayloadTooLarge, "a component payload is above the limit", false,
               check.messages};
    } else if (m.component == protocol::kTransformComponentId &&
               (m.type == MessageType::kPutComponent ||
                m.type == MessageType::kPutComponentNetwork)) {
      if (m.data.size() != protocol::Transform::kSize) {
        check = {ErrorCode::kBadTransformSize, "a Transform payload is not 44 bytes", false,
                 check.messages};
      } else if (!protocol::IsFinite(
                     protocol::LoadTransform(m.data.first<protocol::Transform::kSize>()))) {
        check = {ErrorCode::kNonFiniteTransform, "a Transform holds NaN or infinite floats", false,
                 check.messages};
      }
    } else if ((m.type == MessageType::kDeleteEntity ||
                m.type == MessageType::kDeleteEntityNetwork) &&
               protocol::IsReservedEntity(m.entity)) {
      check = {ErrorCode::kReservedEntity, "DELETE_ENTITY of a reserved entity number", false,
               check.messages};
    }
  });
  if (!decoded.has_value()) {
    return {decoded.error().code, "malformed DCL stream in a Crdt frame", true, check.messages};
  }
  return check;
}

}  // namespace

Session::Session(ServerContext& ctx, net::Strand strand, std::string path_scene)
    : ctx_(ctx),
      strand_(std::move(strand)),
      path_scene_(std::move(path_scene)),
      watchdog_(strand_) {}

Session::~Session() { Metrics::Add(ctx_.metrics().queued_bytes, -in_flight_bytes_); }

void Session::Start() {
  id_ = ctx_.RegisterSession(shared_from_this());
  Metrics::Add(ctx_.metrics().sessions, 1);
  Metrics::Add(ctx_.metrics().sessions_accepted);
  started_ms_ = last_read_ms_ = NowMs();
  tokens_ = ctx_.config().limits.message_burst;
  tokens_at_ms_ = started_ms_;
  net::asio::dispatch(strand_, [self = shared_from_this()] {
    self->Watchdog();
    self->TransportStart();
  });
}

void Session::ReadNext() {
  if (reading_ && !closing_) TransportRead();
}

void Session::OnMessage(std::span<const uint8_t> message) {
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
    if (error->fatal) BeginClose();  // the client says goodbye
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
  Scene* scene = ctx_.FindOrCreateScene(hello.scene);
  if (!scene) {
    Fatal(ErrorCode::kShuttingDown, "the server is stopping");
    return;
  }
  joined_ = true;
  scene_ = scene;
  can_write_ = role.value() == Role::kWrite;
  scene_->Join(shared_from_this(), can_write_, hello.resume_sequence);
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
  const Limits& limits = ctx_.config().limits;
  const CrdtCheck check = CheckCrdt(crdt.data, limits);
  if (check.fatal) {
    Fatal(check.code, check.text);
    return;
  }
  if (check.code != ErrorCode::kOk) {
    PostRefusal(check.code, check.text, crdt.frame_sequence);
    return;
  }
  // Token bucket over messages: a frame is admitted whole or refused whole.
  const int64_t now = NowMs();
  tokens_ =
      std::min<double>(limits.message_burst, tokens_ + static_cast<double>(now - tokens_at_ms_) *
                                                           limits.messages_per_second / 1000.0);
  tokens_at_ms_ = now;
  if (tokens_ < check.messages) {
    PostRefusal(ErrorCode::kRateLimited, "over the messages-per-second limit", crdt.frame_sequence);
    return;
  }
  tokens_ -= check.messages;
  scene_->Submit(id_, crdt.frame_sequence, std::vector<uint8_t>(crdt.data.begin(), crdt.data.end()),
                 check.messages);
}

void Session::QueueControl(const session::Frame& frame) {
  if (closed_ || close_after_flush_) return;
  if (control_.size() >= ctx_.config().limits.max_control_frames) {
    // The client does not read what it provokes (errors, pongs): drop it.
    Fatal(ErrorCode::kSlowConsumer, "too many unread control frames");
    return;
  }
  control_.push_back(MakeShared(session::BuildFrame(frame)));
  WriteNext();
}

void Session::Fatal(ErrorCode code, const char* text) {
  if (closed_ || close_after_flush_) return;
  ctx_.metrics().CountRefusal(code);
  reading_ = false;
  // The fatal Error goes out even when the control queue is full.
  control_.push_back(MakeShared(session::BuildFrame(session::ErrorFrame{code, text, 0, true})));
  close_after_flush_ = true;
  WriteNext();
}

void Session::PostJoined(session::Welcome welcome, std::vector<SharedFrame> state) {
  net::asio::post(strand_, [self = shared_from_this(), welcome, state = std::move(state)]() {
    if (self->closed_ || self->close_after_flush_) return;
    self->control_.push_back(MakeShared(session::BuildFrame(welcome)));
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
  net::asio::post(strand_, [self = shared_from_this(), frame_sequence] {
    if (self->closed_) return;
    self->ack_pending_ = std::max(self->ack_pending_.value_or(0), frame_sequence);
    self->WriteNext();
  });
}

void Session::PostRefusal(ErrorCode code, const char* text, uint64_t frame_sequence) {
  net::asio::dispatch(strand_, [self = shared_from_this(), code, text, frame_sequence] {
    self->ctx_.metrics().CountRefusal(code);
    self->QueueControl(session::ErrorFrame{code, text, frame_sequence, false});
  });
}

void Session::PostClose(ErrorCode code, std::string text) {
  net::asio::post(strand_, [self = shared_from_this(), code, text = std::move(text)] {
    if (self->closed_ || self->close_after_flush_) return;
    self->reading_ = false;
    self->control_.push_back(
        MakeShared(session::BuildFrame(session::ErrorFrame{code, text, 0, true})));
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
    if (close_after_flush_) BeginClose();
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
  Metrics::Add(ctx_.metrics().frames_out, in_flight_.size());
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
    BeginClose();
    return;
  }
  Metrics::Add(ctx_.metrics().bytes_out, bytes);
  if (in_flight_has_scene_ && scene_) {
    in_flight_has_scene_ = false;
    scene_->Ready(id_);
  }
  WriteNext();
}

void Session::OnReadError(const net::error_code& ec) {
  (void)ec;  // EOF, reset, cancelled: nothing to tell a peer that is gone
  reading_ = false;
  if (!close_after_flush_) BeginClose();
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
      BeginClose();
    }
    write_started_ms_ = now;
  } else if (closing_ && now - write_started_ms_ > limits.slow_consumer_ms) {
    // A graceful close that does not finish: cut it.
    TransportClose();
  }
  if (closing_) {
    // Only the two cuts above apply while closing.
  } else if (!joined_ && reading_ && now - started_ms_ > limits.handshake_timeout_ms) {
    Fatal(ErrorCode::kUnauthorized, "no Hello within the handshake timeout");
  } else if (reading_ && now - last_read_ms_ > limits.idle_timeout_ms) {
    reading_ = false;
    BeginClose();
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

void Session::BeginClose() {
  if (closing_ || closed_) return;
  closing_ = true;
  reading_ = false;
  write_started_ms_ = NowMs();
  if (scene_) scene_->Leave(id_);
  TransportClose();
}

void Session::OnClosed() {
  if (closed_) return;
  closed_ = true;
  closing_ = true;
  watchdog_.cancel();
  if (scene_) scene_->Leave(id_);
  scene_ = nullptr;
  control_.clear();
  scene_frames_.clear();
  Metrics::Add(ctx_.metrics().sessions, -1);
  Metrics::Add(ctx_.metrics().sessions_closed);
  ctx_.UnregisterSession(id_);
}

}  // namespace scenecrdt::server
