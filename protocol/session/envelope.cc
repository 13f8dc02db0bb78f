// SPDX-License-Identifier: Apache-2.0
// Owns the translation between session frames and the flatbuffers Envelope (envelope.fbs).
#include "scenecrdt/protocol/session/envelope.h"

#include <flatbuffers/flatbuffers.h>

#include <cstdint>
#include <cstring>
#include <type_traits>

#include "envelope_generated.h"

namespace scenecrdt::session {

namespace {

// Verifier limits: the schema is two levels deep and one envelope holds two tables.
constexpr flatbuffers::uoffset_t kMaxDepth = 8;
constexpr flatbuffers::uoffset_t kMaxTables = 16;

flatbuffers::Offset<flatbuffers::String> OptionalString(flatbuffers::FlatBufferBuilder& b,
                                                        const std::string& s) {
  return s.empty() ? 0 : b.CreateString(s);
}

// BuildFrame's builder: one per thread, cleared between frames so that its buffer is reused
// (a frame costs one allocation, its own vector, once the builder is warm). A builder that
// grew past kKeptBuilderBytes for a large frame (a state chunk) gives its memory back.
constexpr std::size_t kKeptBuilderBytes = 64 * 1024;

flatbuffers::FlatBufferBuilder& ThreadBuilder() {
  thread_local flatbuffers::FlatBufferBuilder builder(1024);
  builder.Clear();
  return builder;
}

}  // namespace

std::vector<uint8_t> BuildFrame(const Frame& frame) {
  flatbuffers::FlatBufferBuilder& b = ThreadBuilder();
  fb::Payload type = fb::Payload::NONE;
  flatbuffers::Offset<void> payload;
  std::visit(
      [&](const auto& f) {
        using F = std::decay_t<decltype(f)>;
        if constexpr (std::is_same_v<F, Hello>) {
          auto scene = b.CreateString(f.scene);
          auto token = OptionalString(b, f.token);
          auto name = OptionalString(b, f.client_name);
          payload = fb::CreateHello(b, scene, token, f.resume_sequence.has_value(),
                                    f.resume_sequence.value_or(0), name,
                                    static_cast<uint8_t>(f.compression), f.zstd_frames)
                        .Union();
          type = fb::Payload::Hello;
        } else if constexpr (std::is_same_v<F, Welcome>) {
          payload = fb::CreateWelcome(b, f.session_id, f.scene_sequence, f.resumed, f.can_write,
                                      static_cast<uint8_t>(f.compression), f.max_frame_bytes)
                        .Union();
          type = fb::Payload::Welcome;
        } else if constexpr (std::is_same_v<F, Crdt>) {
          auto data = b.CreateVector(f.data.data(), f.data.size());
          payload = fb::CreateCrdt(b, f.frame_sequence, f.scene_sequence, f.is_state, data).Union();
          type = fb::Payload::Crdt;
        } else if constexpr (std::is_same_v<F, Ack>) {
          payload = fb::CreateAck(b, f.frame_sequence).Union();
          type = fb::Payload::Ack;
        } else if constexpr (std::is_same_v<F, ErrorFrame>) {
          auto text = OptionalString(b, f.text);
          payload =
              fb::CreateError(b, static_cast<uint16_t>(f.code), text, f.frame_sequence, f.fatal)
                  .Union();
          type = fb::Payload::Error;
        } else if constexpr (std::is_same_v<F, Ping>) {
          payload = fb::CreatePing(b, f.nonce, f.sent_us).Union();
          type = fb::Payload::Ping;
        } else if constexpr (std::is_same_v<F, Pong>) {
          payload = fb::CreatePong(b, f.nonce, f.sent_us).Union();
          type = fb::Payload::Pong;
        } else if constexpr (std::is_same_v<F, SetInterest>) {
          payload = fb::CreateSetInterest(b, static_cast<uint8_t>(f.mode), f.center_x, f.center_y,
                                          f.center_z, f.follow_entity, f.radius,
                                          f.hysteresis.has_value(), f.hysteresis.value_or(0.0f))
                        .Union();
          type = fb::Payload::SetInterest;
        } else if constexpr (std::is_same_v<F, InterestSet>) {
          payload = fb::CreateInterestSet(b, static_cast<uint8_t>(f.mode), f.radius, f.hysteresis,
                                          f.clamped)
                        .Union();
          type = fb::Payload::InterestSet;
        } else if constexpr (std::is_same_v<F, OutOfView>) {
          auto entities = b.CreateVector(f.entities);
          payload = fb::CreateOutOfView(b, f.scene_sequence, entities).Union();
          type = fb::Payload::OutOfView;
        } else if constexpr (std::is_same_v<F, TransferOwnership>) {
          auto to = OptionalString(b, f.to);
          payload = fb::CreateTransferOwnership(b, f.entity, to).Union();
          type = fb::Payload::TransferOwnership;
        } else {
          payload = fb::CreateRefusal(b, f.frame_sequence, f.entity, f.component, f.message_type,
                                      static_cast<uint16_t>(f.code))
                        .Union();
          type = fb::Payload::Refusal;
        }
      },
      frame);
  auto root = fb::CreateEnvelope(b, kProtocolVersion, type, payload);
  b.FinishSizePrefixed(root, fb::EnvelopeIdentifier());
  std::vector<uint8_t> bytes(b.GetBufferPointer(), b.GetBufferPointer() + b.GetSize());
  if (b.GetSize() > kKeptBuilderBytes) b.Reset();
  return bytes;
}

std::optional<uint64_t> PeekFrameSize(std::span<const uint8_t> bytes) {
  if (bytes.size() < kSizePrefixBytes) return std::nullopt;
  const uint64_t body = uint64_t{bytes[0]} | (uint64_t{bytes[1]} << 8) |
                        (uint64_t{bytes[2]} << 16) | (uint64_t{bytes[3]} << 24);
  return body + kSizePrefixBytes;
}

bool HasFrameIdentifier(std::span<const uint8_t> bytes) {
  constexpr std::size_t kIdentifierAt = kSizePrefixBytes + sizeof(flatbuffers::uoffset_t);
  if (bytes.size() < kIdentifierAt + flatbuffers::kFileIdentifierLength) return false;
  return std::memcmp(bytes.data() + kIdentifierAt, fb::EnvelopeIdentifier(),
                     flatbuffers::kFileIdentifierLength) == 0;
}

bool IsValidSceneName(std::string_view name) {
  if (name.empty() || name.size() > kMaxSceneNameBytes || name == "." || name == "..") {
    return false;
  }
  for (char c : name) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    c == '_' || c == '-' || c == '.';
    if (!ok) return false;
  }
  return true;
}

Result<Frame> ReadFrame(std::span<const uint8_t> frame, const ReadOptions& options) {
  const auto invalid = [](const char* why) { return MakeError(ErrorCode::kEnvelopeInvalid, why); };
  // flatbuffers reads scalars in place: the caller's buffer must be 8-byte aligned (any
  // std::vector or heap buffer is). This is a property of our code, not of the peer's bytes.
  SCENECRDT_CHECK(reinterpret_cast<std::uintptr_t>(frame.data()) % 8 == 0,
                  "ReadFrame needs an 8-byte aligned buffer");
  if (frame.size() > options.max_frame_bytes) {
    return MakeError(ErrorCode::kFrameTooLarge, "frame above the configured maximum");
  }
  const auto size = PeekFrameSize(frame);
  if (!size || *size != frame.size()) return invalid("size prefix does not match the frame");
  flatbuffers::Verifier::Options vopts;
  vopts.max_depth = kMaxDepth;
  vopts.max_tables = kMaxTables;
  vopts.check_alignment = true;
  flatbuffers::Verifier verifier(frame.data(), frame.size(), vopts);
  if (!fb::VerifySizePrefixedEnvelopeBuffer(verifier)) {
    return invalid("frame failed flatbuffers verification");
  }
  const fb::Envelope* env = fb::GetSizePrefixedEnvelope(frame.data());
  if (env->version() != kProtocolVersion) {
    return MakeError(ErrorCode::kProtocolVersion, "unsupported envelope protocol version");
  }
  // The Verifier accepts a union whose type is set but whose table is absent: every
  // payload_as_X() below would then return nullptr.
  if (env->payload() == nullptr) return invalid("envelope payload type set without a payload");
  const auto text = [](const flatbuffers::String* s) {
    return s ? std::string(s->string_view()) : std::string();
  };
  switch (env->payload_type()) {
    case fb::Payload::Hello: {
      const fb::Hello* h = env->payload_as_Hello();
      Hello out;
      if (!h->scene() || !IsValidSceneName(h->scene()->string_view())) {
        return invalid("Hello.scene missing or not a valid scene name");
      }
      if (h->token() && h->token()->size() > kMaxTokenBytes) return invalid("Hello.token too long");
      if (h->client_name() && h->client_name()->size() > kMaxSceneNameBytes) {
        return invalid("Hello.client_name too long");
      }
      out.scene = text(h->scene());
      out.token = text(h->token());
      out.client_name = text(h->client_name());
      if (h->has_resume()) out.resume_sequence = h->resume_sequence();
      // A mode this build does not know reads as none: the server then answers plain.
      out.compression = h->compression() == static_cast<uint8_t>(Compression::kZstd)
                            ? Compression::kZstd
                            : Compression::kNone;
      out.zstd_frames = h->zstd_frames();
      return Frame(std::move(out));
    }
    case fb::Payload::Welcome: {
      const fb::Welcome* w = env->payload_as_Welcome();
      if (w->compression() > static_cast<uint8_t>(Compression::kZstdFrames)) {
        return invalid("Welcome.compression names an unknown mode");
      }
      if (w->max_frame_bytes() != 0 && w->max_frame_bytes() < kMinServerMaxFrameBytes) {
        return invalid("Welcome.max_frame_bytes below the smallest frame limit (64 bytes)");
      }
      return Frame(Welcome{w->session_id(), w->scene_sequence(), w->resumed(), w->can_write(),
                           static_cast<Compression>(w->compression()), w->max_frame_bytes()});
    }
    case fb::Payload::Crdt: {
      const fb::Crdt* c = env->payload_as_Crdt();
      Crdt out{c->frame_sequence(), c->scene_sequence(), c->is_state(), {}};
      if (c->data()) out.data = std::span<const uint8_t>(c->data()->data(), c->data()->size());
      return Frame(out);
    }
    case fb::Payload::Ack:
      return Frame(Ack{env->payload_as_Ack()->frame_sequence()});
    case fb::Payload::Error: {
      const fb::Error* e = env->payload_as_Error();
      if (e->text() && e->text()->size() > kMaxErrorTextBytes)
        return invalid("Error.text too long");
      return Frame(ErrorFrame{static_cast<ErrorCode>(e->code()), text(e->text()),
                              e->frame_sequence(), e->fatal()});
    }
    case fb::Payload::Ping: {
      const fb::Ping* p = env->payload_as_Ping();
      return Frame(Ping{p->nonce(), p->sent_us()});
    }
    case fb::Payload::Pong: {
      const fb::Pong* p = env->payload_as_Pong();
      return Frame(Pong{p->nonce(), p->sent_us()});
    }
    case fb::Payload::SetInterest: {
      // Values are range-checked by the server (kInvalidInterest, non-fatal): only the mode
      // is the envelope's business.
      const fb::SetInterest* i = env->payload_as_SetInterest();
      if (i->mode() > static_cast<uint8_t>(InterestMode::kFollow)) {
        return invalid("SetInterest.mode names an unknown mode");
      }
      SetInterest out;
      out.mode = static_cast<InterestMode>(i->mode());
      out.center_x = i->center_x();
      out.center_y = i->center_y();
      out.center_z = i->center_z();
      out.follow_entity = i->follow_entity();
      out.radius = i->radius();
      if (i->has_hysteresis()) out.hysteresis = i->hysteresis();
      return Frame(out);
    }
    case fb::Payload::InterestSet: {
      const fb::InterestSet* i = env->payload_as_InterestSet();
      if (i->mode() > static_cast<uint8_t>(InterestMode::kFollow)) {
        return invalid("InterestSet.mode names an unknown mode");
      }
      return Frame(InterestSet{static_cast<InterestMode>(i->mode()), i->radius(), i->hysteresis(),
                               i->clamped()});
    }
    case fb::Payload::OutOfView: {
      const fb::OutOfView* o = env->payload_as_OutOfView();
      OutOfView out;
      out.scene_sequence = o->scene_sequence();
      if (o->entities()) {
        if (o->entities()->size() > kMaxOutOfViewEntities) {
          return invalid("OutOfView names too many entities");
        }
        out.entities.assign(o->entities()->begin(), o->entities()->end());
      }
      return Frame(std::move(out));
    }
    case fb::Payload::Refusal: {
      const fb::Refusal* r = env->payload_as_Refusal();
      return Frame(Refusal{r->frame_sequence(), r->entity(), r->component(), r->message_type(),
                           static_cast<ErrorCode>(r->code())});
    }
    case fb::Payload::TransferOwnership: {
      const fb::TransferOwnership* t = env->payload_as_TransferOwnership();
      if (t->to() && t->to()->size() > kMaxPrincipalBytes) {
        return invalid("TransferOwnership.to too long");
      }
      return Frame(TransferOwnership{t->entity(), text(t->to())});
    }
    default:
      return invalid("envelope has no payload or an unknown payload type");
  }
}

}  // namespace scenecrdt::session
