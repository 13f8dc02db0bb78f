// SPDX-License-Identifier: Apache-2.0
// The client's defaults and its source address (docs/CLIENT.md "Compression", "Source
// address"): a default ClientOptions offers zstd frames on tcp:// and still reads a server
// that does not compress; ConnectionOptions::local_address is the source of the connection.
#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <vector>

#include "scenecrdt/client/client.h"
#include "scenecrdt/net/net.h"
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

// Accepts one connection on 127.0.0.1 (bounded wait) and returns the peer's address.
std::string AcceptOnePeer(Client& client, net::tcp::acceptor& acceptor,
                          net::asio::io_context& ioc) {
  std::string peer;
  net::tcp::socket socket(ioc);
  acceptor.async_accept(socket, [&](const net::error_code& ec) {
    net::error_code e;
    if (!ec) peer = socket.remote_endpoint(e).address().to_string();
  });
  EXPECT_TRUE(client.Start().has_value());
  ioc.run_for(10s);
  return peer;
}

TEST(ClientDefaultsTest, LocalAddressIsTheSourceOfTheConnection) {
  net::asio::io_context ioc;
  net::tcp::acceptor acceptor(ioc, net::tcp::endpoint(net::asio::ip::make_address("127.0.0.1"), 0));
  const std::string url = "tcp://127.0.0.1:" + std::to_string(acceptor.local_endpoint().port());
  ClientOptions bound = Defaults(url, "src");
  bound.connection.local_address = "127.0.0.7";  // every 127.x.y.z is local on Linux
  Client c(bound);
  EXPECT_EQ(AcceptOnePeer(c, acceptor, ioc), "127.0.0.7");
  c.Stop();

  // The default leaves the choice to the kernel (127.0.0.1 towards 127.0.0.1).
  net::asio::io_context ioc2;
  net::tcp::acceptor acceptor2(ioc2,
                               net::tcp::endpoint(net::asio::ip::make_address("127.0.0.1"), 0));
  Client d(Defaults("tcp://127.0.0.1:" + std::to_string(acceptor2.local_endpoint().port()), "src"));
  EXPECT_EQ(AcceptOnePeer(d, acceptor2, ioc2), "127.0.0.1");
  d.Stop();
}

TEST(ClientDefaultsTest, ALocalAddressThatCannotBeUsedIsAClearError) {
  TestServer server;
  ASSERT_TRUE(server.Start());
  ClientOptions bad = Defaults(server.tcp_url(), "bad");
  bad.connection.local_address = "not-an-address";
  Client c(bad);
  auto started = c.Start();
  ASSERT_FALSE(started.has_value());
  EXPECT_EQ(started.error().code, ErrorCode::kInvalidArgument);

  // IPv6 loopback as the source of a connection to an IPv4 server: no address to try.
  ClientOptions v6 = Defaults(server.tcp_url(), "bad");
  v6.connection.local_address = "::1";
  Client other(v6);
  auto joined = other.Join(10s);
  ASSERT_FALSE(joined.has_value());
  EXPECT_EQ(joined.error().code, ErrorCode::kIo);
  EXPECT_NE(std::string(joined.error().detail).find("family"), std::string::npos)
      << joined.error().detail;
}

}  // namespace
}  // namespace scenecrdt::client::test
