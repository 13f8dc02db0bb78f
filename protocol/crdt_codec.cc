// SPDX-License-Identifier: Apache-2.0
// Owns the DCL CRDT message decoder and encoder (little-endian u32 fields, docs/PROTOCOL.md).
#include "scenecrdt/protocol/crdt_codec.h"

#include <algorithm>
#include <cstring>

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
  const uint32_t length = LoadU32Le(p);
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
  const auto type = static_cast<MessageType>(LoadU32Le(p + 4));

  uint32_t wire_size = length;
  bool legacy = false;
  switch (type) {
    case MessageType::kDeleteComponent:
    case MessageType::kDeleteEntity:
    case MessageType::kDeleteComponentNetwork:
      if (length != BaseSize(type)) {
        return MakeError(ErrorCode::kLengthMismatch,
                         "declared length differs from the fixed size of this message type",
                         offset);
      }
      break;
    case MessageType::kDeleteEntityNetwork:
      if (length == kLegacyDeleteEntityNetworkDeclaredSize) {
        wire_size = kDeleteEntityNetworkSize;  // old @dcl/ecs: declared 12, wrote 16
        legacy = true;
      } else if (length != kDeleteEntityNetworkSize) {
        return MakeError(ErrorCode::kLengthMismatch,
                         "declared length differs from the fixed size of this message type",
                         offset);
      }
      break;
    case MessageType::kPutComponent:
    case MessageType::kAppendValue:
    case MessageType::kPutComponentNetwork: {
      const uint32_t base = BaseSize(type);
      if (length < base) {
        return MakeError(ErrorCode::kLengthMismatch,
                         "declared length is shorter than this message type's fixed fields",
                         offset);
      }
      if (avail < base) return NeedMore(avail, std::min<std::size_t>(length, base));
      const uint32_t data_length = LoadU32Le(p + base - 4);
      if (data_length != length - base) {
        return MakeError(ErrorCode::kDataLengthMismatch,
                         "dataLength does not match the declared message length", offset);
      }
      break;
    }
    default:
      if (options.reject_unknown_types) {
        return MakeError(ErrorCode::kUnknownMessageType, "unknown message type", offset);
      }
      break;
  }
  if (avail < wire_size) return NeedMore(avail, wire_size);

  DecodeStep step;
  step.kind = DecodeStep::Kind::kMessage;
  step.size = wire_size;
  CrdtMessage& m = step.message;
  m.type = type;
  m.legacy_length = legacy;
  switch (type) {
    case MessageType::kPutComponent:
    case MessageType::kAppendValue:
      m.entity = LoadU32Le(p + 8);
      m.component = LoadU32Le(p + 12);
      m.timestamp = LoadU32Le(p + 16);
      m.data = input.subspan(kPutComponentBaseSize, length - kPutComponentBaseSize);
      break;
    case MessageType::kDeleteComponent:
      m.entity = LoadU32Le(p + 8);
      m.component = LoadU32Le(p + 12);
      m.timestamp = LoadU32Le(p + 16);
      break;
    case MessageType::kDeleteEntity:
      m.entity = LoadU32Le(p + 8);
      break;
    case MessageType::kPutComponentNetwork:
      m.entity = LoadU32Le(p + 8);
      m.component = LoadU32Le(p + 12);
      m.timestamp = LoadU32Le(p + 16);
      m.network_id = LoadU32Le(p + 20);
      m.data = input.subspan(kPutComponentNetworkBaseSize, length - kPutComponentNetworkBaseSize);
      break;
    case MessageType::kDeleteComponentNetwork:
      m.entity = LoadU32Le(p + 8);
      m.component = LoadU32Le(p + 12);
      m.timestamp = LoadU32Le(p + 16);
      m.network_id = LoadU32Le(p + 20);
      break;
    case MessageType::kDeleteEntityNetwork:
      m.entity = LoadU32Le(p + 8);
      m.network_id = LoadU32Le(p + 12);
      break;
    default:
      m.data = input.subspan(kHeaderSize, length - kHeaderSize);
      break;
  }
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
  uint8_t* p = out.data();
  const uint32_t declared = (m.type == MessageType::kDeleteEntityNetwork && m.legacy_length)
                                ? kLegacyDeleteEntityNetworkDeclaredSize
                                : static_cast<uint32_t>(size);
  StoreU32Le(p, declared);
  StoreU32Le(p + 4, static_cast<uint32_t>(m.type));
  const auto data_size = static_cast<uint32_t>(m.data.size());
  switch (m.type) {
    case MessageType::kPutComponent:
    case MessageType::kAppendValue:
      StoreU32Le(p + 8, m.entity);
      StoreU32Le(p + 12, m.component);
      StoreU32Le(p + 16, m.timestamp);
      StoreU32Le(p + 20, data_size);
      if (data_size != 0) std::memcpy(p + 24, m.data.data(), data_size);
      break;
    case MessageType::kDeleteComponent:
      StoreU32Le(p + 8, m.entity);
      StoreU32Le(p + 12, m.component);
      StoreU32Le(p + 16, m.timestamp);
      break;
    case MessageType::kDeleteEntity:
      StoreU32Le(p + 8, m.entity);
      break;
    case MessageType::kPutComponentNetwork:
      StoreU32Le(p + 8, m.entity);
      StoreU32Le(p + 12, m.component);
      StoreU32Le(p + 16, m.timestamp);
      StoreU32Le(p + 20, m.network_id);
      StoreU32Le(p + 24, data_size);
      if (data_size != 0) std::memcpy(p + 28, m.data.data(), data_size);
      break;
    case MessageType::kDeleteComponentNetwork:
      StoreU32Le(p + 8, m.entity);
      StoreU32Le(p + 12, m.component);
      StoreU32Le(p + 16, m.timestamp);
      StoreU32Le(p + 20, m.network_id);
      break;
    case MessageType::kDeleteEntityNetwork:
      StoreU32Le(p + 8, m.entity);
      StoreU32Le(p + 12, m.network_id);
      break;
    default:
      if (data_size != 0) std::memcpy(p + kHeaderSize, m.data.data(), data_size);
      break;
  }
  return size;
}

void AppendMessage(const CrdtMessage& m, std::vector<uint8_t>& out) {
  const std::size_t at = out.size();
  out.resize(at + EncodedSize(m));
  EncodeMessage(m, std::span<uint8_t>(out).subspan(at));
}

void AppendTransformPut(EntityId entity, uint32_t timestamp, const Transform& t,
                        std::vector<uint8_t>& out) {
  const std::size_t at = out.size();
  out.resize(at + kPutComponentBaseSize + Transform::kSize);
  uint8_t* p = out.data() + at;
  StoreU32Le(p, kPutComponentBaseSize + Transform::kSize);
  StoreU32Le(p + 4, static_cast<uint32_t>(MessageType::kPutComponent));
  StoreU32Le(p + 8, entity);
  StoreU32Le(p + 12, kTransformComponentId);
  StoreU32Le(p + 16, timestamp);
  StoreU32Le(p + 20, Transform::kSize);
  StoreTransform(t,
                 std::span<uint8_t, Transform::kSize>(p + kPutComponentBaseSize, Transform::kSize));
}

}  // namespace scenecrdt::protocol
