// SPDX-License-Identifier: Apache-2.0
// Property tests (rapidcheck) of the DCL CRDT codec: decode/encode round trips of random valid
// streams, whole-buffer and chunked decoding agree on any input (random, mutated, cut
// anywhere), Transform load/store keeps every bit, every type round-trips through the one layout,
// and the inline PUT fast path agrees with DecodeMessage.
#include <gtest/gtest.h>
#include <rapidcheck.h>
#include <rapidcheck/gtest.h>

#include <algorithm>
#include <array>
#include <bit>
#include <cstring>
#include <string>
#include <vector>

#include "scenecrdt/protocol/byte_order.h"
#include "scenecrdt/protocol/crdt_codec.h"
#include "scenecrdt/protocol/crdt_message.h"
#include "scenecrdt/protocol/transform.h"
#include "tests/protocol/rapidcheck_util.h"
#include "tests/protocol/test_util.h"

namespace scenecrdt::protocol {
namespace {

using test::AnyBits;
using test::OwnedMessage;
using test::Uniform;

rc::Gen<uint32_t> UnknownType() {
  return rc::gen::oneOf(rc::gen::element(0u, 8u, 9u, 99u, 0xFFFFFFFFu),
                        rc::gen::suchThat(rc::gen::arbitrary<uint32_t>(),
                                          [](uint32_t t) { return t == 0 || t > 7; }));
}

rc::Gen<std::vector<uint8_t>> Payload() {
  return rc::gen::oneOf(
      rc::gen::container<std::vector<uint8_t>>(rc::gen::arbitrary<uint8_t>()),
      rc::gen::container<std::vector<uint8_t>>(Transform::kSize, rc::gen::arbitrary<uint8_t>()));
}

// A valid message of any of the 7 types or of an unknown type; fields the type does not carry
// are left zero, as the decoder produces them.
rc::Gen<OwnedMessage> ValidMessage() {
  return rc::gen::exec([] {
    OwnedMessage m;
    const uint32_t kind = *Uniform<uint32_t>(1, 10);
    m.type = kind <= 7 ? static_cast<MessageType>(kind) : static_cast<MessageType>(*UnknownType());
    if (IsKnownType(m.type)) m.entity = *rc::gen::arbitrary<uint32_t>();
    if (HasComponent(m.type)) {
      m.component =
          *rc::gen::oneOf(rc::gen::just(kTransformComponentId), rc::gen::arbitrary<uint32_t>());
      m.timestamp = *rc::gen::arbitrary<uint32_t>();
    }
    if (HasNetworkId(m.type)) m.network_id = *rc::gen::arbitrary<uint32_t>();
    if (HasData(m.type) || !IsKnownType(m.type)) m.data = *Payload();
    if (m.type == MessageType::kDeleteEntityNetwork) m.legacy_length = *rc::gen::arbitrary<bool>();
    return m;
  });
}

rc::Gen<std::vector<OwnedMessage>> ValidMessages() {
  return rc::gen::resize(40, rc::gen::container<std::vector<OwnedMessage>>(ValidMessage()));
}

// Bytes that look like a stream often enough to reach deep into the decoder: little-endian
// words, mostly small (plausible lengths and types), then a ragged tail.
rc::Gen<std::vector<uint8_t>> WordySoup() {
  return rc::gen::exec([] {
    const auto words = *rc::gen::container<std::vector<uint32_t>>(rc::gen::weightedOneOf<uint32_t>(
        {{4, Uniform<uint32_t>(0, 80)}, {1, rc::gen::arbitrary<uint32_t>()}}));
    std::vector<uint8_t> bytes;
    for (uint32_t w : words) test::AppendWords({w}, bytes);
    const auto tail = *rc::gen::container<std::vector<uint8_t>>(*Uniform<std::size_t>(0, 4),
                                                                rc::gen::arbitrary<uint8_t>());
    test::AppendBytes(tail, bytes);
    return bytes;
  });
}

// Applies 1..4 random edits: bit flips, truncation, byte insertion, splices of other valid
// streams, deletion and duplication of ranges, small words written over lengths and types.
std::vector<uint8_t> Mutate(std::vector<uint8_t> bytes) {
  const int edits = *Uniform<int>(1, 5);
  for (int e = 0; e < edits; ++e) {
    const std::size_t size = bytes.size();
    const auto pos = *Uniform<std::size_t>(0, size + 1);
    const auto end = *Uniform<std::size_t>(pos, size + 1);
    switch (*Uniform<int>(0, 7)) {
      case 0:
        if (pos < size) bytes[pos] ^= static_cast<uint8_t>(1u << *Uniform<int>(0, 8));
        break;
      case 1:
        bytes.resize(pos);
        break;
      case 2:
        bytes.insert(bytes.begin() + static_cast<std::ptrdiff_t>(pos),
                     *rc::gen::arbitrary<uint8_t>());
        break;
      case 3: {
        // Another valid stream, whole (message boundaries kept) or any slice of it.
        const auto other = test::EncodeAll(*ValidMessages());
        const bool whole = *rc::gen::arbitrary<bool>();
        const auto from = whole ? 0 : *Uniform<std::size_t>(0, other.size() + 1);
        const auto to = whole ? other.size() : *Uniform<std::size_t>(from, other.size() + 1);
        bytes.insert(bytes.begin() + static_cast<std::ptrdiff_t>(pos),
                     other.begin() + static_cast<std::ptrdiff_t>(from),
                     other.begin() + static_cast<std::ptrdiff_t>(to));
        break;
      }
      case 4:
        bytes.erase(bytes.begin() + static_cast<std::ptrdiff_t>(pos),
                    bytes.begin() + static_cast<std::ptrdiff_t>(end));
        break;
      case 5:
        // A plausible small word (a length or a type) over whatever was there.
        if (pos + 4 <= size) StoreU32Le(bytes.data() + pos, *Uniform<uint32_t>(0, 80));
        break;
      default: {
        const std::vector<uint8_t> range(bytes.begin() + static_cast<std::ptrdiff_t>(pos),
                                         bytes.begin() + static_cast<std::ptrdiff_t>(end));
        bytes.insert(bytes.end(), range.begin(), range.end());
        break;
      }
    }
  }
  return bytes;
}

rc::Gen<DecodeOptions> AnyOptions() {
  return rc::gen::exec([] {
    DecodeOptions options;
    options.reject_unknown_types = *Uniform<int>(0, 4) == 0;
    options.max_message_bytes =
        *rc::gen::weightedOneOf<uint32_t>({{3, rc::gen::just(kDefaultMaxMessageBytes)},
                                           {1, rc::gen::element(0u, 64u, 100u, 300u, 4096u)}});
    return options;
  });
}

rc::Gen<std::vector<std::size_t>> Cuts(std::size_t size) {
  return rc::gen::map(
      rc::gen::container<std::vector<std::size_t>>(Uniform<std::size_t>(0, size + 1)),
      [](std::vector<std::size_t> cuts) {
        std::sort(cuts.begin(), cuts.end());
        return cuts;
      });
}

// What must hold for any input: the whole-buffer decoder delivers a prefix of the input that
// re-encodes byte-exact and fails (if at all) exactly where that prefix ends; the chunked
// decoder cut anywhere agrees with it.
// The stream walked with DecodeMessage alone: the reference for the walkers' inline fast path
// (complete PUT_COMPONENTs decoded without the call).
test::WholeDecode DecodeOneByOne(std::span<const uint8_t> bytes, const DecodeOptions& options) {
  test::WholeDecode out;
  std::size_t pos = 0;
  while (pos < bytes.size()) {
    auto step = DecodeMessage(bytes.subspan(pos), options, pos);
    if (!step.has_value()) {
      out.ok = false;
      out.error = step.error();
      break;
    }
    if (step->kind == DecodeStep::Kind::kNeedMore) {
      out.ok = false;
      out.error = MakeError(ErrorCode::kTruncated, "", pos);
      break;
    }
    out.messages.push_back(OwnedMessage::From(step->message));
    pos += step->size;
  }
  return out;
}

void CheckDecodersAgree(const std::vector<uint8_t>& bytes, const DecodeOptions& options,
                        const std::vector<std::size_t>& cuts) {
  const auto whole = test::DecodeWhole(bytes, options);
  const auto reference = DecodeOneByOne(bytes, options);
  RC_ASSERT(whole.messages == reference.messages);
  RC_ASSERT(whole.ok == reference.ok);
  if (!whole.ok) {
    RC_ASSERT(whole.error.code == reference.error.code);
    RC_ASSERT(whole.error.offset == reference.error.offset);
  }
  const auto reencoded = test::EncodeAll(whole.messages);
  RC_ASSERT(reencoded.size() <= bytes.size());
  RC_ASSERT(std::equal(reencoded.begin(), reencoded.end(), bytes.begin()));
  if (whole.ok) {
    RC_ASSERT(reencoded.size() == bytes.size());
  } else {
    RC_ASSERT(whole.error.offset == reencoded.size());
    RC_ASSERT(whole.error.offset < bytes.size());
    const ErrorCode code = whole.error.code;
    RC_ASSERT(code == ErrorCode::kTruncated || code == ErrorCode::kLengthTooSmall ||
              code == ErrorCode::kLengthTooLarge || code == ErrorCode::kLengthMismatch ||
              code == ErrorCode::kDataLengthMismatch ||
              (code == ErrorCode::kUnknownMessageType && options.reject_unknown_types));
  }
  const uint32_t max_bytes = std::max(options.max_message_bytes, kMinMaxMessageBytes);
  for (const auto& m : whole.messages) {
    RC_ASSERT(EncodedSize(m.View()) <= max_bytes);
    if (options.reject_unknown_types) RC_ASSERT(IsKnownType(m.type));
  }

  const auto chunked = test::DecodeChunked(bytes, cuts, options);
  RC_ASSERT(chunked.messages == whole.messages);
  if (whole.ok) {
    RC_ASSERT(chunked.ok);
    RC_ASSERT(chunked.pending_bytes == 0u);
    RC_ASSERT(chunked.consumed_bytes == bytes.size());
  } else if (whole.error.code == ErrorCode::kTruncated) {
    RC_ASSERT(chunked.ok);
    RC_ASSERT(chunked.consumed_bytes == whole.error.offset);
    RC_ASSERT(chunked.pending_bytes == bytes.size() - whole.error.offset);
  } else {
    RC_ASSERT(!chunked.ok);
    RC_ASSERT(chunked.error.code == whole.error.code);
    RC_ASSERT(chunked.error.offset == whole.error.offset);
  }
}

RC_GTEST_PROP(CrdtCodecPropertyTest, DecodeThenEncodeReproducesValidStreams, ()) {
  const auto messages = *ValidMessages();
  const auto bytes = test::EncodeAll(messages);
  const auto whole = test::DecodeWhole(bytes);
  RC_ASSERT(whole.ok);
  RC_ASSERT(whole.messages == messages);
  RC_ASSERT(test::EncodeAll(whole.messages) == bytes);
  std::size_t size = 0;
  for (const auto& m : messages) size += EncodedSize(m.View());
  RC_ASSERT(size == bytes.size());
}

RC_GTEST_PROP(CrdtCodecPropertyTest, ChunkedDecodingOfValidStreamsMatchesWhole, ()) {
  const auto bytes = test::EncodeAll(*ValidMessages());
  CheckDecodersAgree(bytes, {}, *Cuts(bytes.size()));
}

RC_GTEST_PROP(CrdtCodecPropertyTest, RandomBytesNeverCrashAndDecodersAgree, ()) {
  const auto bytes = *rc::gen::container<std::vector<uint8_t>>(rc::gen::arbitrary<uint8_t>());
  CheckDecodersAgree(bytes, *AnyOptions(), *Cuts(bytes.size()));
}

RC_GTEST_PROP(CrdtCodecPropertyTest, WordSoupNeverCrashesAndDecodersAgree, ()) {
  const auto bytes = *WordySoup();
  CheckDecodersAgree(bytes, *AnyOptions(), *Cuts(bytes.size()));
}

RC_GTEST_PROP(CrdtCodecPropertyTest, MutatedStreamsNeverCrashAndDecodersAgree, ()) {
  const auto bytes = Mutate(test::EncodeAll(*ValidMessages()));
  CheckDecodersAgree(bytes, *AnyOptions(), *Cuts(bytes.size()));
}

RC_GTEST_PROP(CrdtCodecPropertyTest, StoreLoadTransformKeepsEveryBit, ()) {
  const auto bits = *rc::gen::container<std::array<uint32_t, 10>>(AnyBits<uint32_t>());
  Transform t;
  float* fields[] = {&t.position.x, &t.position.y, &t.position.z, &t.rotation.x, &t.rotation.y,
                     &t.rotation.z, &t.rotation.w, &t.scale.x,    &t.scale.y,    &t.scale.z};
  for (std::size_t i = 0; i < 10; ++i) *fields[i] = std::bit_cast<float>(bits[i]);
  t.parent = *AnyBits<uint32_t>();

  const TransformBytes bytes = StoreTransform(t);
  // Wire layout: ten little-endian f32 at 0, 4, ..., 36, then the parent u32 at 40.
  for (std::size_t i = 0; i < 10; ++i) {
    const uint32_t le = uint32_t{bytes[4 * i]} | uint32_t{bytes[4 * i + 1]} << 8 |
                        uint32_t{bytes[4 * i + 2]} << 16 | uint32_t{bytes[4 * i + 3]} << 24;
    RC_ASSERT(le == bits[i]);
  }
  RC_ASSERT(LoadU32Le(bytes.data() + 40) == t.parent);

  const Transform back = LoadTransform(bytes);
  const float loaded[] = {back.position.x, back.position.y, back.position.z, back.rotation.x,
                          back.rotation.y, back.rotation.z, back.rotation.w, back.scale.x,
                          back.scale.y,    back.scale.z};
  for (std::size_t i = 0; i < 10; ++i) RC_ASSERT(std::bit_cast<uint32_t>(loaded[i]) == bits[i]);
  RC_ASSERT(back.parent == t.parent);
  RC_ASSERT(BitwiseEqual(back, t));

  std::array<uint8_t, Transform::kSize> out;
  out.fill(0xEE);
  StoreTransform(back, out);
  RC_ASSERT(out == bytes);
}

RC_GTEST_PROP(CrdtCodecPropertyTest, LoadStoreTransformKeepsAnyBytes, ()) {
  const auto bytes = *rc::gen::container<std::array<uint8_t, Transform::kSize>>(AnyBits<uint8_t>());
  RC_ASSERT(StoreTransform(LoadTransform(bytes)) == bytes);
  // The one-copy fast path and the portable field-by-field reader agree bit for bit.
  RC_ASSERT(BitwiseEqual(LoadTransform(bytes), LoadTransformPortable(bytes)));
  Transform into;
  LoadTransformInto(bytes, into);
  RC_ASSERT(BitwiseEqual(into, LoadTransformPortable(bytes)));
}

RC_GTEST_PROP(CrdtCodecPropertyTest, NanPayloadsSurviveATransformPut, ()) {
  // Quiet and signalling NaNs of either sign with any payload.
  const auto payload = *Uniform<uint32_t>(1, 0x800000);
  const uint32_t nan_bits =
      (*rc::gen::arbitrary<bool>() ? 0x80000000u : 0u) | 0x7F800000u | payload;
  Transform t;
  t.rotation.w = std::bit_cast<float>(nan_bits);
  t.scale.y = std::bit_cast<float>(nan_bits ^ 1u);
  std::vector<uint8_t> stream;
  AppendTransformPut(512, 1, t, stream);
  const auto whole = test::DecodeWhole(stream);
  RC_ASSERT(whole.ok);
  const Transform back =
      LoadTransform(std::span<const uint8_t, Transform::kSize>(whole.messages.at(0).data));
  RC_ASSERT(std::bit_cast<uint32_t>(back.rotation.w) == nan_bits);
  RC_ASSERT(std::bit_cast<uint32_t>(back.scale.y) == (nan_bits ^ 1u));
  RC_ASSERT(!IsFinite(back));
}

// Any message, of each type or unknown, through the one layout (SerializeMessage): the
// measured size is EncodedSize and exactly what the writer fills, and DecodeMessage gives the
// same message back.
RC_GTEST_PROP(CrdtCodecPropertyTest, LayoutRoundTripsEveryType, ()) {
  const OwnedMessage m = *ValidMessage();
  const CrdtMessage view = m.View();
  MeasureStream measure;
  SerializeMessage(measure, view.type, view);
  const std::size_t size = EncodedSize(view);
  RC_ASSERT(measure.size() == size);
  std::vector<uint8_t> bytes(size + 3, 0xEE);
  RC_ASSERT(EncodeMessage(view, bytes) == size);
  RC_ASSERT(bytes[size] == 0xEE && bytes[size + 1] == 0xEE && bytes[size + 2] == 0xEE);
  const auto step = DecodeMessage(bytes, {});
  RC_ASSERT(step.has_value());
  RC_ASSERT(step->kind == DecodeStep::Kind::kMessage);
  RC_ASSERT(step->size == size);
  RC_ASSERT(OwnedMessage::From(step->message) == m);
}

// The inline PUT fast path agrees with DecodeMessage at every offset of valid, mutated and
// word-soup buffers, under any options.
RC_GTEST_PROP(CrdtCodecPropertyTest, PutFastPathAgreesWithDecodeMessage, ()) {
  const auto valid = test::EncodeAll(*ValidMessages());
  std::vector<uint8_t> bytes;
  switch (*Uniform<int>(0, 3)) {
    case 0:
      bytes = valid;
      break;
    case 1:
      bytes = Mutate(valid);
      break;
    default:
      bytes = *WordySoup();
      break;
  }
  const std::string disagreement = test::FastPathDisagreement(bytes, *AnyOptions());
  RC_ASSERT(disagreement == "");
}

// AppendTransformPut (the Transform stored in place) writes what EncodeMessage writes for the
// same PUT_COMPONENT, after whatever the buffer held.
RC_GTEST_PROP(CrdtCodecPropertyTest, AppendTransformPutMatchesEncodeMessage, ()) {
  const auto bytes = *rc::gen::container<TransformBytes>(AnyBits<uint8_t>());
  const Transform t = LoadTransform(bytes);  // any bits, NaN payloads included
  const EntityId entity = *AnyBits<uint32_t>();
  const uint32_t timestamp = *AnyBits<uint32_t>();
  const auto before = *rc::gen::container<std::vector<uint8_t>>(rc::gen::arbitrary<uint8_t>());

  std::vector<uint8_t> fast = before;
  AppendTransformPut(entity, timestamp, t, fast);
  const TransformBytes payload = StoreTransform(t);
  const CrdtMessage m{
      MessageType::kPutComponent, entity, kTransformComponentId, timestamp, 0, payload};
  std::vector<uint8_t> general = before;
  AppendMessage(m, general);
  RC_ASSERT(fast == general);
}

}  // namespace
}  // namespace scenecrdt::protocol
