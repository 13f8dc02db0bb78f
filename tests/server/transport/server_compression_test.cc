// SPDX-License-Identifier: Apache-2.0
// Compression end to end (docs/SERVER.md "Compression"): the framed TCP zstd modes negotiated
// in Hello/Welcome (zstd frames compressed once per scene; the per-connection zstd stream for
// clients and servers without them), permessage-deflate on WebSocket, all turned off by the
// server's --no-compression, and clients that offer nothing (older builds) served plain.
// Replicas merge the same DCL bytes either way.
#include <gtest/gtest.h>

#include "scenecrdt/net/ws_compression.h"
#include "tests/server/server_test_util.h"

namespace scenecrdt::testing {
namespace {

using namespace std::chrono_literals;

std::unique_ptr<client::Client> Join(const std::string& url, const std::string& scene,
                                     bool compression = true, bool frames = true) {
  client::ClientOptions o;
  o.url = url;
  o.scene = scene;
  o.connection.zstd = compression;
  o.connection.zstd_frames = frames;
  o.connection.deflate = compression;
  auto c = std::make_unique<client::Client>(o);
  EXPECT_TRUE(c->Start().has_value());
  EXPECT_TRUE(c->PollUntil([&] { return c->state_ready(); }, 20s)) << "join " << scene;
  return c;
}

// Two writers, many ticks: every replica reaches the scene's hash.
void WriteTicksAndConverge(TestServer& server, const std::string& scene,
                           std::vector<client::Client*> clients) {
  std::vector<std::vector<uint8_t>> streams;
  for (uint32_t tick = 1; tick <= 50; ++tick) {
    for (std::size_t w = 0; w < 2; ++w) {
      std::vector<uint8_t> dcl;
      for (uint32_t k = 0; k < 20; ++k) {
        AppendPut(dcl, 600 + static_cast<uint32_t>(w) * 100 + k, tick,
                  static_cast<float>(tick) * 0.25f + static_cast<float>(k));
      }
      clients[w]->SendCrdt(dcl);
      streams.push_back(dcl);
    }
  }
  const std::string expected = ReplayHash(streams);
  for (client::Client* c : clients) {
    EXPECT_TRUE(c->PollUntil([&] { return c->store().StateHashHex() == expected; }, 30s));
  }
  EXPECT_EQ(server.SceneHash(scene), expected);
}

TEST(ServerCompressionTest, TcpClientsNegotiateZstdFramesAndConverge) {
  TestServer server;
  auto a = Join(server.tcp_url(), "zs");
  auto b = Join(server.tcp_url(), "zs");
  auto plain = Join(server.tcp_url(), "zs", /*compression=*/false);
  // client::Welcome does not expose the transport's compression: the server's counters
  // below show that the offering sessions were compressed.
  ASSERT_TRUE(a->welcome() && b->welcome() && plain->welcome());
  WriteTicksAndConverge(server, "zs", {a.get(), b.get(), plain.get()});
  const auto& m = server.get().metrics();
  const uint64_t in = m.compression_plain_bytes.load();
  const uint64_t out = m.compression_wire_bytes.load();
  EXPECT_GT(m.compression_shared_frames.load(), 0u) << "zstd frames, not the stream";
  EXPECT_GT(in, 0u);
  EXPECT_LT(out * 2, in) << "zstd should at least halve a stream of moving Transforms";
  // A late joiner's snapshot also travels compressed.
  auto late = Join(server.tcp_url(), "zs");
  EXPECT_EQ(late->store().StateHashHex(), a->store().StateHashHex());
}

TEST(ServerCompressionTest, OneBatchIsCompressedOnceForAllMembers) {
  TestServer server;
  std::vector<std::unique_ptr<client::Client>> readers;
  for (int i = 0; i < 4; ++i) readers.push_back(Join(server.tcp_url(), "once"));
  auto writer = Join(server.tcp_url(), "once", /*compression=*/false);
  const auto& m = server.get().metrics();
  const uint64_t before = m.compression_shared_frames.load();
  std::vector<uint8_t> dcl;
  for (uint32_t k = 0; k < 40; ++k) AppendPut(dcl, 700 + k, 1, static_cast<float>(k));
  writer->SendCrdt(dcl);
  const std::string expected = ReplayHash({dcl});
  for (auto& r : readers) {
    EXPECT_TRUE(r->PollUntil([&] { return r->store().StateHashHex() == expected; }, 30s));
  }
  // One batch, one cursor: every member (ready then, or catching up at the same cursor
  // right after) gets the same record; nothing is compressed per member.
  EXPECT_EQ(m.compression_shared_frames.load() - before, 1u);
}

TEST(ServerCompressionTest, ClientOfferingOnlyTheStreamGetsTheStream) {
  // What a client from before zstd frames offers (Hello.compression = zstd, no zstd_frames).
  TestServer server;
  auto a = Join(server.tcp_url(), "st", true, /*frames=*/false);
  auto b = Join(server.tcp_url(), "st", true, /*frames=*/false);
  ASSERT_TRUE(a->welcome() && b->welcome());
  WriteTicksAndConverge(server, "st", {a.get(), b.get()});
  const auto& m = server.get().metrics();
  EXPECT_EQ(m.compression_shared_frames.load(), 0u);
  EXPECT_GT(m.compression_plain_bytes.load(), 2 * m.compression_wire_bytes.load());
  RawConnection raw(server.get().tcp_port());
  session::Hello hello{"st", "", std::nullopt, "old", session::Compression::kZstd};
  ASSERT_TRUE(raw.SendFrame(hello));
  auto bytes = raw.ReadFrameBytes(10s);
  ASSERT_TRUE(bytes.has_value());
  auto welcome = session::ReadFrame(*bytes);
  ASSERT_TRUE(welcome.has_value() && std::holds_alternative<session::Welcome>(welcome.value()));
  EXPECT_EQ(std::get<session::Welcome>(welcome.value()).compression, session::Compression::kZstd);
}

TEST(ServerCompressionTest, ServerWithoutFramesAnswersTheStream) {
  // A server from before zstd frames ignores Hello.zstd_frames: the client reads the stream.
  auto config = TestServer::Config();
  config.zstd_frames = false;
  TestServer server(config);
  auto a = Join(server.tcp_url(), "old-server");
  auto b = Join(server.tcp_url(), "old-server");
  ASSERT_TRUE(a->welcome() && b->welcome());
  WriteTicksAndConverge(server, "old-server", {a.get(), b.get()});
  const auto& m = server.get().metrics();
  EXPECT_EQ(m.compression_shared_frames.load(), 0u);
  EXPECT_GT(m.compression_plain_bytes.load(), 2 * m.compression_wire_bytes.load());
}

TEST(ServerCompressionTest, HelloOfferingFramesIsAnsweredWithFrames) {
  TestServer server;
  RawConnection raw(server.get().tcp_port());
  session::Hello hello{"fr", "", std::nullopt, "raw", session::Compression::kZstd, true};
  ASSERT_TRUE(raw.SendFrame(hello));
  auto bytes = raw.ReadFrameBytes(10s);
  ASSERT_TRUE(bytes.has_value());
  auto welcome = session::ReadFrame(*bytes);
  ASSERT_TRUE(welcome.has_value() && std::holds_alternative<session::Welcome>(welcome.value()));
  EXPECT_EQ(std::get<session::Welcome>(welcome.value()).compression,
            session::Compression::kZstdFrames);
}

TEST(ServerCompressionTest, ServerWithoutCompressionAnswersPlain) {
  auto config = TestServer::Config();
  config.compression = false;
  TestServer server(config);
  auto a = Join(server.tcp_url(), "off");
  auto b = Join(server.tcp_url(), "off");
  ASSERT_TRUE(a->welcome() && b->welcome());
  WriteTicksAndConverge(server, "off", {a.get(), b.get()});
  EXPECT_EQ(server.get().metrics().compression_plain_bytes.load(), 0u);
}

TEST(ServerCompressionTest, HelloWithoutTheFieldGetsPlainFrames) {
  // What an older client sends: no compression field at all. Its frames must read as before.
  TestServer server;
  RawConnection raw(server.get().tcp_port());
  ASSERT_TRUE(raw.connected());
  auto welcome = raw.Join("old");
  ASSERT_TRUE(welcome.has_value());
  EXPECT_EQ(welcome->compression, session::Compression::kNone);
  auto writer = Join(server.tcp_url(), "old");
  std::vector<uint8_t> dcl;
  AppendPut(dcl, 900, 1, 4.0f);
  writer->SendCrdt(dcl);
  bool seen = false;
  for (int i = 0; i < 10 && !seen; ++i) {
    auto bytes = raw.ReadFrameBytes(10s);
    ASSERT_TRUE(bytes.has_value());
    auto frame = session::ReadFrame(*bytes);
    ASSERT_TRUE(frame.has_value()) << "an uncompressed reader must get plain frames";
    if (const auto* crdt = std::get_if<session::Crdt>(&frame.value())) {
      seen = std::equal(crdt->data.begin(), crdt->data.end(), dcl.begin(), dcl.end());
    }
  }
  EXPECT_TRUE(seen);
}

// Upgrades /scene/<name> with a Beast client offering permessage-deflate or not; the
// server's Sec-WebSocket-Extensions answer.
std::string UpgradeExtensions(uint16_t port, bool offer) {
  net::asio::io_context ioc;
  net::beast::websocket::stream<net::tcp::socket> ws(ioc);
  net::beast::get_lowest_layer(ws).connect(
      net::tcp::endpoint(net::asio::ip::address_v4::loopback(), port));
  ws.set_option(net::ClientDeflate(offer));
  net::beast::websocket::response_type response;
  ws.handshake(response, "127.0.0.1", "/scene/wsz");
  // The session works over it: Hello, then the Welcome arrives.
  ws.binary(true);
  ws.write(net::asio::buffer(session::BuildFrame(session::Hello{"wsz", "", std::nullopt, ""})));
  net::beast::flat_buffer buffer;
  ws.read(buffer);
  const auto data = buffer.cdata();
  std::vector<uint8_t> frame(static_cast<const uint8_t*>(data.data()),
                             static_cast<const uint8_t*>(data.data()) + data.size());
  auto first =
      session::ReadFrame(std::span<const uint8_t>(frame).first(*session::PeekFrameSize(frame)));
  EXPECT_TRUE(first.has_value() && std::holds_alternative<session::Welcome>(first.value()));
  net::error_code ec;
  ws.close(net::beast::websocket::close_code::normal, ec);
  auto it = response.find(net::beast::http::field::sec_websocket_extensions);
  return it == response.end() ? std::string() : std::string(it->value());
}

TEST(ServerCompressionTest, WebSocketNegotiatesPermessageDeflateWhenOffered) {
  TestServer server;
  const std::string offered = UpgradeExtensions(server.get().http_port(), true);
  EXPECT_NE(offered.find("permessage-deflate"), std::string::npos) << offered;
  EXPECT_EQ(UpgradeExtensions(server.get().http_port(), false), "");
  // The C++ client over ws:// (offering deflate) and over tcp:// (zstd) share a scene.
  auto ws = Join(server.ws_url(), "wsz");
  auto tcp = Join(server.tcp_url(), "wsz");
  WriteTicksAndConverge(server, "wsz", {ws.get(), tcp.get()});
}

TEST(ServerCompressionTest, NoCompressionServerRefusesDeflate) {
  auto config = TestServer::Config();
  config.compression = false;
  TestServer server(config);
  EXPECT_EQ(UpgradeExtensions(server.get().http_port(), true), "");
}

}  // namespace
}  // namespace scenecrdt::testing
