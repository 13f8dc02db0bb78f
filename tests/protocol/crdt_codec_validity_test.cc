// SPDX-License-Identifier: Apache-2.0
// Tests the DCL CRDT decoder on invalid and partial input: every malformed header (each error
// code, its offset, and how early it is detected), truncation at every byte of the golden
// messages, chunked decoding at every split point, unknown types, the legacy
// DELETE_ENTITY_NETWORK length, and the failed state of CrdtStreamDecoder.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "scenecrdt/protocol/byte_order.h"
#include "scenecrdt/protocol/crdt_codec.h"
#include "scenecrdt/protocol/hex.h"
#include "tests/protocol/test_util.h"

namespace scenecrdt::protocol {
namespace {

using test::AppendBytes;
using test::OwnedMessage;
using test::Words;

constexpr uint32_t kPut = 1;
constexpr uint32_t kDeleteComponentType = 2;
constexpr uint32_t kDeleteEntityType = 3;
constexpr uint32_t kAppend = 4;
constexpr uint32_t kPutNetwork = 5;
constexpr uint32_t kDeleteComponentNetworkType = 6;
constexpr uint32_t kDeleteEntityNetworkType = 7;

struct InvalidCase {
  std::string name;
  std::vector<uint8_t> bytes;  // starts with the faulty message
  DecodeOptions options;
  ErrorCode code;
  // The shortest prefix that already proves the message bad (the header is enough for most).
  std::size_t detected_at;
};

// Fills `bytes` up to `size` with a recognisable pattern.
std::vector<uint8_t> Padded(std::vector<uint8_t> bytes, std::size_t size) {
  while (bytes.size() < size) bytes.push_back(static_cast<uint8_t>(0xA0 + bytes.size() % 16));
  return bytes;
}

std::vector<InvalidCase> InvalidCases() {
  std::vector<InvalidCase> cases;
  const DecodeOptions defaults;
  DecodeOptions reject;
  reject.reject_unknown_types = true;

  // 1. length < 8 (the header alone), for every type and for unknown ones. Length 0 with an
  //    unknown type is the input that hangs @dcl/ecs 7.28.
  for (uint32_t type : {0u, 1u, 2u, 3u, 4u, 5u, 6u, 7u, 8u, 99u, 0xFFFFFFFFu}) {
    for (uint32_t length = 0; length < kHeaderSize; ++length) {
      for (const DecodeOptions& options : {defaults, reject}) {
        cases.push_back({"length " + std::to_string(length) + " type " + std::to_string(type) +
                             (options.reject_unknown_types ? " reject" : ""),
                         Padded(Words({length, type}), 24), options, ErrorCode::kLengthTooSmall,
                         4});
      }
    }
  }
  // 2. Fixed-size types with any other length (DELETE_ENTITY_NETWORK's legacy 12 excepted).
  struct Fixed {
    uint32_t type;
    uint32_t size;
  };
  for (Fixed f : {Fixed{kDeleteComponentType, 20}, Fixed{kDeleteEntityType, 12},
                  Fixed{kDeleteComponentNetworkType, 24}, Fixed{kDeleteEntityNetworkType, 16}}) {
    for (uint32_t length :
         {f.size - 1, f.size + 1, 8u, 12u, 16u, 20u, 24u, 28u, 64u, 68u, 72u, 1000u}) {
      if (length == f.size) continue;
      if (f.type == kDeleteEntityNetworkType && length == 12) continue;
      cases.push_back({"fixed type " + std::to_string(f.type) + " length " + std::to_string(length),
                       Padded(Words({length, f.type, 512, 1, 1, 1}), length), defaults,
                       ErrorCode::kLengthMismatch, 8});
    }
  }
  // 3. Types with data whose length cannot even hold the fixed fields.
  struct WithData {
    uint32_t type;
    uint32_t base;
  };
  const WithData with_data[] = {{kPut, 24}, {kAppend, 24}, {kPutNetwork, 28}};
  for (WithData w : with_data) {
    for (uint32_t length = kHeaderSize; length < w.base; ++length) {
      cases.push_back(
          {"type " + std::to_string(w.type) + " length " + std::to_string(length) + " below base",
           Padded(Words({length, w.type, 512, 1, 1, 0}), 32), defaults, ErrorCode::kLengthMismatch,
           8});
    }
  }
  // 4. dataLength disagreeing with length, both ways, and absurd dataLength values. The
  //    fixed fields are enough to tell: the payload is never waited for.
  for (WithData w : with_data) {
    for (uint32_t data_length :
         {0u, 3u, 5u, 44u, w.base + 4, 0x7FFFFFFFu, 0xFFFFFFF0u, 0xFFFFFFFFu}) {
      std::vector<uint8_t> bytes = Words({w.base + 4, w.type, 512, 1, 1});
      if (w.type == kPutNetwork) test::AppendWords({7}, bytes);
      test::AppendWords({data_length}, bytes);
      if (data_length == 4) continue;
      cases.push_back({"type " + std::to_string(w.type) + " dataLength " +
                           std::to_string(data_length) + " for 4 bytes",
                       Padded(bytes, w.base + 4), defaults, ErrorCode::kDataLengthMismatch,
                       w.base});
    }
    std::vector<uint8_t> no_room = Words({w.base, w.type, 512, 1, 1});
    if (w.type == kPutNetwork) test::AppendWords({7}, no_room);
    test::AppendWords({1}, no_room);
    cases.push_back({"type " + std::to_string(w.type) + " dataLength 1 for 0 bytes", no_room,
                     defaults, ErrorCode::kDataLengthMismatch, w.base});
  }
  // 5. A length that only looks consistent after u32 wrap-around: 24 + 0xFFFFFFF0 = 8.
  cases.push_back({"wrapped length", Padded(Words({8, kPut, 512, 1, 1, 0xFFFFFFF0u}), 32), defaults,
                   ErrorCode::kLengthMismatch, 8});
  // 6. Lengths above the configured maximum, refused from the first 4 bytes, before any
  //    buffering (the input here is far shorter than the declared length).
  for (uint32_t type : {kPut, kAppend, kPutNetwork, kDeleteEntityType, 99u}) {
    cases.push_back({"huge length type " + std::to_string(type),
                     Padded(Words({0xFFFFFFFFu, type, 512, 1, 1, 0xFFFFFFFFu - 24}), 40), defaults,
                     ErrorCode::kLengthTooLarge, 4});
    cases.push_back({"length max+1 type " + std::to_string(type),
                     Padded(Words({kDefaultMaxMessageBytes + 1, type, 512, 1, 1,
                                   kDefaultMaxMessageBytes + 1 - 24}),
                            40),
                     defaults, ErrorCode::kLengthTooLarge, 4});
  }
  DecodeOptions small;
  small.max_message_bytes = 100;
  cases.push_back({"PUT above max 100", Padded(Words({101, kPut, 512, 1, 1, 77}), 101), small,
                   ErrorCode::kLengthTooLarge, 4});
  cases.push_back({"unknown above max 100", Padded(Words({101, 99}), 101), small,
                   ErrorCode::kLengthTooLarge, 4});
  DecodeOptions tiny;
  tiny.max_message_bytes = 10;  // acts as kMinMaxMessageBytes (64)
  cases.push_back(
      {"PUT above the minimum maximum",
       Padded(Words({kMinMaxMessageBytes + 1, kPut, 512, 1, 1, kMinMaxMessageBytes + 1 - 24}),
              kMinMaxMessageBytes + 1),
       tiny, ErrorCode::kLengthTooLarge, 4});
  // 7. Unknown types, when the caller refuses them.
  for (uint32_t type : {0u, 8u, 9u, 99u, 0x80000001u, 0xFFFFFFFFu}) {
    for (uint32_t length : {8u, 12u, 64u}) {
      cases.push_back({"unknown type " + std::to_string(type) + " length " +
                           std::to_string(length) + " rejected",
                       Padded(Words({length, type}), length), reject,
                       ErrorCode::kUnknownMessageType, 8});
    }
  }
  return cases;
}

// Bytes the decoder says it needs after seeing the first `k` bytes of the valid `message`.
uint32_t ExpectedNeed(std::span<const uint8_t> message, std::size_t k) {
  if (k < kHeaderSize) return static_cast<uint32_t>(kHeaderSize - k);
  const auto type = static_cast<MessageType>(LoadU32Le(message.data() + 4));
  if (HasData(type) && k < BaseSize(type)) return static_cast<uint32_t>(BaseSize(type) - k);
  return static_cast<uint32_t>(message.size() - k);
}

class CrdtCodecValidityTest : public ::testing::Test {
 protected:
  void SetUp() override {
    golden_ = test::LoadGoldenMessages();
    stream_ = test::GoldenStream(golden_, &starts_);
  }
  std::vector<test::GoldenMessage> golden_;
  std::vector<uint8_t> stream_;
  std::vector<std::size_t> starts_;
};

TEST_F(CrdtCodecValidityTest, Validity) {
  const auto cases = InvalidCases();
  ASSERT_GT(cases.size(), 200u);
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name + ": " + ToHex(c.bytes));
    ASSERT_GE(c.bytes.size(), c.detected_at);
    const std::span<const uint8_t> bytes(c.bytes);

    // The message alone, at offset 0 and at a caller-given offset.
    auto step = DecodeMessage(bytes, c.options);
    ASSERT_FALSE(step.has_value());
    EXPECT_EQ(step.error().code, c.code) << ErrorCodeName(step.error().code);
    EXPECT_EQ(step.error().offset, 0u);
    EXPECT_NE(std::string(step.error().detail), "");
    auto at_offset = DecodeMessage(bytes, c.options, 1234);
    ASSERT_FALSE(at_offset.has_value());
    EXPECT_EQ(at_offset.error().offset, 1234u);

    // Detected as early as the header allows: one byte less is still "need more".
    auto early = DecodeMessage(bytes.first(c.detected_at), c.options);
    ASSERT_FALSE(early.has_value());
    EXPECT_EQ(early.error().code, c.code);
    auto before = DecodeMessage(bytes.first(c.detected_at - 1), c.options);
    ASSERT_TRUE(before.has_value()) << ErrorCodeName(before.error().code);
    EXPECT_EQ(before->kind, DecodeStep::Kind::kNeedMore);
    EXPECT_GT(before->size, 0u);

    // Inside a longer stream the error points at the faulty message, after the good ones
    // (the golden messages this case's maximum allows).
    std::vector<uint8_t> stream;
    std::size_t good = 0;
    for (const auto& g : golden_) {
      if (g.bytes.size() > std::max(c.options.max_message_bytes, kMinMaxMessageBytes)) continue;
      AppendBytes(g.bytes, stream);
      ++good;
    }
    ASSERT_GE(good, 5u);
    const std::size_t fault_at = stream.size();
    AppendBytes(c.bytes, stream);
    AppendBytes(golden_.at(1).bytes, stream);
    auto whole = test::DecodeWhole(stream, c.options);
    ASSERT_FALSE(whole.ok);
    EXPECT_EQ(whole.error.code, c.code);
    EXPECT_EQ(whole.error.offset, fault_at);
    EXPECT_EQ(whole.messages.size(), good);
    Result<void> based = DecodeStream(
        stream, c.options, [](const CrdtMessage&) {}, 5000);
    ASSERT_FALSE(based.has_value());
    EXPECT_EQ(based.error().offset, 5000 + fault_at);

    // The chunked decoder, byte by byte, fails the same way at the same offset.
    std::vector<std::size_t> every_byte(stream.size());
    for (std::size_t i = 0; i < stream.size(); ++i) every_byte[i] = i;
    auto chunked = test::DecodeChunked(stream, every_byte, c.options);
    ASSERT_FALSE(chunked.ok);
    EXPECT_EQ(chunked.error.code, c.code);
    EXPECT_EQ(chunked.error.offset, fault_at);
    EXPECT_EQ(chunked.messages, whole.messages);
    // Nothing beyond the declared maximum is ever buffered.
    EXPECT_LE(chunked.pending_bytes, std::max(c.options.max_message_bytes, kMinMaxMessageBytes));
  }
}

TEST_F(CrdtCodecValidityTest, EmptyInputIsNotAnError) {
  auto whole = test::DecodeWhole({});
  EXPECT_TRUE(whole.ok);
  EXPECT_TRUE(whole.messages.empty());
  auto step = DecodeMessage({}, {});
  ASSERT_TRUE(step.has_value());
  EXPECT_EQ(step->kind, DecodeStep::Kind::kNeedMore);
  EXPECT_EQ(step->size, kHeaderSize);
  CrdtStreamDecoder decoder;
  int messages = 0;
  EXPECT_TRUE(decoder.Feed({}, [&](const CrdtMessage&) { ++messages; }).has_value());
  EXPECT_EQ(messages, 0);
  EXPECT_EQ(decoder.pending_bytes(), 0u);
  EXPECT_EQ(decoder.bytes_needed(), 0u);
}

TEST_F(CrdtCodecValidityTest, TruncatedGoldenMessageNeedsExactlyTheMissingBytes) {
  for (const auto& g : golden_) {
    const std::span<const uint8_t> bytes(g.bytes);
    for (std::size_t k = 0; k < bytes.size(); ++k) {
      SCOPED_TRACE("golden line " + std::to_string(g.line) + " cut at " + std::to_string(k));
      auto step = DecodeMessage(bytes.first(k), {});
      ASSERT_TRUE(step.has_value()) << ErrorCodeName(step.error().code);
      ASSERT_EQ(step->kind, DecodeStep::Kind::kNeedMore);
      EXPECT_EQ(step->size, ExpectedNeed(bytes, k));
      // Supplying exactly that many bytes always makes progress.
      auto next = DecodeMessage(bytes.first(k + step->size), {});
      ASSERT_TRUE(next.has_value());
      if (next->kind == DecodeStep::Kind::kNeedMore) {
        EXPECT_LT(k + step->size + next->size, bytes.size() + 1);
      } else {
        EXPECT_EQ(k + step->size, bytes.size());
      }
      if (k > 0) {
        auto whole = test::DecodeWhole(bytes.first(k));
        ASSERT_FALSE(whole.ok);
        EXPECT_EQ(whole.error.code, ErrorCode::kTruncated);
        EXPECT_EQ(whole.error.offset, 0u);
        EXPECT_TRUE(whole.messages.empty());
      }
    }
  }
}

TEST_F(CrdtCodecValidityTest, TruncatedGoldenStreamReportsTheCutMessage) {
  for (std::size_t cut = 0; cut <= stream_.size(); ++cut) {
    SCOPED_TRACE("cut at " + std::to_string(cut));
    // The message the cut falls in (the last one starting at or before it).
    const auto containing = static_cast<std::size_t>(
        std::upper_bound(starts_.begin(), starts_.end(), cut) - starts_.begin() - 1);
    auto whole = test::DecodeWhole(std::span<const uint8_t>(stream_).first(cut));
    if (cut == stream_.size()) {
      EXPECT_TRUE(whole.ok);
      EXPECT_EQ(whole.messages.size(), golden_.size());
    } else if (cut == starts_[containing]) {
      EXPECT_TRUE(whole.ok);
      EXPECT_EQ(whole.messages.size(), containing);
    } else {
      ASSERT_FALSE(whole.ok);
      EXPECT_EQ(whole.error.code, ErrorCode::kTruncated);
      EXPECT_EQ(whole.error.offset, starts_[containing]);
      EXPECT_EQ(whole.messages.size(), containing);
    }
  }
}

TEST_F(CrdtCodecValidityTest, StreamDecoderSplitAtEveryOffsetMatchesWholeDecoding) {
  const auto whole = test::DecodeWhole(stream_);
  ASSERT_TRUE(whole.ok);
  for (std::size_t i = 0; i <= stream_.size(); ++i) {
    for (std::size_t j = i; j <= stream_.size(); ++j) {
      const std::size_t cuts[] = {i, j};
      auto chunked = test::DecodeChunked(stream_, cuts);
      ASSERT_TRUE(chunked.ok) << "cuts " << i << ", " << j;
      ASSERT_EQ(chunked.messages, whole.messages) << "cuts " << i << ", " << j;
      ASSERT_EQ(chunked.pending_bytes, 0u);
      ASSERT_EQ(chunked.consumed_bytes, stream_.size());
    }
  }
}

TEST_F(CrdtCodecValidityTest, StreamDecoderByteByByteTracksPendingAndNeededBytes) {
  CrdtStreamDecoder decoder;
  std::vector<OwnedMessage> messages;
  auto emit = [&](const CrdtMessage& m) { messages.push_back(OwnedMessage::From(m)); };
  for (std::size_t fed = 1; fed <= stream_.size(); ++fed) {
    SCOPED_TRACE("fed " + std::to_string(fed));
    ASSERT_TRUE(
        decoder.Feed(std::span<const uint8_t>(stream_).subspan(fed - 1, 1), emit).has_value());
    const std::size_t index = static_cast<std::size_t>(
        std::upper_bound(starts_.begin(), starts_.end(), fed) - starts_.begin() - 1);
    const std::size_t into = fed == stream_.size() ? 0 : fed - starts_[index];
    if (into == 0) {
      EXPECT_EQ(decoder.pending_bytes(), 0u);
      EXPECT_EQ(decoder.bytes_needed(), 0u);
      EXPECT_EQ(decoder.consumed_bytes(), fed);
      EXPECT_EQ(messages.size(), fed == stream_.size() ? golden_.size() : index);
    } else {
      EXPECT_EQ(decoder.pending_bytes(), into);
      EXPECT_EQ(decoder.bytes_needed(), ExpectedNeed(golden_[index].bytes, into));
      EXPECT_EQ(decoder.consumed_bytes(), starts_[index]);
      EXPECT_EQ(messages.size(), index);
    }
  }
  EXPECT_EQ(messages, test::DecodeWhole(stream_).messages);
  EXPECT_EQ(decoder.pending_bytes(), 0u);
  EXPECT_EQ(decoder.consumed_bytes(), stream_.size());
}

TEST_F(CrdtCodecValidityTest, StreamDecoderDeliversCompleteMessagesWithoutCopying) {
  CrdtStreamDecoder decoder;
  std::vector<const uint8_t*> payloads;
  auto r = decoder.Feed(stream_, [&](const CrdtMessage& m) {
    if (!m.data.empty()) payloads.push_back(m.data.data());
  });
  ASSERT_TRUE(r.has_value());
  ASSERT_FALSE(payloads.empty());
  for (const uint8_t* p : payloads) {
    EXPECT_GE(p, stream_.data());
    EXPECT_LT(p, stream_.data() + stream_.size());
  }
}

TEST_F(CrdtCodecValidityTest, FixedSizeTypesDecodeAtTheirExactSize) {
  struct Case {
    std::vector<uint8_t> bytes;
    MessageType type;
  };
  const Case cases[] = {
      {Words({20, kDeleteComponentType, 0x00010200, 77, 9}), MessageType::kDeleteComponent},
      {Words({12, kDeleteEntityType, 0x00010200}), MessageType::kDeleteEntity},
      {Words({24, kDeleteComponentNetworkType, 0x00010200, 77, 9, 0xDEADBEEF}),
       MessageType::kDeleteComponentNetwork},
      {Words({16, kDeleteEntityNetworkType, 0x00010200, 0xDEADBEEF}),
       MessageType::kDeleteEntityNetwork},
      // Empty payloads are valid.
      {Words({24, kPut, 0x00010200, 77, 9, 0}), MessageType::kPutComponent},
      {Words({24, kAppend, 0x00010200, 77, 9, 0}), MessageType::kAppendValue},
      {Words({28, kPutNetwork, 0x00010200, 77, 9, 0xDEADBEEF, 0}),
       MessageType::kPutComponentNetwork},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(ToHex(c.bytes));
    auto whole = test::DecodeWhole(c.bytes);
    ASSERT_TRUE(whole.ok) << ErrorCodeName(whole.error.code);
    ASSERT_EQ(whole.messages.size(), 1u);
    const OwnedMessage& m = whole.messages[0];
    EXPECT_EQ(m.type, c.type);
    EXPECT_EQ(m.entity, 0x00010200u);
    EXPECT_EQ(m.component, HasComponent(c.type) ? 77u : 0u);
    EXPECT_EQ(m.timestamp, HasTimestamp(c.type) ? 9u : 0u);
    EXPECT_EQ(m.network_id, HasNetworkId(c.type) ? 0xDEADBEEFu : 0u);
    EXPECT_TRUE(m.data.empty());
    EXPECT_EQ(ToHex(test::EncodeAll(whole.messages)), ToHex(c.bytes));
  }
}

TEST_F(CrdtCodecValidityTest, MaximumMessageSizeIsInclusive) {
  DecodeOptions small;
  small.max_message_bytes = 100;
  const auto at_max = Padded(Words({100, kPut, 512, 5, 1, 76}), 100);
  auto ok = test::DecodeWhole(at_max, small);
  ASSERT_TRUE(ok.ok) << ErrorCodeName(ok.error.code);
  EXPECT_EQ(ok.messages.at(0).data.size(), 76u);
  // A ceiling below every fixed size acts as kMinMaxMessageBytes.
  DecodeOptions tiny;
  tiny.max_message_bytes = 0;
  const auto at_min = Padded(Words({kMinMaxMessageBytes, kAppend, 512, 5, 1, 40}), 64);
  EXPECT_TRUE(test::DecodeWhole(at_min, tiny).ok);
  for (const auto& g : golden_) {
    if (g.bytes.size() <= kMinMaxMessageBytes) {
      EXPECT_TRUE(test::DecodeWhole(g.bytes, tiny).ok) << "golden line " << g.line;
    }
  }
}

TEST_F(CrdtCodecValidityTest, UnknownTypesAreSkippedByLength) {
  std::vector<uint8_t> stream = golden_.at(0).bytes;
  const std::size_t unknown_at = stream.size();
  test::AppendWords({13, 99}, stream);
  const uint8_t body[] = {1, 2, 3, 4, 5};
  AppendBytes(body, stream);
  test::AppendWords({8, 0}, stream);           // type 0 (RESERVED), empty body
  test::AppendWords({12, 8, 0xCAFE}, stream);  // 8: unity-explorer's AUTHORITATIVE_PUT
  AppendBytes(golden_.at(1).bytes, stream);

  auto whole = test::DecodeWhole(stream);
  ASSERT_TRUE(whole.ok) << ErrorCodeName(whole.error.code);
  ASSERT_EQ(whole.messages.size(), 5u);
  EXPECT_EQ(static_cast<uint32_t>(whole.messages[1].type), 99u);
  EXPECT_EQ(whole.messages[1].data, std::vector<uint8_t>(body, body + 5));
  EXPECT_EQ(static_cast<uint32_t>(whole.messages[2].type), 0u);
  EXPECT_TRUE(whole.messages[2].data.empty());
  EXPECT_EQ(static_cast<uint32_t>(whole.messages[3].type), 8u);
  EXPECT_EQ(whole.messages[3].data, Words({0xCAFE}));
  EXPECT_EQ(whole.messages[4].type, MessageType::kDeleteComponent);
  // Unknown messages re-encode byte-exact (a server relays them).
  EXPECT_EQ(ToHex(test::EncodeAll(whole.messages)), ToHex(stream));

  DecodeOptions reject;
  reject.reject_unknown_types = true;
  auto refused = test::DecodeWhole(stream, reject);
  ASSERT_FALSE(refused.ok);
  EXPECT_EQ(refused.error.code, ErrorCode::kUnknownMessageType);
  EXPECT_EQ(refused.error.offset, unknown_at);
  EXPECT_EQ(refused.messages.size(), 1u);
}

TEST_F(CrdtCodecValidityTest, UnknownTypeWithLengthZeroIsRefused) {
  // @dcl/ecs 7.28 skips unknown types by `length` and spins forever on length 0.
  for (bool reject : {false, true}) {
    DecodeOptions options;
    options.reject_unknown_types = reject;
    std::vector<uint8_t> stream = golden_.at(0).bytes;
    test::AppendWords({0, 99, 0, 0}, stream);
    auto whole = test::DecodeWhole(stream, options);
    ASSERT_FALSE(whole.ok);
    EXPECT_EQ(whole.error.code, ErrorCode::kLengthTooSmall);
    EXPECT_EQ(whole.error.offset, golden_.at(0).bytes.size());
    EXPECT_EQ(whole.messages.size(), 1u);
  }
}

TEST_F(CrdtCodecValidityTest, LegacyDeleteEntityNetworkDeclared12IsRead16Bytes) {
  // @dcl/ecs before 7.28 declared 12 and wrote 16 bytes.
  const std::vector<uint8_t> legacy = Words({12, kDeleteEntityNetworkType, 0x00010200, 0xDEADBEEF});
  auto step = DecodeMessage(legacy, {});
  ASSERT_TRUE(step.has_value());
  ASSERT_EQ(step->kind, DecodeStep::Kind::kMessage);
  EXPECT_EQ(step->size, 16u);
  EXPECT_TRUE(step->message.legacy_length);
  EXPECT_EQ(step->message.type, MessageType::kDeleteEntityNetwork);
  EXPECT_EQ(step->message.entity, 0x00010200u);
  EXPECT_EQ(step->message.network_id, 0xDEADBEEFu);
  EXPECT_EQ(EncodedSize(step->message), 16u);

  // Only 12 bytes (what the length claims) is not a complete message: 4 more are needed.
  auto short_step = DecodeMessage(std::span<const uint8_t>(legacy).first(12), {});
  ASSERT_TRUE(short_step.has_value());
  EXPECT_EQ(short_step->kind, DecodeStep::Kind::kNeedMore);
  EXPECT_EQ(short_step->size, 4u);

  // In a stream, the next message starts after the 16 bytes; the round trip keeps the 12.
  std::vector<uint8_t> stream = legacy;
  AppendBytes(golden_.at(0).bytes, stream);
  AppendBytes(legacy, stream);
  auto whole = test::DecodeWhole(stream);
  ASSERT_TRUE(whole.ok) << ErrorCodeName(whole.error.code);
  ASSERT_EQ(whole.messages.size(), 3u);
  EXPECT_TRUE(whole.messages[0].legacy_length);
  EXPECT_FALSE(whole.messages[1].legacy_length);
  EXPECT_TRUE(whole.messages[2].legacy_length);
  EXPECT_EQ(ToHex(test::EncodeAll(whole.messages)), ToHex(stream));

  // The modern form stays modern.
  auto modern = test::DecodeWhole(golden_.back().bytes);
  ASSERT_TRUE(modern.ok);
  EXPECT_EQ(modern.messages.at(0).type, MessageType::kDeleteEntityNetwork);
  EXPECT_FALSE(modern.messages.at(0).legacy_length);

  // A legacy message cut after its declared 12 bytes is truncated, not complete.
  auto cut = test::DecodeWhole(std::span<const uint8_t>(stream).first(12));
  ASSERT_FALSE(cut.ok);
  EXPECT_EQ(cut.error.code, ErrorCode::kTruncated);

  // The chunked decoder agrees at every split.
  for (std::size_t i = 0; i <= stream.size(); ++i) {
    const std::size_t cuts[] = {i};
    auto chunked = test::DecodeChunked(stream, cuts);
    ASSERT_TRUE(chunked.ok) << "cut " << i;
    EXPECT_EQ(chunked.messages, whole.messages) << "cut " << i;
  }
}

TEST_F(CrdtCodecValidityTest, LegacyLengthIsOnlyForDeleteEntityNetwork) {
  // The encoder ignores legacy_length on other types.
  OwnedMessage m;
  m.type = MessageType::kDeleteEntity;
  m.entity = 512;
  m.legacy_length = true;
  EXPECT_EQ(ToHex(test::EncodeAll({m})), ToHex(Words({12, kDeleteEntityType, 512})));
}

TEST_F(CrdtCodecValidityTest, ErrorInASplitMessageCarriesItsStreamOffset) {
  std::vector<uint8_t> stream = stream_;
  // A PUT whose dataLength disagrees, split across the chunk boundary in its fixed fields.
  AppendBytes(Padded(Words({30, kPut, 512, 1, 1, 7}), 30), stream);
  for (std::size_t cut = stream_.size(); cut < stream.size(); ++cut) {
    const std::size_t cuts[] = {cut};
    auto chunked = test::DecodeChunked(stream, cuts);
    ASSERT_FALSE(chunked.ok) << "cut " << cut;
    EXPECT_EQ(chunked.error.code, ErrorCode::kDataLengthMismatch);
    EXPECT_EQ(chunked.error.offset, stream_.size());
    EXPECT_EQ(chunked.messages.size(), golden_.size());
  }
}

TEST_F(CrdtCodecValidityTest, FailedStreamDecoderStaysFailedUntilReset) {
  CrdtStreamDecoder decoder;
  int messages = 0;
  auto count = [&](const CrdtMessage&) { ++messages; };
  ASSERT_TRUE(decoder.Feed(golden_.at(0).bytes, count).has_value());
  EXPECT_EQ(messages, 1);
  const std::vector<uint8_t> bad = Words({5, kPut});
  auto failed = decoder.Feed(bad, count);
  ASSERT_FALSE(failed.has_value());
  EXPECT_EQ(failed.error().code, ErrorCode::kLengthTooSmall);
  EXPECT_EQ(failed.error().offset, golden_.at(0).bytes.size());
  EXPECT_TRUE(decoder.failed());

  // Valid bytes afterwards change nothing: same error, no messages.
  for (int i = 0; i < 3; ++i) {
    auto again = decoder.Feed(stream_, count);
    ASSERT_FALSE(again.has_value());
    EXPECT_EQ(again.error().code, ErrorCode::kLengthTooSmall);
    EXPECT_EQ(again.error().offset, golden_.at(0).bytes.size());
    EXPECT_TRUE(decoder.failed());
  }
  auto empty = decoder.Feed({}, count);
  EXPECT_FALSE(empty.has_value());
  EXPECT_EQ(messages, 1);

  decoder.Reset();
  EXPECT_FALSE(decoder.failed());
  EXPECT_EQ(decoder.consumed_bytes(), 0u);
  EXPECT_EQ(decoder.pending_bytes(), 0u);
  EXPECT_EQ(decoder.bytes_needed(), 0u);
  ASSERT_TRUE(decoder.Feed(stream_, count).has_value());
  EXPECT_EQ(messages, 1 + static_cast<int>(golden_.size()));
  EXPECT_EQ(decoder.consumed_bytes(), stream_.size());
}

TEST_F(CrdtCodecValidityTest, ResetDropsAPartialMessage) {
  CrdtStreamDecoder decoder;
  int messages = 0;
  auto count = [&](const CrdtMessage&) { ++messages; };
  ASSERT_TRUE(decoder.Feed(std::span<const uint8_t>(stream_).first(30), count).has_value());
  EXPECT_EQ(decoder.pending_bytes(), 30u);
  decoder.Reset();
  EXPECT_EQ(decoder.pending_bytes(), 0u);
  ASSERT_TRUE(decoder.Feed(stream_, count).has_value());
  EXPECT_EQ(messages, static_cast<int>(golden_.size()));
  EXPECT_EQ(decoder.pending_bytes(), 0u);
}

TEST_F(CrdtCodecValidityTest, LargestAllowedMessageIsBufferedAcrossManyChunks) {
  DecodeOptions options;
  options.max_message_bytes = 4096;
  std::vector<uint8_t> stream = Padded(Words({4096, kAppend, 512, 3, 4, 4096 - 24}), 4096);
  AppendBytes(golden_.at(1).bytes, stream);
  std::vector<std::size_t> cuts;
  for (std::size_t i = 1; i < stream.size(); i += 7) cuts.push_back(i);
  auto chunked = test::DecodeChunked(stream, cuts, options);
  ASSERT_TRUE(chunked.ok) << ErrorCodeName(chunked.error.code);
  ASSERT_EQ(chunked.messages.size(), 2u);
  EXPECT_EQ(chunked.messages[0].data.size(), 4096u - 24u);
  EXPECT_EQ(chunked.messages, test::DecodeWhole(stream, options).messages);
}

}  // namespace
}  // namespace scenecrdt::protocol
