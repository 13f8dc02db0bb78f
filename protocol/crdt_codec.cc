// SPDX-License-Identifier: Apache-2.0
// Owns the DCL CRDT message decoder and encoder: the length rules and the checks, around the
// one layout (SerializeMessage in crdt_message.h) that reads and writes the fields.
#include "scenecrdt/protocol/crdt_codec.h"

#include <algorithm>

#include "scenecrdt/protocol/byte_order.h"

namespace scenecrdt::protocol {
namespace {

DecodeStep NeedMore(std::size_t have, std::size_t want) {
  DecodeStep step;
  step.kind = DecodeStep::Kind::kNeedMore;
  step.size = static_cast<uint32_t>(want - have);
  return step;
}

// Calls f.template operator()<kType>() with `type` as a compile-time constant (MessageType{0}
// standing for every unknown type), so each instance of the layout folds to constants. Inlined
// always: a call of its own costs the encoder about 2 instructions per message.
template <class F>
[[gnu::always_inline]] inline decltype(auto) WithStaticType(MessageType type, F&& f) {
  switch (type) {
    case MessageType::kPutComponent:
      return f.template operator()<MessageType::kPutComponent>();
    case MessageType::kDeleteComponent:
      return f.template operator()<MessageType::kDeleteComponent>();
    case MessageType::kDeleteEntity:
      return f.template operator()<MessageType::kDeleteEntity>();
    case MessageType::kAppendValue:
      return f.template operator()<MessageType::kAppendValue>();
    case MessageType::kPutComponentNetwork:
      return f.template operator()<MessageType::kPutComponentNetwork>();
    case MessageType::kDeleteComponentNetwork:
      return f.template operator()<MessageType::kDeleteComponentNetwork>();
    case MessageType::kDeleteEntityNetwork:
      return f.template operator()<MessageType::kDeleteEntityNetwork>();
    default:
      return f.template operator()<MessageType{0}>();
  }
}

// The length rules of one type, from its layout: a fixed-size type declares exactly its size,
// a type with data its fixed fields plus dataLength, an unknown type anything (kType is
// MessageType{0} for every unknown type). Then the layout reads the message. One instance per
// type, so every size and offset is a compile-time constant, as in the inline PUT fast path.
template <MessageType kType>
Result<DecodeStep> DecodeAs(std::span<const uint8_t> input, uint32_t length, MessageType type,
                            const DecodeOptions& options, uint64_t offset) {
  constexpr MessageLayout kLayout = LayoutOf(kType);
  constexpr uint32_t kBase = kLayout.base_size;
  const std::size_t avail = input.size();
  uint32_t wire_size = length;
  bool legacy = false;
  if constexpr (!IsKnownType(kType)) {
    if (options.reject_unknown_types) {
      return MakeError(ErrorCode::kUnknownMessageType, "unknown message type", offset);
    }
  } else if constexpr (!kLayout.HasPayload()) {
    if (kType == MessageType::kDeleteEntityNetwork &&
        length == kLegacyDeleteEntityNetworkDeclaredSize) {
      wire_size = kBase;  // old @dcl/ecs: declared 12, wrote 16
      legacy = true;
    } else if (length != kBase) {
      return MakeError(ErrorCode::kLengthMismatch,
                       "declared length differs from the fixed size of this message type", offset);
    }
  } else {
    if (length < kBase) {
      return MakeError(ErrorCode::kLengthMismatch,
                       "declared length is shorter than this message type's fixed fields", offset);
    }
    if (avail < kBase) return NeedMore(avail, kBase);
    const uint32_t data_length = LoadU32Le(input.data() + kLayout.OffsetOf(Field::kData));
    if (data_length != length - kBase) {
      return MakeError(ErrorCode::kDataLengthMismatch,
                       "dataLength does not match the declared message length", offset);
    }
  }
  if (avail < wire_size) return NeedMore(avail, wire_size);

  DecodeStep step;
  step.kind = DecodeStep::Kind::kMessage;
  step.size = wire_size;
  detail::ReadStream read(input.data(), wire_size, legacy);
  SerializeMessage(read, IsKnownType(kType) ? kType : type, step.message);
  return step;
}

}  // namespace

Result<DecodeStep> DecodeMessage(std::span<const uint8_t> input, const DecodeOptions& options,
                                 uint64_t offset) {
  const std::size_t avail = input.size();
  const uint8_t* p = input.data();
  if (avail < 4) return NeedMore(avail, kHeaderSize);
  const uint32_t length = LoadU32Le(p + kLengthOffset);
  if (length < kHeaderSize) {
    return MakeError(ErrorCode::kLengthTooSmall,
                     "declared message length is below the 8-byte header", offset);
  }
  const uint32_t max_bytes = std::max(options.max_message_bytes, kMinMaxMessageBytes);
  if (length > max_bytes) {
    return MakeError(ErrorCode::kLengthTooLarge,
                     "declared message length is above the configured maximum", offset);
  }
  if (avail < kHeaderSize) return NeedMore(avail, kHeaderSize);
  const auto type = static_cast<MessageType>(LoadU32Le(p + kTypeOffset));
  return WithStaticType(type, [&]<MessageType kType>() {
    return DecodeAs<kType>(input, length, type, options, offset);
  });
}

void CrdtStreamDecoder::Reset() {
  pending_.clear();
  consumed_ = 0;
  bytes_needed_ = 0;
  failed_ = false;
  error_ = {};
}

std::size_t EncodeMessage(const CrdtMessage& m, std::span<uint8_t> out) {
  return WithStaticType(m.type, [&]<MessageType kType>() {
    constexpr MessageLayout kLayout = LayoutOf(kType);  // EncodedSize(m), folded
    const std::size_t size = kLayout.base_size + (kLayout.HasPayload() ? m.data.size() : 0);
    SCENECRDT_CHECK(out.size() >= size, "EncodeMessage: output buffer too small");
    SCENECRDT_CHECK(size <= 0xFFFFFFFFu, "EncodeMessage: message above 4 GiB");
    detail::WriteStream<> write(out.data(), static_cast<uint32_t>(size));
    SerializeMessage(write, IsKnownType(kType) ? kType : m.type, m);
    SCENECRDT_DCHECK(write.written() == size, "EncodeMessage: layout and EncodedSize disagree");
    return size;
  });
}

void AppendMessage(const CrdtMessage& m, std::vector<uint8_t>& out) {
  const std::size_t at = out.size();
  out.resize(at + EncodedSize(m));
  EncodeMessage(m, std::span<uint8_t>(out).subspan(at));
}

void AppendTransformPut(EntityId entity, uint32_t timestamp, const Transform& t,
                        std::vector<uint8_t>& out) {
  constexpr MessageType kType = MessageType::kPutComponent;
  constexpr uint32_t kDataAt = BaseSize(kType);  // the payload follows the fixed fields
  constexpr uint32_t kSize = kDataAt + Transform::kSize;
  const std::size_t at = out.size();
  out.resize(at + kSize);
  uint8_t* p = out.data() + at;
  // The layout writes the header and fields around the payload's place (it copies nothing
  // there); the Transform is then stored straight into it.
  const std::span<uint8_t, Transform::kSize> payload(p + kDataAt, Transform::kSize);
  const CrdtMessage m{kType, entity, kTransformComponentId, timestamp, 0, payload};
  detail::WriteStream</*kPayloadInPlace=*/true> write(p, kSize);
  SerializeMessage(write, kType, m);
  StoreTransform(t, payload);
}

}  // namespace scenecrdt::protocol
