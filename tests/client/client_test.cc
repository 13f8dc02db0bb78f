// SPDX-License-Identifier: Apache-2.0
// scenecrdt::client::Client against an in-process server on loopback: URL parsing, replica
// and world matrices, held writes stamped after the snapshot, acks.
#include "scenecrdt/client/client.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <thread>

#include "scenecrdt/client/url.h"
#include "scenecrdt/protocol/crdt_codec.h"
#include "scenecrdt/server/server.h"

namespace scenecrdt::client {
namespace {

using namespace std::chrono_literals;

class ClientTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string tmpl =
        (std::filesystem::temp_directory_path() / "scenecrdt-client-XXXXXX").string();
    ASSERT_NE(mkdtemp(tmpl.data()), nullptr);
    dir_ = tmpl;
    server::ServerConfig c;
    c.tcp_listen = "127.0.0.1:0";
    c.http_listen = "127.0.0.1:0";
    c.data_dir = dir_;
    c.fsync = false;
    server_ = std::make_unique<server::Server>(c);
    ASSERT_TRUE(server_->Start(false).has_value());
  }
  void TearDown() override {
    server_->RequestStop();
    server_->Wait();
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }
  std::string Url(bool ws = false) const {
    return ws ? "ws://127.0.0.1:" + std::to_string(server_->http_port())
              : "tcp://127.0.0.1:" + std::to_string(server_->tcp_port());
  }
  ClientOptions Options(const std::string& scene, bool ws = false) const {
    ClientOptions o;
    o.url = Url(ws);
    o.scene = scene;
    return o;
  }

  std::string dir_;
  std::unique_ptr<server::Server> server_;
};

TEST(ServerUrlTest, ParsesTcpAndWebSocketAndRefusesTheRest) {
  auto tcp = ParseServerUrl("tcp://127.0.0.1:7600");
  ASSERT_TRUE(tcp.has_value());
  EXPECT_EQ(tcp->scheme, ServerUrl::Scheme::kTcp);
  EXPECT_EQ(tcp->host, "127.0.0.1");
  EXPECT_EQ(tcp->port, 7600);
  EXPECT_EQ(tcp->scene, "");
  auto ws = ParseServerUrl("ws://[::1]:80/scene/x");
  ASSERT_TRUE(ws.has_value());
  EXPECT_EQ(ws->scheme, ServerUrl::Scheme::kWebSocket);
  EXPECT_EQ(ws->host, "::1");
  EXPECT_EQ(ws->port, 80);
  EXPECT_EQ(ws->scene, "x");  // a path is never ignored: it names the scene
  for (const char* no_scene : {"ws://a:1", "ws://a:1/", "tcp://a:1/"}) {
    auto u = ParseServerUrl(no_scene);
    ASSERT_TRUE(u.has_value()) << no_scene;
    EXPECT_EQ(u->scene, "") << no_scene;
  }
  EXPECT_EQ(ParseServerUrl("ws://a:1/scene/demo.v2-x_/")->scene, "demo.v2-x_");
  for (const char* bad : {"http://a:1",
                          "tcp://a",
                          "tcp://:1",
                          "tcp://a:99999",
                          "tcp://a:x",
                          "tcp://a:0",
                          "",
                          "tcp://a:1/scene/x",
                          "tcp://a:1/x",
                          "ws://a:1/dcl/x",
                          "ws://a:1/other",
                          "ws://a:1/scene",
                          "ws://a:1/scene/",
                          "ws://a:1/scene/a/b",
                          "ws://a:1/scene/a b",
                          "ws://a:1/scene/x?t=1",
                          "ws://a:1?t=1",
                          "ws://a:1#f",
                          "ws://[]:76/scene/demo",
                          "tcp://[]:1"}) {
    auto r = ParseServerUrl(bad);
    ASSERT_FALSE(r.has_value()) << bad;
    EXPECT_EQ(r.error().code, ErrorCode::kInvalidArgument) << bad;
  }
}

TEST_F(ClientTest, AUrlThatNamesTheSceneFillsOrChecksOptionsScene) {
  ClientOptions other = Options("b", /*ws=*/true);
  other.url += "/scene/a";
  Client mismatch(other);
  auto refused = mismatch.Start();
  ASSERT_FALSE(refused.has_value());
  EXPECT_EQ(refused.error().code, ErrorCode::kInvalidArgument);

  ClientOptions from_url = Options("", /*ws=*/true);
  from_url.url += "/scene/named";
  Client c(from_url);
  ASSERT_TRUE(c.Start().has_value());
  ASSERT_TRUE(c.PollUntil([&] { return c.state_ready(); }, std::chrono::seconds(10)));
  EXPECT_EQ(server_->num_scenes(), 1u);
  c.Stop();
}

TEST_F(ClientTest, ReplicaExposesWorldMatricesAndChanges) {
  Client writer(Options("world"));
  Client viewer(Options("world", /*ws=*/true));
  ASSERT_TRUE(writer.Start().has_value());
  ASSERT_TRUE(viewer.Start().has_value());
  ASSERT_TRUE(writer.PollUntil([&] { return writer.state_ready(); }, 20s));
  ASSERT_TRUE(viewer.PollUntil([&] { return viewer.state_ready(); }, 20s));
  protocol::Transform parent;
  parent.position = {10.0f, 0.0f, 0.0f};
  protocol::Transform child;
  child.position = {0.0f, 2.0f, 0.0f};
  child.parent = 600;
  ASSERT_TRUE(writer.WriteTransform(600, parent).has_value());
  ASSERT_TRUE(writer.WriteTransform(601, child).has_value());
  EXPECT_NE(writer.Flush(), 0u);
  ASSERT_TRUE(viewer.PollUntil([&] { return viewer.store().FindTransform(601); }, 10s));
  viewer.Update();
  auto index = viewer.runtime().IndexOf(601);
  ASSERT_TRUE(index.has_value());
  const glm::mat4& m = viewer.runtime().world_matrices()[*index];
  EXPECT_FLOAT_EQ(m[3][0], 10.0f);
  EXPECT_FLOAT_EQ(m[3][1], 2.0f);
  EXPECT_FALSE(viewer.runtime().changed_entities().empty());
  EXPECT_TRUE(writer.PollUntil([&] { return writer.pending_frames() == 0; }, 10s));
  EXPECT_EQ(writer.acked_frame_sequence(), writer.last_frame_sequence());
}

TEST_F(ClientTest, WritesBeforeTheSnapshotAreHeldAndStampedAfterIt) {
  // The scene holds entity 700 at timestamp 10.
  Client first(Options("held"));
  ASSERT_TRUE(first.Start().has_value());
  ASSERT_TRUE(first.PollUntil([&] { return first.state_ready(); }, 20s));
  std::vector<uint8_t> dcl;
  protocol::Transform old;
  old.position.x = 1.0f;
  protocol::AppendTransformPut(700, 10, old, dcl);
  first.SendCrdt(dcl);
  ASSERT_TRUE(first.PollUntil([&] { return first.pending_frames() == 0; }, 10s));
  // A new client writes 700 before it has the snapshot: held, then stamped 11.
  Client late(Options("held"));
  protocol::Transform mine;
  mine.position.x = 2.0f;
  ASSERT_TRUE(late.WriteTransform(700, mine).has_value());
  ASSERT_TRUE(late.Start().has_value());
  ASSERT_TRUE(
      late.PollUntil([&] { return late.state_ready() && late.pending_frames() == 0; }, 20s));
  auto reg = late.store().FindRegister(protocol::kTransformComponentId, 700);
  ASSERT_TRUE(reg.has_value());
  EXPECT_EQ(reg->timestamp, 11u);
  ASSERT_TRUE(first.PollUntil(
      [&] {
        const auto* t = first.store().FindTransform(700);
        return t && t->position.x == 2.0f;
      },
      10s));
}

TEST_F(ClientTest, ConnectionFailureIsReported) {
  ClientOptions o = Options("x");
  o.url = "tcp://127.0.0.1:1";
  Client c(o);
  ASSERT_TRUE(c.Start().has_value());
  EXPECT_TRUE(c.PollUntil([&] { return c.closed(); }, 20s));
  EXPECT_EQ(c.close_error().code, ErrorCode::kIo);
  EXPECT_FALSE(Client(ClientOptions{}).Start().has_value());  // no URL
}

}  // namespace
}  // namespace scenecrdt::client
