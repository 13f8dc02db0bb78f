// SPDX-License-Identifier: Apache-2.0
// The client's frames under the server's frame limit (docs/PROTOCOL.md section 2, "Frame
// limit"; issue 23 item 14), over tcp:// and ws://, against an in-process server with a small
// --max-frame-bytes: the Welcome tells the limit; Flush cuts buffered writes under it; over
// WebSocket the frames gathered into one message stay under it too; SendCrdt cuts a large
// stream at message boundaries and refuses, before sending anything, a message no frame can
// carry. Without these, the server ends the session (frame_too_large, or WebSocket 1009).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "scenecrdt/client/client.h"
#include "tests/client/test_server.h"

namespace scenecrdt::client::test {
namespace {

using namespace std::chrono_literals;

constexpr uint32_t kLimit = 16u << 10;
constexpr std::size_t kEnvelopeBytes = 128;  // session::kCrdtFrameOverheadBytes

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

class ClientFramesTest : public ::testing::TestWithParam<bool> {
 protected:
  void SetUp() override {
    server_.config().limits.max_frame_bytes = kLimit;
    ASSERT_TRUE(server_.Start());
  }

  ClientOptions Options(const std::string& scene) {
    ClientOptions o;
    o.url = GetParam() ? server_.ws_url() : server_.tcp_url();
    o.scene = scene;
    o.log = [this](std::string_view line) { log_.emplace_back(line); };
    return o;
  }

  // Joins `c`, recording the DCL size of every frame it sends.
  void Join(Client& c) {
    c.on_send = [this](uint64_t, std::span<const uint8_t> dcl, bool) {
      sent_sizes_.push_back(dcl.size());
    };
    ASSERT_TRUE(c.Join(20s).has_value());
  }

  // Every frame within the limit, the session never ended, no refusal.
  void ExpectNoRefusal(Client& c) {
    for (const Refusal& r : c.TakeRefusals()) ADD_FAILURE() << r.text;
    EXPECT_FALSE(c.closed()) << c.close_error().detail;
    EXPECT_EQ(c.stats().connects, 1u);
    for (std::size_t size : sent_sizes_) EXPECT_LE(size, kLimit - kEnvelopeBytes);
  }

  TestServer server_;
  std::vector<std::string> log_;
  std::vector<std::size_t> sent_sizes_;
};

INSTANTIATE_TEST_SUITE_P(Transports, ClientFramesTest, ::testing::Bool(),
                         [](const auto& p) { return p.param ? "WebSocket" : "Tcp"; });

TEST_P(ClientFramesTest, TheWelcomeTellsTheServersFrameLimit) {
  Client c(Options("limit"));
  // Before the Welcome: the documented default, 1 MiB.
  EXPECT_EQ(c.max_crdt_bytes(), (1u << 20) - kEnvelopeBytes);
  Join(c);
  ASSERT_TRUE(c.welcome().has_value());
  EXPECT_EQ(c.welcome()->max_frame_bytes, kLimit);
  EXPECT_EQ(c.max_crdt_bytes(), kLimit - kEnvelopeBytes);
}

TEST_P(ClientFramesTest, BufferedWritesAreCutUnderTheLimit) {
  Client writer(Options("writes"));
  Join(writer);
  constexpr uint32_t kWrites = 2000;  // 136 000 bytes of Transform PUTs: 9 frames or more
  for (uint32_t i = 0; i < kWrites; ++i) {
    protocol::Transform t;
    t.position = {static_cast<float>(i), 1.0f, 2.0f};
    ASSERT_TRUE(writer.WriteTransform(512 + i, t).has_value());
  }
  writer.Flush();
  EXPECT_TRUE(writer.PollUntil(
      [&] {
        return writer.closed() || (writer.unsent_writes() == 0 && writer.pending_frames() == 0);
      },
      30s));
  ExpectNoRefusal(writer);
  EXPECT_GE(sent_sizes_.size(), 9u);
  EXPECT_EQ(server_.SceneHash("writes"), writer.store().StateHashHex());
}

TEST_P(ClientFramesTest, SendCrdtCutsAtMessageBoundaries) {
  Client writer(Options("stream"));
  Join(writer);
  std::vector<uint8_t> dcl;
  for (uint32_t e = 0; e < 200; ++e) AppendPut(dcl, 600 + e, 1000);  // 204 800 bytes
  const uint64_t last = writer.SendCrdt(dcl);
  ASSERT_NE(last, 0u);
  EXPECT_EQ(last, writer.last_frame_sequence());
  EXPECT_TRUE(writer.PollUntil(
      [&] { return writer.closed() || writer.acked_frame_sequence() >= last; }, 30s));
  ExpectNoRefusal(writer);
  EXPECT_GE(sent_sizes_.size(), 13u);
  std::size_t total = 0;
  for (std::size_t size : sent_sizes_) total += size;
  EXPECT_EQ(total, dcl.size());
  EXPECT_EQ(server_.SceneHash("stream"), ReplayHash(dcl));
}

TEST_P(ClientFramesTest, AMessageNoFrameCarriesIsRefusedBeforeSending) {
  Client writer(Options("oversized"));
  Join(writer);
  const std::string before = writer.store().StateHashHex();
  std::vector<uint8_t> dcl;
  AppendPut(dcl, 700, 10);
  AppendPut(dcl, 701, kLimit);  // alone larger than a frame
  EXPECT_EQ(writer.SendCrdt(dcl), 0u);
  EXPECT_EQ(writer.pending_frames(), 0u);
  EXPECT_TRUE(sent_sizes_.empty());
  EXPECT_EQ(writer.store().StateHashHex(), before) << "nothing merged";
  bool said = false;
  for (const std::string& line : log_) said |= line.find("frame limit") != std::string::npos;
  EXPECT_TRUE(said) << "a log line names the frame limit";
  // The session goes on: a later write is sent and acknowledged.
  std::vector<uint8_t> small;
  AppendPut(small, 702, 10);
  const uint64_t fs = writer.SendCrdt(small);
  ASSERT_NE(fs, 0u);
  EXPECT_TRUE(writer.PollUntil(
      [&] { return writer.closed() || writer.acked_frame_sequence() >= fs; }, 20s));
  ExpectNoRefusal(writer);
}

}  // namespace
}  // namespace scenecrdt::client::test
