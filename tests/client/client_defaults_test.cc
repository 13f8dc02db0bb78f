// SPDX-License-Identifier: Apache-2.0
// The client's defaults (docs/CLIENT.md "Compression"): a default ClientOptions offers zstd
// frames on tcp:// and still reads a server that does not compress.
#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <vector>

#include "scenecrdt/client/client.h"
#include "scenecrdt/protocol/crdt_codec.h"
#include "tests/client/test_server.h"

namespace scenecrdt::client::test {
namespace {

using namespace std::chrono_literals;

ClientOptions Defaults(const std::string& url, const std::string& scene) {
  ClientOptions o;  // nothing else changed: what the C ABI, C# and Python get
  o.url = url;
  o.scene = scene;
  return o;
}

// A writer sends 30 ticks of 20 moving Transforms; the reader's replica reaches the scene's
// state.
void WriteAndConverge(TestServer& server, const std::string& scene, Client& writer,
                      Client& reader) {
  for (uint32_t tick = 1; tick <= 30; ++tick) {
    std::vector<uint8_t> dcl;
    for (uint32_t k = 0; k < 20; ++k) {
      protocol::Transform t;
      t.position = {static_cast<float>(tick) * 0.5f, static_cast<float>(k), 1.0f};
      protocol::AppendTransformPut(700 + k, tick, t, dcl);
    }
    writer.SendCrdt(dcl);
  }
  ASSERT_TRUE(reader.PollUntil(
      [&] {
        writer.Poll();
        return reader.store().StateHashHex() == server.SceneHash(scene) &&
               reader.store().StateHashHex() != runtime::CrdtStore().StateHashHex();
      },
      30s));
}

TEST(ClientDefaultsTest, DefaultOptionsReadZstdFramesFromADefaultServer) {
  TestServer server;
  ASSERT_TRUE(server.Start());
  Client writer(Defaults(server.tcp_url(), "dz"));
  Client reader(Defaults(server.tcp_url(), "dz"));
  ASSERT_TRUE(writer.Join(10s).has_value());
  ASSERT_TRUE(reader.Join(10s).has_value());
  WriteAndConverge(server, "dz", writer, reader);
  const auto& m = server.get().metrics();
  // zstd frames (compressed once per scene), not the per-connection stream, and fewer bytes.
  EXPECT_GT(m.compression_shared_frames.load(), 0u);
  EXPECT_LT(m.compression_wire_bytes.load() * 2, m.compression_plain_bytes.load());
}

TEST(ClientDefaultsTest, DefaultOptionsReadAServerThatDoesNotCompress) {
  TestServer server;
  server.config().compression = false;  // `serve --no-compression`, or a build without zstd
  ASSERT_TRUE(server.Start());
  Client writer(Defaults(server.tcp_url(), "plain"));
  Client reader(Defaults(server.tcp_url(), "plain"));
  ASSERT_TRUE(writer.Join(10s).has_value());
  ASSERT_TRUE(reader.Join(10s).has_value());
  WriteAndConverge(server, "plain", writer, reader);
  EXPECT_EQ(server.get().metrics().compression_plain_bytes.load(), 0u);
}

TEST(ClientDefaultsTest, ZstdOffTurnsCompressionOff) {
  TestServer server;
  ASSERT_TRUE(server.Start());
  ClientOptions off = Defaults(server.tcp_url(), "off");
  off.connection.zstd = false;
  Client writer(off);
  Client reader(off);
  ASSERT_TRUE(writer.Join(10s).has_value());
  ASSERT_TRUE(reader.Join(10s).has_value());
  WriteAndConverge(server, "off", writer, reader);
  EXPECT_EQ(server.get().metrics().compression_plain_bytes.load(), 0u);
}

}  // namespace
}  // namespace scenecrdt::client::test
