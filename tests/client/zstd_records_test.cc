// SPDX-License-Identifier: Apache-2.0
// The client's reader of "zstd frames" records (protocol/session/zstd_records.h): frames come
// back byte for byte whatever the cut, small frames travel plain, and a record that breaks
// a rule or a bound is refused with the reason, before anything is decompressed when its
// header already says too much.
#include "scenecrdt/protocol/session/zstd_records.h"

#include <gtest/gtest.h>
#include <zstd.h>

#include <cstring>

#include "scenecrdt/protocol/crdt_codec.h"
#include "scenecrdt/protocol/session/envelope.h"

namespace scenecrdt::session {
namespace {

// A Crdt frame of `movers` moving Transforms (what a scene fans out).
std::vector<uint8_t> TransformFrame(uint32_t movers, uint32_t tick) {
  std::vector<uint8_t> dcl;
  for (uint32_t k = 0; k < movers; ++k) {
    protocol::Transform t;
    t.position = {static_cast<float>(tick) * 0.1f + static_cast<float>(k), 1.0f,
                  static_cast<float>(k)};
    protocol::AppendTransformPut(1000 + k, tick, t, dcl);
  }
  Crdt crdt;
  crdt.scene_sequence = tick;
  crdt.data = dcl;
  return BuildFrame(crdt);
}

struct Collected {
  std::vector<std::vector<uint8_t>> frames;
  ZstdRecordReader::FrameSink Sink() {
    return [this](std::span<const uint8_t> f) {
      EXPECT_EQ(reinterpret_cast<std::uintptr_t>(f.data()) % 8, 0u);
      frames.emplace_back(f.begin(), f.end());
      return true;
    };
  }
};

void PutU32(uint32_t v, std::vector<uint8_t>& out) {
  for (int i = 0; i < 4; ++i) out.push_back(static_cast<uint8_t>(v >> (8 * i)));
}

// A compressed record around whatever bytes `content` holds (not necessarily a frame).
std::vector<uint8_t> RecordOf(std::span<const uint8_t> content, bool content_size = true) {
  ZSTD_CCtx* c = ZSTD_createCCtx();
  ZSTD_CCtx_setParameter(c, ZSTD_c_contentSizeFlag, content_size ? 1 : 0);
  std::vector<uint8_t> z(ZSTD_compressBound(content.size()));
  std::size_t n = 0;
  if (content_size) {
    n = ZSTD_compress2(c, z.data(), z.size(), content.data(), content.size());
  } else {
    ZSTD_inBuffer in{content.data(), content.size(), 0};
    ZSTD_outBuffer out{z.data(), z.size(), 0};
    ZSTD_compressStream2(c, &out, &in, ZSTD_e_end);
    n = out.pos;
  }
  ZSTD_freeCCtx(c);
  z.resize(n);
  std::vector<uint8_t> record;
  PutU32(kCompressedRecordBit | static_cast<uint32_t>(n), record);
  record.insert(record.end(), z.begin(), z.end());
  return record;
}

TEST(ZstdRecordsTest, FramesRoundTripWhateverTheCut) {
  ZstdRecordEncoder encoder;
  std::vector<std::vector<uint8_t>> frames;
  std::vector<uint8_t> wire;
  std::size_t plain = 0;
  for (uint32_t tick = 1; tick <= 20; ++tick) {
    frames.push_back(TransformFrame(50, tick));
    frames.push_back(BuildFrame(Ack{tick}));  // small: stays a plain frame
    for (std::size_t i = frames.size() - 2; i < frames.size(); ++i) {
      const std::vector<uint8_t> record = encoder.Encode(frames[i]);
      plain += frames[i].size();
      wire.insert(wire.end(), record.begin(), record.end());
    }
    EXPECT_EQ(encoder.Encode(frames.back()), frames.back()) << "an Ack is sent as it is";
  }
  EXPECT_LT(wire.size() * 3, plain) << "50 moving Transforms should shrink at least 3x";
  for (std::size_t piece : {std::size_t{1}, std::size_t{7}, std::size_t{4096}, wire.size()}) {
    ZstdRecordReader reader(1u << 20);
    Collected got;
    for (std::size_t pos = 0; pos < wire.size(); pos += piece) {
      const auto part =
          std::span<const uint8_t>(wire).subspan(pos, std::min(piece, wire.size() - pos));
      ASSERT_TRUE(reader.Feed(part, got.Sink()).has_value()) << "piece " << piece;
    }
    EXPECT_EQ(got.frames, frames) << "piece " << piece;
    for (const auto& f : got.frames) EXPECT_TRUE(ReadFrame(f, {1u << 20}).has_value());
  }
}

Error FeedError(std::span<const uint8_t> wire, uint32_t max_frame = 1u << 20) {
  ZstdRecordReader reader(max_frame);
  Collected got;
  auto fed = reader.Feed(wire, got.Sink());
  EXPECT_FALSE(fed.has_value());
  EXPECT_TRUE(got.frames.empty());
  // Unusable afterwards.
  EXPECT_FALSE(reader.Feed(BuildFrame(Ack{1}), got.Sink()).has_value());
  return fed.has_value() ? MakeError(ErrorCode::kOk, "") : fed.error();
}

TEST(ZstdRecordsTest, RecordsBreakingARuleAreRefused) {
  const std::vector<uint8_t> frame = TransformFrame(20, 1);
  // Content above the reader's frame limit: refused from the zstd header (a bomb guard).
  EXPECT_EQ(FeedError(RecordOf(frame), 1000).code, ErrorCode::kFrameTooLarge);
  // A record word announcing more than a frame at the limit can compress to.
  std::vector<uint8_t> huge;
  PutU32(kCompressedRecordBit | 0x7ffffff0u, huge);
  huge.resize(64, 0);
  EXPECT_EQ(FeedError(huge).code, ErrorCode::kFrameTooLarge);
  // A plain frame above the limit.
  EXPECT_EQ(FeedError(frame, 100).code, ErrorCode::kFrameTooLarge);
  // No content size in the zstd frame: the output cannot be bounded up front.
  EXPECT_EQ(FeedError(RecordOf(frame, /*content_size=*/false)).code, ErrorCode::kCorruptData);
  // Content that is not exactly one frame (two frames, or a frame cut short).
  std::vector<uint8_t> two = frame;
  two.insert(two.end(), frame.begin(), frame.end());
  EXPECT_EQ(FeedError(RecordOf(two)).code, ErrorCode::kEnvelopeInvalid);
  EXPECT_EQ(FeedError(RecordOf(std::span<const uint8_t>(frame).first(frame.size() - 1))).code,
            ErrorCode::kEnvelopeInvalid);
  // Two zstd frames in one record.
  std::vector<uint8_t> doubled = RecordOf(frame);
  const std::vector<uint8_t> z(doubled.begin() + 4, doubled.end());
  doubled.insert(doubled.end(), z.begin(), z.end());
  const uint32_t length = static_cast<uint32_t>(2 * z.size());
  doubled[0] = static_cast<uint8_t>(length);
  doubled[1] = static_cast<uint8_t>(length >> 8);
  doubled[2] = static_cast<uint8_t>(length >> 16);
  doubled[3] = static_cast<uint8_t>((length >> 24) | 0x80);
  EXPECT_EQ(FeedError(doubled).code, ErrorCode::kCorruptData);
  // Corrupt compressed bytes, and an empty record.
  std::vector<uint8_t> corrupt = RecordOf(frame);
  for (std::size_t i = 12; i < corrupt.size(); ++i) corrupt[i] ^= 0x5a;
  EXPECT_NE(FeedError(corrupt).code, ErrorCode::kOk);
  std::vector<uint8_t> empty;
  PutU32(kCompressedRecordBit, empty);
  EXPECT_EQ(FeedError(empty).code, ErrorCode::kEnvelopeInvalid);
}

TEST(ZstdRecordsTest, MemoryStaysBoundedByOneFrame) {
  ZstdRecordEncoder encoder;
  ZstdRecordReader reader(1u << 20);
  Collected got;
  for (uint32_t tick = 1; tick <= 5; ++tick) {
    // A 300 KB state-sized frame, then small ones: capacity above 1 MiB is not kept.
    const std::vector<uint8_t> record = encoder.Encode(TransformFrame(tick == 1 ? 4000 : 50, tick));
    ASSERT_TRUE(reader.Feed(record, got.Sink()).has_value());
  }
  EXPECT_EQ(got.frames.size(), 5u);
  EXPECT_LT(reader.memory_bytes(), std::size_t{2} << 20);
  EXPECT_GT(encoder.memory_bytes(), 0u);
}

}  // namespace
}  // namespace scenecrdt::session
