// SPDX-License-Identifier: Apache-2.0
// Owns the DCL CRDT binary codec: the encoder, the strict single-message decoder, a whole-buffer
// stream walker, and CrdtStreamDecoder for chunked input (TCP) that may split messages.
//
// Decoding is strict (docs/PROTOCOL.md section 1): length >= 8; length <= max_message_bytes;
// exact sizes for fixed-size types; length == base + dataLength for types with data; unknown
// types skipped by length (or refused). Nothing is read past the input and nothing is
// allocated from a length before it has been checked against the maximum.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "scenecrdt/protocol/byte_order.h"
#include "scenecrdt/protocol/crdt_message.h"
#include "scenecrdt/protocol/result.h"
#include "scenecrdt/protocol/transform.h"

namespace scenecrdt::protocol {

// Default ceiling for one message, header included (a 1 MiB component is already absurd).
inline constexpr uint32_t kDefaultMaxMessageBytes = 1u << 20;
// The smallest ceiling the decoder accepts: every fixed-size message must fit.
inline constexpr uint32_t kMinMaxMessageBytes = 64;

struct DecodeOptions {
  // Largest accepted message, header included. Values below kMinMaxMessageBytes act as it.
  uint32_t max_message_bytes = kDefaultMaxMessageBytes;
  // Refuse types other than 1..7 (ErrorCode::kUnknownMessageType) instead of skipping them.
  bool reject_unknown_types = false;
};

struct DecodeStep {
  enum class Kind : uint8_t {
    kMessage,   // `message` is valid; `size` bytes were consumed
    kNeedMore,  // the input ends inside a message; `size` more bytes are needed to progress
  };
  Kind kind = Kind::kNeedMore;
  uint32_t size = 0;
  // For an unknown type (IsKnownType() false) `message.data` is the body after the header.
  CrdtMessage message;
};

// Decodes the message starting at input[0]. `offset` is input[0]'s position in the stream;
// errors carry the offset of the faulty message. Never reads beyond `input`.
Result<DecodeStep> DecodeMessage(std::span<const uint8_t> input, const DecodeOptions& options,
                                 uint64_t offset = 0);

namespace detail {
// The common case decoded inline on the stream walkers' hot path: a complete PUT_COMPONENT
// whose lengths check out. Fills `m` and returns its size, or returns 0 to leave anything else
// (other types, faults, the need for more bytes) to DecodeMessage, which decides and explains.
// It is DecodeMessage's PUT branch with the type known at compile time: the same layout
// (SerializeMessage through ReadStream), the same checks; a test holds the two to agreement.
inline std::size_t TryDecodeCompletePut(std::span<const uint8_t> input,
                                        const DecodeOptions& options, CrdtMessage& m) {
  constexpr MessageType kType = MessageType::kPutComponent;
  constexpr uint32_t kBase = BaseSize(kType);
  constexpr uint32_t kDataLengthAt = LayoutOf(kType).OffsetOf(Field::kData);
  if (input.size() < kBase) return 0;
  const uint8_t* p = input.data();
  const uint32_t length = LoadU32Le(p + kLengthOffset);
  if (LoadU32Le(p + kTypeOffset) != static_cast<uint32_t>(kType) || length < kBase ||
      length > options.max_message_bytes || length > input.size() ||
      LoadU32Le(p + kDataLengthAt) != length - kBase) {
    return 0;
  }
  // Straight into `m`, field by field (a whole-struct assignment goes through a stack
  // temporary whose mismatched stores stall the copy on the merge path).
  ReadStream read(p, length, /*legacy_length=*/false);
  SerializeMessage(read, kType, m);
  return length;
}
}  // namespace detail

// Walks a complete buffer and calls on_message(const CrdtMessage&) for each message in order.
// A buffer that ends inside a message yields ErrorCode::kTruncated at that message's offset.
// Messages before a fault have already been delivered when the error returns.
template <class OnMessage>
Result<void> DecodeStream(std::span<const uint8_t> input, const DecodeOptions& options,
                          OnMessage&& on_message, uint64_t base_offset = 0) {
  std::size_t pos = 0;
  CrdtMessage put;
  while (pos < input.size()) {
    if (const std::size_t size = detail::TryDecodeCompletePut(input.subspan(pos), options, put)) {
      on_message(static_cast<const CrdtMessage&>(put));
      pos += size;
      continue;
    }
    auto step = DecodeMessage(input.subspan(pos), options, base_offset + pos);
    if (!step.has_value()) return step.error();
    if (step->kind == DecodeStep::Kind::kNeedMore) {
      return MakeError(ErrorCode::kTruncated, "the input ends inside a message", base_offset + pos);
    }
    on_message(static_cast<const CrdtMessage&>(step->message));
    pos += step->size;
  }
  return {};
}

// Incremental decoder for a byte stream delivered in arbitrary chunks. Complete messages are
// handed to the callback straight from the chunk (zero copy); only a message split across
// chunks is buffered, and that buffer never exceeds max_message_bytes. After an error the
// decoder stays failed (the connection should be dropped) until Reset().
class CrdtStreamDecoder {
 public:
  explicit CrdtStreamDecoder(DecodeOptions options = {}) : options_(options) {}

  template <class OnMessage>
  Result<void> Feed(std::span<const uint8_t> chunk, OnMessage&& on_message);

  // Bytes of an incomplete message held back between chunks.
  std::size_t pending_bytes() const { return pending_.size(); }
  // More bytes needed before the next message can be decoded (0 when between messages).
  uint32_t bytes_needed() const { return bytes_needed_; }
  // Stream offset just past the last complete message.
  uint64_t consumed_bytes() const { return consumed_; }
  bool failed() const { return failed_; }
  void Reset();

 private:
  Result<void> Fail(const Error& e) {
    failed_ = true;
    error_ = e;
    return e;
  }

  DecodeOptions options_;
  std::vector<uint8_t> pending_;
  uint64_t consumed_ = 0;
  uint32_t bytes_needed_ = 0;
  bool failed_ = false;
  Error error_{};
};

// Writes `m` into out[0, EncodedSize(m)) and returns that size. `out` must be large enough.
std::size_t EncodeMessage(const CrdtMessage& m, std::span<uint8_t> out);
// Appends the encoding of `m` to `out`.
void AppendMessage(const CrdtMessage& m, std::vector<uint8_t>& out);
// Appends a 68-byte Transform PUT_COMPONENT (component 1).
void AppendTransformPut(EntityId entity, uint32_t timestamp, const Transform& t,
                        std::vector<uint8_t>& out);

// ---- implementation of the template ----

template <class OnMessage>
Result<void> CrdtStreamDecoder::Feed(std::span<const uint8_t> chunk, OnMessage&& on_message) {
  if (failed_) return error_;
  // 1. Complete a message split across chunks, taking exactly the bytes it still needs.
  while (!pending_.empty() && !chunk.empty()) {
    const std::size_t take = bytes_needed_ < chunk.size() ? bytes_needed_ : chunk.size();
    pending_.insert(pending_.end(), chunk.begin(), chunk.begin() + take);
    chunk = chunk.subspan(take);
    auto step = DecodeMessage(pending_, options_, consumed_);
    if (!step.has_value()) return Fail(step.error());
    if (step->kind == DecodeStep::Kind::kNeedMore) {
      bytes_needed_ = step->size;
      continue;
    }
    on_message(static_cast<const CrdtMessage&>(step->message));
    consumed_ += step->size;
    pending_.clear();
    bytes_needed_ = 0;
  }
  // 2. Decode whole messages in place; keep an incomplete tail.
  std::size_t pos = 0;
  CrdtMessage put;
  while (pos < chunk.size()) {
    if (const std::size_t size = detail::TryDecodeCompletePut(chunk.subspan(pos), options_, put)) {
      on_message(static_cast<const CrdtMessage&>(put));
      consumed_ += size;
      pos += size;
      continue;
    }
    auto step = DecodeMessage(chunk.subspan(pos), options_, consumed_);
    if (!step.has_value()) return Fail(step.error());
    if (step->kind == DecodeStep::Kind::kNeedMore) {
      // The tail is shorter than the message's checked size, itself <= max_message_bytes.
      pending_.assign(chunk.begin() + pos, chunk.end());
      bytes_needed_ = step->size;
      return {};
    }
    on_message(static_cast<const CrdtMessage&>(step->message));
    consumed_ += step->size;
    pos += step->size;
  }
  return {};
}

}  // namespace scenecrdt::protocol
