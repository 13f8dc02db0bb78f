// SPDX-License-Identifier: Apache-2.0
// Tests the framed TCP transport's zstd stream (protocol/session/zstd_stream.h): frames come
// back byte for byte whatever the cut of the compressed bytes, memory stays bounded, and
// corrupt streams, oversized windows and decompression bombs are refused before buffering.
#include "scenecrdt/protocol/session/zstd_stream.h"

#include <gtest/gtest.h>
#include <zstd.h>

#include <random>
#include <vector>

#include "scenecrdt/protocol/crdt_codec.h"
#include "scenecrdt/protocol/session/envelope.h"

namespace scenecrdt::session {
namespace {

// A tick of `movers` moving Transforms in one Crdt frame, as the scene fans it out.
std::vector<uint8_t> TickFrame(uint32_t tick, uint32_t movers) {
  std::vector<uint8_t> dcl;
  for (uint32_t k = 0; k < movers; ++k) {
    protocol::Transform t;
    t.position = {static_cast<float>(tick) * 0.1f + static_cast<float>(k), 1.0f, 2.0f};
    protocol::AppendTransformPut(1000 + k, tick + 1, t, dcl);
  }
  return BuildFrame(Crdt{0, tick, false, dcl});
}

struct Collected {
  std::vector<std::vector<uint8_t>> frames;
  ZstdFrameReader::FrameSink Sink() {
    return [this](std::span<const uint8_t> f) {
      EXPECT_EQ(reinterpret_cast<std::uintptr_t>(f.data()) % 8, 0u);
      EXPECT_TRUE(ReadFrame(f).has_value());
      frames.emplace_back(f.begin(), f.end());
      return true;
    };
  }
};

TEST(ZstdStreamTest, FramesSurviveAnyCutOfTheStream) {
  ZstdEncoder encoder;
  std::vector<std::vector<uint8_t>> sent;
  std::vector<uint8_t> wire;
  std::size_t plain = 0;
  for (uint32_t tick = 0; tick < 200; ++tick) {
    // One write: an Ack-sized frame and a tick, flushed together.
    sent.push_back(BuildFrame(Ack{tick}));
    sent.push_back(TickFrame(tick, 100));
    encoder.Compress(sent[sent.size() - 2], false, wire);
    encoder.Compress(sent.back(), true, wire);
    plain += sent[sent.size() - 2].size() + sent.back().size();
  }
  // The Transform stream compresses well (the documented ratio is measured in the load run).
  EXPECT_LT(wire.size() * 3, plain);
  std::mt19937 rng(7);
  for (int round = 0; round < 5; ++round) {
    ZstdFrameReader reader(1u << 20);
    Collected got;
    std::size_t pos = 0;
    while (pos < wire.size()) {
      const std::size_t n = std::min<std::size_t>(wire.size() - pos, 1 + rng() % 3000);
      ASSERT_TRUE(
          reader.Feed(std::span<const uint8_t>(wire).subspan(pos, n), got.Sink()).has_value());
      pos += n;
    }
    EXPECT_EQ(got.frames, sent);
    // One frame of buffer plus the decompression context (window 2^15).
    EXPECT_LT(reader.memory_bytes(), 512u * 1024);
  }
}

TEST(ZstdStreamTest, EveryFlushedWriteIsDecodableAtOnce) {
  ZstdEncoder encoder;
  ZstdFrameReader reader(1u << 20);
  for (uint32_t tick = 0; tick < 20; ++tick) {
    std::vector<uint8_t> wire;
    const auto frame = TickFrame(tick, 10);
    encoder.Compress(frame, true, wire);
    Collected got;
    ASSERT_TRUE(reader.Feed(wire, got.Sink()).has_value());
    ASSERT_EQ(got.frames.size(), 1u) << "a flushed write must not wait for the next one";
    EXPECT_EQ(got.frames[0], frame);
  }
  EXPECT_LT(encoder.memory_bytes(), 2u << 20);
}

TEST(ZstdStreamTest, OversizedFrameIsRefusedBeforeItIsDecompressed) {
  // A bomb: a prefix announcing 64 MiB followed by zeros that compress to almost nothing.
  std::vector<uint8_t> bomb(16u << 20, 0);
  bomb[0] = 0;
  bomb[1] = 0;
  bomb[2] = 0;
  bomb[3] = 4;  // 64 MiB body
  ZstdEncoder encoder;
  std::vector<uint8_t> wire;
  encoder.Compress(bomb, true, wire);
  ASSERT_LT(wire.size(), 8192u);
  ZstdFrameReader reader(1u << 20);
  Collected got;
  auto fed = reader.Feed(wire, got.Sink());
  ASSERT_FALSE(fed.has_value());
  EXPECT_EQ(fed.error().code, ErrorCode::kFrameTooLarge);
  EXPECT_TRUE(got.frames.empty());
  EXPECT_LT(reader.memory_bytes(), 512u * 1024);
  // Unusable afterwards.
  EXPECT_FALSE(reader.Feed(wire, got.Sink()).has_value());
}

TEST(ZstdStreamTest, EmptyFrameIsRefused) {
  std::vector<uint8_t> plain = {0, 0, 0, 0, 0, 0, 0, 0};
  ZstdEncoder encoder;
  std::vector<uint8_t> wire;
  encoder.Compress(plain, true, wire);
  ZstdFrameReader reader(1u << 20);
  Collected got;
  auto fed = reader.Feed(wire, got.Sink());
  ASSERT_FALSE(fed.has_value());
  EXPECT_EQ(fed.error().code, ErrorCode::kEnvelopeInvalid);
}

TEST(ZstdStreamTest, GarbageAndLargeWindowsAreRefused) {
  {
    ZstdFrameReader reader(1u << 20);
    Collected got;
    const std::vector<uint8_t> garbage(100, 0x5a);
    auto fed = reader.Feed(garbage, got.Sink());
    ASSERT_FALSE(fed.has_value());
    EXPECT_EQ(fed.error().code, ErrorCode::kCorruptData);
  }
  {
    // A stream whose window (2^24) is above what a receiver accepts.
    ZSTD_CCtx* cctx = ZSTD_createCCtx();
    ZSTD_CCtx_setParameter(cctx, ZSTD_c_windowLog, 24);
    const auto frame = TickFrame(1, 10);
    std::vector<uint8_t> wire(ZSTD_compressBound(frame.size()) + 64);
    ZSTD_outBuffer out{wire.data(), wire.size(), 0};
    ZSTD_inBuffer in{frame.data(), frame.size(), 0};
    ASSERT_FALSE(ZSTD_isError(ZSTD_compressStream2(cctx, &out, &in, ZSTD_e_flush)));
    ZSTD_freeCCtx(cctx);
    wire.resize(out.pos);
    ZstdFrameReader reader(1u << 20);
    Collected got;
    auto fed = reader.Feed(wire, got.Sink());
    ASSERT_FALSE(fed.has_value());
    EXPECT_EQ(fed.error().code, ErrorCode::kCorruptData);
    EXPECT_TRUE(got.frames.empty());
  }
}

TEST(ZstdStreamTest, SinkCanStopTheReader) {
  ZstdEncoder encoder;
  std::vector<uint8_t> wire;
  for (uint32_t i = 0; i < 3; ++i) encoder.Compress(BuildFrame(Ack{i}), i == 2, wire);
  ZstdFrameReader reader(1u << 20);
  int calls = 0;
  ASSERT_TRUE(reader
                  .Feed(wire,
                        [&](std::span<const uint8_t>) {
                          ++calls;
                          return false;
                        })
                  .has_value());
  EXPECT_EQ(calls, 1);
}

}  // namespace
}  // namespace scenecrdt::session
