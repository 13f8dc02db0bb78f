// SPDX-License-Identifier: Apache-2.0
// Owns the envelope protocol's frame handling, control queue, acks and timeouts.
#include "scenecrdt/server/sessions/envelope_protocol.h"

#include <algorithm>

#include "scenecrdt/runtime/crdt_store.h"
#include "scenecrdt/server/scene/scene.h"
#include "scenecrdt/server/sessions/close_codes.h"
#include "scenecrdt/server/sessions/session.h"

namespace scenecrdt::server {

namespace {

// Clients assume this limit before the Welcome and from servers that do not send it.
static_assert(Limits{}.max_frame_bytes == session::kDefaultServerMaxFrameBytes,
              "docs/PROTOCOL.md documents the default frame limit clients assume");

}  // namespace

EnvelopeProtocol::EnvelopeProtocol(ServerContext& ctx, std::string path_scene)
    : ctx_(ctx), path_scene_(std::move(path_scene)) {}

void EnvelopeProtocol::OnMessage(std::span<const uint8_t> message, bool text) {
  // A WebSocket message carries one or more complete frames (docs/PROTOCOL.md section 2), as
  // a binary message: a text message is not the envelope, whatever its bytes.
  if (text) {
    session().Fatal(ErrorCode::kBadRequest,
                    "text WebSocket message: send envelope frames as binary");
    return;
  }
  while (!message.empty() && session().reading()) {
    const auto size = session::PeekFrameSize(message);
    if (!size || *size > message.size()) {
      session().Fatal(ErrorCode::kEnvelopeInvalid, "a WebSocket message must hold whole frames");
      return;
    }
    if (*size > session().limits().max_frame_bytes) {
      session().Fatal(ErrorCode::kFrameTooLarge, "frame above the server's limit");
      return;
    }
    if (*size == message.size() && reinterpret_cast<uintptr_t>(message.data()) % 8 == 0) {
      OnFrame(message);  // one whole frame, already aligned (framed TCP): read in place
      return;
    }
    // Copy into the aligned frame buffer (flatbuffers reads scalars in place).
    frame_buffer_.assign(message.begin(), message.begin() + static_cast<std::ptrdiff_t>(*size));
    message = message.subspan(*size);
    OnFrame(frame_buffer_);
  }
}

void EnvelopeProtocol::OnFrame(std::span<const uint8_t> frame) {
  if (!session().reading() || session().closing()) return;
  Metrics::Add(ctx_.metrics().frames_in);
  session().NoteInput(frame.size());
  session::ReadOptions options;
  options.max_frame_bytes = session().limits().max_frame_bytes;
  auto read = session::ReadFrame(frame, options);
  if (!read.has_value()) {
    session().Fatal(read.error().code, read.error().detail);
    return;
  }
  const session::Frame& f = read.value();
  if (const auto* hello = std::get_if<session::Hello>(&f)) {
    HandleHello(*hello);
  } else if (const auto* crdt = std::get_if<session::Crdt>(&f)) {
    HandleCrdt(*crdt);
  } else if (const auto* interest = std::get_if<session::SetInterest>(&f)) {
    HandleSetInterest(*interest);
  } else if (const auto* ping = std::get_if<session::Ping>(&f)) {
    QueueControl(session::Pong{ping->nonce, ping->sent_us});
  } else if (const auto* transfer = std::get_if<session::TransferOwnership>(&f)) {
    if (!session().joined()) {
      session().Fatal(ErrorCode::kUnexpectedPayload, "TransferOwnership before Hello");
      return;
    }
    session().scene()->Transfer(session().id(), transfer->entity, transfer->to);
  } else if (std::get_if<session::Pong>(&f)) {
    // NoteInput already moved the idle clock: that is all a Pong is for.
  } else if (const auto* error = std::get_if<session::ErrorFrame>(&f)) {
    if (error->fatal) session().BeginClose(CloseReason::kClientClosed);  // the client says goodbye
  } else {
    session().Fatal(
        ErrorCode::kUnexpectedPayload,
        "clients send Hello, Crdt, SetInterest, Ping, Pong, Error or TransferOwnership");
  }
}

void EnvelopeProtocol::HandleHello(const session::Hello& hello) {
  if (session().joined()) {
    session().Fatal(ErrorCode::kUnexpectedPayload, "Hello sent twice");
    return;
  }
  if (!path_scene_.empty() && hello.scene != path_scene_) {
    session().Fatal(ErrorCode::kBadRequest, "Hello.scene differs from the WebSocket path's scene");
    return;
  }
  auto grant = ctx_.auth().CheckNow(hello.token, hello.scene);
  if (!grant.has_value()) {
    session().Fatal(ErrorCode::kUnauthorized, grant.error().detail);
    return;
  }
  // zstd frames when offered (compressed once per scene), else the zstd stream when offered.
  const bool compress = ctx_.config().compression && session().transport().CanCompressStream();
  if (compress && hello.zstd_frames && ctx_.config().zstd_frames) {
    mode_ = session::Compression::kZstdFrames;
  } else if (compress && hello.compression == session::Compression::kZstd) {
    mode_ = session::Compression::kZstd;
  }
  session().SetZstdFrames(mode_ == session::Compression::kZstdFrames);
  session().NoteGrant(grant.value(), hello.token, hello.scene);
  session().JoinScene(hello.scene, CanWrite(grant->role), hello.resume_sequence, interest_);
}

void EnvelopeProtocol::HandleSetInterest(const session::SetInterest& interest) {
  bool clamped = false;
  auto spec = ResolveInterest(interest, session().limits().max_interest_radius_m, clamped);
  if (!spec.has_value()) {
    // Non-fatal: the interest in effect stays.
    Refuse(spec.error().code, spec.error().detail, 0, 0);
    return;
  }
  interest_.reset();
  if (spec->mode != session::InterestMode::kNone) interest_ = *spec;
  QueueControl(session::InterestSet{spec->mode, static_cast<float>(spec->radius),
                                    static_cast<float>(spec->hysteresis), clamped});
  if (session().joined()) session().scene()->SetInterest(session().id(), interest_);
}

void EnvelopeProtocol::HandleCrdt(const session::Crdt& crdt) {
  if (!session().joined()) {
    session().Fatal(ErrorCode::kUnexpectedPayload, "Crdt before Hello");
    return;
  }
  if (!session().can_write()) {
    Refuse(ErrorCode::kReadOnly, "this session's token is read-only", crdt.frame_sequence, 0);
    return;
  }
  // The frame's one decode: a malformed stream is a protocol violation (fatal); a message the
  // store would refuse refuses the frame.
  runtime::Admission admission = runtime::CrdtStore::Admit(
      crdt.data, session().scene()->store_limits(),
      {session().limits().max_message_bytes, runtime::AdmitMode::kWholeChunk});
  if (admission.verdict == runtime::Admission::Verdict::kMalformed) {
    session().Fatal(admission.error.code, "malformed DCL stream in a Crdt frame");
    return;
  }
  if (admission.verdict == runtime::Admission::Verdict::kRefused) {
    Refuse(admission.error.code, admission.error.detail, crdt.frame_sequence, 0);
    return;
  }
  // Token bucket over messages: a frame is admitted whole or refused whole.
  if (session().RefillTokens() < admission.messages) {
    Refuse(ErrorCode::kRateLimited, "over the messages-per-second limit", crdt.frame_sequence, 0);
    return;
  }
  (void)session().SpendTokens(admission.messages);
  session().CountMessagesIn(admission.messages);
  session().scene()->Submit(session().id(), crdt.frame_sequence, std::move(admission.batch));
}

void EnvelopeProtocol::Refuse(ErrorCode code, const char* text, uint64_t frame_sequence,
                              uint64_t messages) {
  session().LogRefusal(code, text, false, messages);
  QueueControl(session::ErrorFrame{code, text, frame_sequence, false});
}

void EnvelopeProtocol::OnWriteRefused(const session::Refusal& refusal) {
  session().LogRefusal(refusal.code, "a write refused by the scene's authority (docs/AUTHORITY.md)",
                       false, 1);
  QueueControl(refusal);
}

void EnvelopeProtocol::QueueControl(const session::Frame& frame) {
  if (session().ending()) return;
  if (control_.size() >= session().limits().max_control_frames) {
    // The client does not read what it provokes (errors, pongs): drop it.
    session().Fatal(ErrorCode::kSlowConsumer, "too many unread control frames");
    return;
  }
  control_.push_back(MakeShared(session::BuildFrame(frame)));
  session().WriteNext();
}

void EnvelopeProtocol::QueueGoodbye(ErrorCode code, std::string_view text) {
  // A peer that spoke another language is answered in it (framed TCP: HTTP 400).
  if (SharedFrame foreign = session().transport().ForeignGoodbye(code, text)) {
    QueueRaw(std::move(foreign));
    return;
  }
  // Over WebSocket the close status says it too (never 1000 "normal" after a fatal Error).
  session().SetCloseStatus(WebSocketCloseCode(CloseCodeProtocol::kEnvelope, code), text);
  // The fatal Error goes out even when the control queue is full.
  QueueRaw(MakeShared(session::BuildFrame(session::ErrorFrame{code, std::string(text), 0, true})));
}

void EnvelopeProtocol::OnAck(uint64_t frame_sequence) {
  ack_pending_ = std::max(ack_pending_.value_or(0), frame_sequence);
  session().WriteNext();
}

void EnvelopeProtocol::TakeControlFrames(std::vector<SharedFrame>& out) {
  out.insert(out.end(), control_.begin(), control_.end());
  control_.clear();
  if (ack_pending_) {
    out.push_back(MakeShared(session::BuildFrame(session::Ack{*ack_pending_})));
    ack_pending_.reset();
    Metrics::Add(ctx_.metrics().acks_out);
  }
}

void EnvelopeProtocol::OnJoined(const session::Welcome& welcome) {
  session::Welcome w = welcome;
  w.compression = mode_;
  // Clients split what they send under it (docs/PROTOCOL.md section 2, "Frame limit").
  w.max_frame_bytes = session().limits().max_frame_bytes;
  SharedFrame frame = MakeShared(session::BuildFrame(w));
  control_.push_back(frame);
  if (mode_ == session::Compression::kZstd) session().transport().StartStreamCompression(frame);
}

void EnvelopeProtocol::OnWriteStarted(std::size_t frames) {
  Metrics::Add(ctx_.metrics().frames_out, frames);
}

void EnvelopeProtocol::OnWatchdog(int64_t now_ms) {
  const Limits& l = session().limits();
  if (!session().joined() && session().reading() &&
      now_ms - session().started_ms() > l.handshake_timeout_ms) {
    ctx_.log().Write(LogLevel::kWarn, "drop",
                     "scene=- session=%llu kind=%s peer=%s reason=handshake_timeout",
                     static_cast<unsigned long long>(session().id()),
                     SessionKindName(session().kind()), session().peer_text().c_str());
    session().NoteClose(CloseReason::kHandshakeTimeout);
    session().Fatal(ErrorCode::kUnauthorized, "no Hello within the handshake timeout");
  } else if (session().reading() && now_ms - session().last_read_ms() > l.idle_timeout_ms) {
    ctx_.log().Write(LogLevel::kWarn, "drop",
                     "scene=%s session=%llu kind=%s peer=%s reason=idle_timeout",
                     session().scene_name(), static_cast<unsigned long long>(session().id()),
                     SessionKindName(session().kind()), session().peer_text().c_str());
    session().StopReading();
    session().BeginClose(CloseReason::kIdleTimeout);
  } else if (session().joined() && session().reading() &&
             now_ms - session().last_read_ms() > l.idle_timeout_ms / 3 &&
             now_ms - last_ping_ms_ > l.idle_timeout_ms / 3) {
    last_ping_ms_ = now_ms;
    QueueControl(session::Ping{static_cast<uint64_t>(now_ms), 0});
  }
}

void EnvelopeProtocol::OnClosed() { control_.clear(); }

}  // namespace scenecrdt::server
