// SPDX-License-Identifier: Apache-2.0
// Tests the frame limit a client sends under (docs/PROTOCOL.md section 2, "Frame limit"):
// Welcome.max_frame_bytes (absent from older servers: the documented default), the bound on
// what a Crdt frame adds to its data, and SplitCrdtStream (protocol/session/crdt_split.h),
// which cuts a DCL stream into frames under it.
#include <flatbuffers/flatbuffers.h>
#include <gtest/gtest.h>
#include <rapidcheck.h>
#include <rapidcheck/gtest.h>

#include <cstring>
#include <limits>
#include <vector>

#include "envelope_generated.h"
#include "scenecrdt/protocol/session/crdt_split.h"
#include "scenecrdt/protocol/session/envelope.h"

namespace scenecrdt::session {
namespace {

void PutU32(std::vector<uint8_t>& out, uint32_t v) {
  for (int i = 0; i < 4; ++i) out.push_back(static_cast<uint8_t>(v >> (8 * i)));
}

// A PUT_COMPONENT of component 1500 with `payload` bytes (docs/PROTOCOL.md section 1).
void AppendPut(std::vector<uint8_t>& out, uint32_t entity, uint32_t payload) {
  PutU32(out, 24 + payload);
  PutU32(out, 1);
  PutU32(out, entity);
  PutU32(out, 1500);
  PutU32(out, 1);
  PutU32(out, payload);
  out.insert(out.end(), payload, static_cast<uint8_t>(entity));
}

// A Welcome as a server older than max_frame_bytes builds it (the field absent).
std::vector<uint8_t> OldWelcome() {
  flatbuffers::FlatBufferBuilder b;
  fb::WelcomeBuilder w(b);
  w.add_session_id(9);
  w.add_can_write(true);
  auto welcome = w.Finish();
  auto env = fb::CreateEnvelope(b, kProtocolVersion, fb::Payload::Welcome, welcome.Union());
  b.FinishSizePrefixed(env, fb::EnvelopeIdentifier());
  return std::vector<uint8_t>(b.GetBufferPointer(), b.GetBufferPointer() + b.GetSize());
}

TEST(FrameLimitTest, WelcomeCarriesTheServersFrameLimit) {
  Welcome sent{1, 2, false, true};
  sent.max_frame_bytes = 64u << 10;
  auto read = ReadFrame(BuildFrame(sent));
  ASSERT_TRUE(read.has_value());
  const auto& got = std::get<Welcome>(read.value());
  EXPECT_EQ(got.max_frame_bytes, 64u << 10);
  EXPECT_EQ(ServerMaxFrameBytes(got), 64u << 10);
  // An older server does not say it: the documented default, the server's own default.
  auto old = ReadFrame(OldWelcome());
  ASSERT_TRUE(old.has_value());
  EXPECT_EQ(std::get<Welcome>(old.value()).max_frame_bytes, 0u);
  EXPECT_EQ(ServerMaxFrameBytes(std::get<Welcome>(old.value())), 1u << 20);
  EXPECT_EQ(kDefaultServerMaxFrameBytes, 1u << 20);
  // Below the smallest limit `serve` accepts: a broken server, refused.
  sent.max_frame_bytes = kMinServerMaxFrameBytes;
  EXPECT_TRUE(ReadFrame(BuildFrame(sent)).has_value());
  sent.max_frame_bytes = kMinServerMaxFrameBytes - 1;
  auto low = ReadFrame(BuildFrame(sent));
  ASSERT_FALSE(low.has_value());
  EXPECT_EQ(low.error().code, ErrorCode::kEnvelopeInvalid);
}

TEST(FrameLimitTest, CrdtFrameOverheadIsBounded) {
  constexpr uint64_t kMax = std::numeric_limits<uint64_t>::max();
  std::vector<uint8_t> data;
  for (std::size_t n = 0; n <= 4096; n = n < 64 ? n + 1 : n * 2 + 7) {
    data.assign(n, 0xAB);
    for (bool is_state : {false, true}) {
      const auto frame = BuildFrame(Crdt{kMax, kMax, is_state, data});
      EXPECT_LE(frame.size(), n + kCrdtFrameOverheadBytes) << n << " data bytes";
    }
  }
  // The most data MaxCrdtDataBytes allows fits the limit.
  for (uint32_t limit : {200u, 4096u, 16u << 10, 1u << 20}) {
    data.assign(MaxCrdtDataBytes(limit), 1);
    const auto frame = BuildFrame(Crdt{kMax, kMax, true, data});
    EXPECT_LE(frame.size(), limit);
    ReadOptions options;
    options.max_frame_bytes = limit;
    EXPECT_TRUE(ReadFrame(frame, options).has_value()) << limit;
  }
  EXPECT_EQ(MaxCrdtDataBytes(64), 0u);
  EXPECT_EQ(MaxCrdtDataBytes(kCrdtFrameOverheadBytes), 0u);
}

TEST(SplitCrdtStreamTest, Validity) {
  std::vector<uint8_t> one;
  AppendPut(one, 512, 100);
  // Empty: no parts.
  auto empty = SplitCrdtStream({}, 1000);
  ASSERT_TRUE(empty.has_value());
  EXPECT_TRUE(empty->empty());
  // A message no part can carry: kFrameTooLarge at its offset.
  std::vector<uint8_t> big = one;
  AppendPut(big, 513, 2000);
  auto too_large = SplitCrdtStream(big, 1000);
  ASSERT_FALSE(too_large.has_value());
  EXPECT_EQ(too_large.error().code, ErrorCode::kFrameTooLarge);
  EXPECT_EQ(too_large.error().offset, one.size());
  EXPECT_EQ(MessageLengthAt(big, one.size()), 2024u);
  // Not whole messages: a cut header, a cut body, a length below the header.
  std::vector<uint8_t> cut_header = one;
  cut_header.insert(cut_header.end(), {9, 0, 0});
  auto r = SplitCrdtStream(cut_header, 1000);
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().code, ErrorCode::kTruncated);
  EXPECT_EQ(r.error().offset, one.size());
  std::vector<uint8_t> cut_body(one.begin(), one.end() - 1);
  r = SplitCrdtStream(cut_body, 1000);
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().code, ErrorCode::kTruncated);
  EXPECT_EQ(r.error().offset, 0u);
  std::vector<uint8_t> short_length = one;
  short_length[0] = 7;
  r = SplitCrdtStream(short_length, 1000);
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().code, ErrorCode::kLengthTooSmall);
  EXPECT_EQ(MessageLengthAt(one, one.size() - 3), 0u);  // fewer than 4 bytes left
}

TEST(SplitCrdtStreamTest, ExactFitsAndCounts) {
  std::vector<uint8_t> dcl;
  for (uint32_t e = 0; e < 10; ++e) AppendPut(dcl, 512 + e, 76);  // 100 bytes each
  auto exact = SplitCrdtStream(dcl, 300);
  ASSERT_TRUE(exact.has_value());
  ASSERT_EQ(exact->size(), 4u);  // 3 + 3 + 3 + 1 messages
  EXPECT_EQ((*exact)[0].bytes, 300u);
  EXPECT_EQ((*exact)[3].offset, 900u);
  EXPECT_EQ((*exact)[3].messages, 1u);
  auto counted = SplitCrdtStream(dcl, 1u << 20, 4);
  ASSERT_TRUE(counted.has_value());
  ASSERT_EQ(counted->size(), 3u);  // 4 + 4 + 2
  EXPECT_EQ((*counted)[2].messages, 2u);
  auto whole = SplitCrdtStream(dcl, dcl.size());
  ASSERT_TRUE(whole.has_value());
  ASSERT_EQ(whole->size(), 1u);
  EXPECT_EQ((*whole)[0].messages, 10u);
}

// Parts are the stream in order, each within both bounds, and each as full as the next
// message allows (a greedy cut: no part could have taken the next part's first message).
RC_GTEST_PROP(SplitCrdtStreamTest, PartsCoverTheStreamWithinBothBounds, ()) {
  std::vector<uint8_t> dcl;
  const auto payloads = *rc::gen::container<std::vector<uint32_t>>(rc::gen::inRange(0u, 600u));
  for (std::size_t i = 0; i < payloads.size(); ++i) {
    AppendPut(dcl, static_cast<uint32_t>(512 + i), payloads[i]);
  }
  const std::size_t max_bytes = *rc::gen::inRange<std::size_t>(624, 5000);
  const uint64_t max_messages = *rc::gen::inRange<uint64_t>(0, 20);
  auto parts = SplitCrdtStream(dcl, max_bytes, max_messages);
  RC_ASSERT(parts.has_value());
  std::size_t next = 0;
  uint64_t messages = 0;
  for (std::size_t i = 0; i < parts->size(); ++i) {
    const CrdtPart& p = (*parts)[i];
    RC_ASSERT(p.offset == next);
    RC_ASSERT(p.bytes <= max_bytes);
    RC_ASSERT(p.messages >= 1u);
    RC_ASSERT(max_messages == 0 || p.messages <= max_messages);
    next += p.bytes;
    messages += p.messages;
    if (i + 1 < parts->size()) {
      const bool full_count = max_messages != 0 && p.messages == max_messages;
      RC_ASSERT(full_count || p.bytes + MessageLengthAt(dcl, next) > max_bytes);
    }
  }
  RC_ASSERT(next == dcl.size());
  RC_ASSERT(messages == payloads.size());
}

}  // namespace
}  // namespace scenecrdt::session
