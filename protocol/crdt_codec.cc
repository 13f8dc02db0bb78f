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

  // The length rules follow from the layout: fixed-size types declare exactly their size,
  // types with data their fixed fields plus dataLength, unknown types anything.
  const MessageLayout& layout = LayoutOf(type);
  const uint32_t base = layout.base_size;
  uint32_t wire_size = length;
  bool legacy = false;
  if (!IsKnownType(type)) {
    if (options.reject_unknown_types) {
      return MakeError(ErrorCode::kUnknownMessageType, "unknown message type", offset);
    }
  } else if (!layout.HasPayload()) {
    if (type == MessageType::kDeleteEntityNetwork &&
        length == kLegacyDeleteEntityNetworkDeclaredSize) {
      wire_size = base;  // old @dcl/ecs: declared 12, wrote 16
      legacy = true;
    } else if (length != base) {
      return MakeError(ErrorCode::kLengthMismatch,
                       "declared length differs from the fixed size of this message type", offset);
    }
  } else {
    if (length < base) {
      return MakeError(ErrorCode::kLengthMismatch,
                       "declared length is shorter than this message type's fixed fields", offset);
    }
    if (avail < base) return NeedMore(avail, base);
    const uint32_t data_length = LoadU32Le(p + layout.OffsetOf(Field::kData));
    if (data_length != length - base) {
      return MakeError(ErrorCode::kDataLengthMismatch,
                       "dataLength does not match the declared message length", offset);
    }
  }
  if (avail < wire_size) return NeedMore(avail, wire_size);

  DecodeStep step;
  step.kind = DecodeStep::Kind::kMessage;
  step.size = wire_size;
  detail::ReadStream read(p, wire_size, legacy);
  SerializeMessage(read, type, step.message);
  return step;
}

void CrdtStreamDecoder::Reset() {
  pending_.clear();
  consumed_ = 0;
  bytes_needed_ = 0;
  failed_ = false;
  error_ = {};
}

std::size_t EncodeMessage(const CrdtMessage& m, std::span<uint8_t> out) {
  const std::size_t size = EncodedSize(m);
  SCENECRDT_CHECK(out.size() >= size, "EncodeMessage: output buffer too small");
  SCENECRDT_CHECK(size <= 0xFFFFFFFFu, "EncodeMessage: message above 4 GiB");
  detail::WriteStream write(out.data(), static_cast<uint32_t>(size));
  SerializeMessage(write, m.type, m);
  SCENECRDT_DCHECK(write.written() == size, "EncodeMessage: layout and EncodedSize disagree");
  return size;
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
  // The Transform is stored in place, then the layout writes the rest around it.
  StoreTransform(t, std::span<uint8_t, Transform::kSize>(p + kDataAt, Transform::kSize));
  const CrdtMessage m{kType,     entity, kTransformComponentId,
                      timestamp, 0,      std::span<const uint8_t>(p + kDataAt, Transform::kSize)};
  detail::WriteStream write(p, kSize);
  SerializeMessage(write, kType, m);
}

}  // namespace scenecrdt::protocol
