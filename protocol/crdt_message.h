// SPDX-License-Identifier: Apache-2.0
// Owns the DCL SDK7 CRDT message model and its one byte layout: the seven message types, the
// flat CrdtMessage, and SerializeMessage, the only place that says which fields each type
// carries and in which order. Its three streams measure (MeasureStream: every size, offset and
// Has*() below, at compile time), read (detail::ReadStream, for the decoder) and write
// (detail::WriteStream, for the encoder). docs/PROTOCOL.md section 1 is the spec it follows.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>

#include "scenecrdt/protocol/byte_order.h"
#include "scenecrdt/protocol/entity_id.h"

namespace scenecrdt::protocol {

// Wire values of CrdtMessageType (@dcl/ecs serialization/crdt/types.ts). Other values may
// appear on the wire; they are "unknown" and skipped by length unless the caller rejects them.
enum class MessageType : uint32_t {
  kPutComponent = 1,
  kDeleteComponent = 2,
  kDeleteEntity = 3,
  kAppendValue = 4,
  kPutComponentNetwork = 5,
  kDeleteComponentNetwork = 6,
  kDeleteEntityNetwork = 7,
};

// The header every message starts with: length u32 at 0 (the whole message, header included),
// type u32 at 4.
inline constexpr uint32_t kHeaderSize = 8;
inline constexpr uint32_t kLengthOffset = 0;
inline constexpr uint32_t kTypeOffset = 4;
// @dcl/ecs before 7.28 declared 12 for DELETE_ENTITY_NETWORK while writing 16 bytes.
inline constexpr uint32_t kLegacyDeleteEntityNetworkDeclaredSize = 12;

constexpr bool IsKnownType(MessageType t) {
  const auto v = static_cast<uint32_t>(t);
  return v >= 1 && v <= 7;
}

// Short JSON name: "put", "delete", "delete_entity", "append", "put_network",
// "delete_network", "delete_entity_network"; "unknown" otherwise.
const char* MessageTypeName(MessageType t);

// One decoded message, flat. Fields the type does not carry are 0 / empty (see Has*()).
// `data` points into the decoded buffer (no copy); for unknown types it is the body after
// the 8-byte header. Keep the buffer alive while the view is used.
struct CrdtMessage {
  MessageType type = MessageType::kPutComponent;
  EntityId entity = 0;
  ComponentId component = 0;
  uint32_t timestamp = 0;
  uint32_t network_id = 0;
  std::span<const uint8_t> data;
  // DELETE_ENTITY_NETWORK read with the legacy declared length 12 (16 bytes on the wire). The
  // encoder reproduces the legacy length so a decode/encode round trip is byte-exact.
  bool legacy_length = false;
};

// The fields a message body can carry. kData is dataLength u32 followed by that many bytes;
// kBody is the rest of a message of unknown type (no length of its own).
enum class Field : uint8_t { kEntity, kComponent, kTimestamp, kNetworkId, kData, kBody };
inline constexpr std::size_t kFieldCount = 6;

// THE layout: after the header, the fields of each type in wire order (all u32 little-endian).
// `Message` is CrdtMessage for ReadStream, const CrdtMessage for WriteStream and MeasureStream.
// Change the wire format here and nowhere else; the static_asserts below pin the spec's sizes.
template <class Stream, class Message>
constexpr void SerializeMessage(Stream& s, MessageType type, Message& m) {
  s.Header(type, m);
  switch (type) {
    case MessageType::kPutComponent:
    case MessageType::kAppendValue:
      s.U32(Field::kEntity, m.entity);
      s.U32(Field::kComponent, m.component);
      s.U32(Field::kTimestamp, m.timestamp);
      s.Data(m.data);
      return;
    case MessageType::kDeleteComponent:
      s.U32(Field::kEntity, m.entity);
      s.U32(Field::kComponent, m.component);
      s.U32(Field::kTimestamp, m.timestamp);
      return;
    case MessageType::kDeleteEntity:
      s.U32(Field::kEntity, m.entity);
      return;
    case MessageType::kPutComponentNetwork:
      s.U32(Field::kEntity, m.entity);
      s.U32(Field::kComponent, m.component);
      s.U32(Field::kTimestamp, m.timestamp);
      s.U32(Field::kNetworkId, m.network_id);
      s.Data(m.data);
      return;
    case MessageType::kDeleteComponentNetwork:
      s.U32(Field::kEntity, m.entity);
      s.U32(Field::kComponent, m.component);
      s.U32(Field::kTimestamp, m.timestamp);
      s.U32(Field::kNetworkId, m.network_id);
      return;
    case MessageType::kDeleteEntityNetwork:
      s.U32(Field::kEntity, m.entity);
      s.U32(Field::kNetworkId, m.network_id);
      return;
    default:  // unknown: relayed byte-exact
      s.Body(m.data);
      return;
  }
}

// Measures a message and notes where each field starts (compile time: the table below).
class MeasureStream {
 public:
  constexpr void Header(MessageType, const CrdtMessage&) { size_ = kHeaderSize; }
  constexpr void U32(Field f, uint32_t) {
    Mark(f);
    size_ += 4;
  }
  constexpr void Data(std::span<const uint8_t> data) {
    Mark(Field::kData);
    size_ += 4 + data.size();
  }
  constexpr void Body(std::span<const uint8_t> body) {
    Mark(Field::kBody);
    size_ += body.size();
  }

  constexpr std::size_t size() const { return size_; }
  constexpr uint32_t fields() const { return fields_; }
  constexpr const std::array<uint32_t, kFieldCount>& offsets() const { return offsets_; }

 private:
  constexpr void Mark(Field f) {
    fields_ |= 1u << static_cast<uint32_t>(f);
    offsets_[static_cast<std::size_t>(f)] = static_cast<uint32_t>(size_);
  }
  std::size_t size_ = 0;
  uint32_t fields_ = 0;
  std::array<uint32_t, kFieldCount> offsets_{};
};

// What MeasureStream finds for one type with an empty payload.
struct MessageLayout {
  uint32_t base_size = 0;  // the message without its payload: the whole size of fixed-size types
  uint32_t fields = 0;     // bit (1 << Field) per field carried
  std::array<uint32_t, kFieldCount> offsets{};  // byte offset of each carried field

  constexpr bool Has(Field f) const { return (fields >> static_cast<uint32_t>(f)) & 1u; }
  constexpr uint32_t OffsetOf(Field f) const { return offsets[static_cast<std::size_t>(f)]; }
  // A payload follows the fixed fields (kData or kBody): the size is not fixed.
  constexpr bool HasPayload() const { return Has(Field::kData) || Has(Field::kBody); }
};

constexpr MessageLayout MeasureLayout(MessageType type) {
  MeasureStream s;
  const CrdtMessage m{};
  SerializeMessage(s, type, m);
  return {static_cast<uint32_t>(s.size()), s.fields(), s.offsets()};
}

// Index = wire type; index 0 stands for every unknown type (header + body).
inline constexpr std::array<MessageLayout, 8> kMessageLayouts = [] {
  std::array<MessageLayout, 8> table{};
  for (uint32_t v = 0; v < table.size(); ++v) table[v] = MeasureLayout(MessageType{v});
  return table;
}();

constexpr const MessageLayout& LayoutOf(MessageType t) {
  const auto v = static_cast<uint32_t>(t);
  return kMessageLayouts[v < kMessageLayouts.size() ? v : 0];
}

constexpr bool HasComponent(MessageType t) { return LayoutOf(t).Has(Field::kComponent); }
constexpr bool HasTimestamp(MessageType t) { return LayoutOf(t).Has(Field::kTimestamp); }
constexpr bool HasData(MessageType t) { return LayoutOf(t).Has(Field::kData); }
constexpr bool HasNetworkId(MessageType t) { return LayoutOf(t).Has(Field::kNetworkId); }
// Size of everything but the payload (types with data) or the whole size (the others); the
// header size for unknown types.
constexpr uint32_t BaseSize(MessageType t) { return LayoutOf(t).base_size; }

// Fixed wire sizes (whole message, header included). Types with data add dataLength.
inline constexpr uint32_t kPutComponentBaseSize = BaseSize(MessageType::kPutComponent);
inline constexpr uint32_t kDeleteComponentSize = BaseSize(MessageType::kDeleteComponent);
inline constexpr uint32_t kDeleteEntitySize = BaseSize(MessageType::kDeleteEntity);
inline constexpr uint32_t kAppendValueBaseSize = BaseSize(MessageType::kAppendValue);
inline constexpr uint32_t kPutComponentNetworkBaseSize =
    BaseSize(MessageType::kPutComponentNetwork);
inline constexpr uint32_t kDeleteComponentNetworkSize =
    BaseSize(MessageType::kDeleteComponentNetwork);
inline constexpr uint32_t kDeleteEntityNetworkSize = BaseSize(MessageType::kDeleteEntityNetwork);
// The sizes docs/PROTOCOL.md section 1 documents.
static_assert(kPutComponentBaseSize == 24 && kDeleteComponentSize == 20 &&
              kDeleteEntitySize == 12 && kAppendValueBaseSize == 24 &&
              kPutComponentNetworkBaseSize == 28 && kDeleteComponentNetworkSize == 24 &&
              kDeleteEntityNetworkSize == 16 && BaseSize(MessageType{0}) == kHeaderSize);

// Exact encoded size of `m`.
constexpr std::size_t EncodedSize(const CrdtMessage& m) {
  const MessageLayout& layout = LayoutOf(m.type);
  return layout.base_size + (layout.HasPayload() ? m.data.size() : 0);
}

namespace detail {

// Reads one message whose lengths the decoder has already checked: `wire_size` bytes at `p`,
// dataLength equal to the rest of the message (DecodeMessage, TryDecodeCompletePut). Fields
// the type does not carry come out 0 / empty.
class ReadStream {
 public:
  ReadStream(const uint8_t* p, uint32_t wire_size, bool legacy_length)
      : p_(p), end_(wire_size), legacy_length_(legacy_length) {}

  void Header(MessageType type, CrdtMessage& m) {
    m.type = type;
    m.entity = 0;
    m.component = 0;
    m.timestamp = 0;
    m.network_id = 0;
    m.data = {};
    m.legacy_length = legacy_length_;
    pos_ = kHeaderSize;
  }
  void U32(Field, uint32_t& v) {
    v = LoadU32Le(p_ + pos_);
    pos_ += 4;
  }
  // dataLength was checked equal to the rest of the message: the payload is that rest.
  void Data(std::span<const uint8_t>& data) {
    pos_ += 4;
    Body(data);
  }
  void Body(std::span<const uint8_t>& body) {
    body = std::span<const uint8_t>(p_ + pos_, end_ - pos_);
    pos_ = end_;
  }

 private:
  const uint8_t* p_;
  uint32_t end_;
  uint32_t pos_ = 0;
  bool legacy_length_;
};

// Writes one message of EncodedSize() `size` at `p` (the caller checked the room). With
// kPayloadInPlace the payload is already there (AppendTransformPut stores its Transform first)
// and is not copied.
template <bool kPayloadInPlace = false>
class WriteStream {
 public:
  WriteStream(uint8_t* p, uint32_t size) : p_(p), size_(size) {}

  void Header(MessageType type, const CrdtMessage& m) {
    const bool legacy = type == MessageType::kDeleteEntityNetwork && m.legacy_length;
    StoreU32Le(p_ + kLengthOffset, legacy ? kLegacyDeleteEntityNetworkDeclaredSize : size_);
    StoreU32Le(p_ + kTypeOffset, static_cast<uint32_t>(type));
    pos_ = kHeaderSize;
  }
  void U32(Field, uint32_t v) {
    StoreU32Le(p_ + pos_, v);
    pos_ += 4;
  }
  void Data(std::span<const uint8_t> data) {
    U32(Field::kData, static_cast<uint32_t>(data.size()));
    Body(data);
  }
  void Body(std::span<const uint8_t> body) {
    if constexpr (!kPayloadInPlace) {
      if (!body.empty()) std::memcpy(p_ + pos_, body.data(), body.size());
    }
    pos_ += static_cast<uint32_t>(body.size());
  }

  uint32_t written() const { return pos_; }

 private:
  uint8_t* p_;
  uint32_t size_;
  uint32_t pos_ = 0;
};

}  // namespace detail
}  // namespace scenecrdt::protocol
