// SPDX-License-Identifier: Apache-2.0
// Scenes in memory on a `serve --redis` node (issue 23, items 2 and 12), on a real redis-server:
// a read token creates no scene (nothing in Redis: refused at the Hello and before a /dcl/
// upgrade, so it cannot fill the node's scene cap); idle scenes are evicted (the read loop stops
// following them) and reload from Redis with what other nodes wrote meanwhile, so scenes
// created in open mode cannot lock the node out either, nor can joiners that leave before the
// scene loaded; /metrics names scenes only in open mode.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "scenecrdt/cluster/redis_connection.h"
#include "tests/cluster/cluster_node_util.h"
#include "tests/cluster/redis_test_server.h"
#include "tests/server/server_test_util.h"

namespace scenecrdt::testing {
namespace {

using namespace std::chrono_literals;

std::vector<uint8_t> Puts(uint32_t first, uint32_t count, uint32_t timestamp, float x) {
  std::vector<uint8_t> dcl;
  for (uint32_t e = 0; e < count; ++e) AppendPut(dcl, first + e, timestamp, x);
  return dcl;
}

TEST(ClusterScenesTest, AReadTokenCreatesNoSceneOnAClusterNode) {
  RedisTestServer redis;
  ASSERT_TRUE(redis.started()) << redis.log();
  TempDir dir;
  server::ServerConfig config = NodeConfig(redis);
  config.access.auth_file = WriteAuth(dir.path());
  config.limits.max_scenes_in_memory = 8;
  TestServer node(config);
  // Hellos of a read token for scenes nothing is stored for: refused, nothing held. Before
  // the fix every one created (and kept) a scene: the ninth got scene_full, for good.
  for (int i = 0; i < 40; ++i) {
    RawConnection c(node.get().tcp_port());
    ASSERT_TRUE(c.connected());
    ASSERT_TRUE(c.SendFrame(session::Hello{"n" + std::to_string(i), "r", std::nullopt, ""}));
    auto error = c.ReadError();
    ASSERT_TRUE(error.has_value()) << i;
    ASSERT_EQ(error->code, ErrorCode::kUnauthorized) << i << ": " << error->text;
  }
  // The same before a /dcl/ upgrade: a plain 404, no 101.
  for (int i = 0; i < 20; ++i) {
    DclSocket ws(node.get().http_port(), "/dcl/m" + std::to_string(i) + "?token=r");
    ASSERT_FALSE(ws.connected()) << i;
    ASSERT_EQ(ws.http_status(), 404) << i;
  }
  EXPECT_EQ(node.get().num_scenes(), 0u);
  EXPECT_EQ(node.get().metrics().scene_create_refusals.load(), 60u);
  // A writer still creates a scene; a reader of a fresh node, which has nothing of it in
  // memory, finds it in Redis and joins it (over the Hello and over /dcl/).
  auto writer = Join(node.tcp_url(), "made", std::nullopt, "w");
  const std::vector<uint8_t> dcl = Puts(700, 5, 1, 2.0f);
  writer->SendCrdt(dcl);
  ASSERT_TRUE(writer->PollUntil([&] { return writer->pending_frames() == 0; }, 30s));
  TestServer fresh(config);
  auto reader = Join(fresh.tcp_url(), "made", std::nullopt, "r");
  EXPECT_EQ(reader->store().StateHashHex(), ReplayHash({dcl}));
  DclSocket ws(fresh.get().http_port(), "/dcl/made?token=r");
  EXPECT_TRUE(ws.connected()) << ws.http_status();
}

TEST(ClusterScenesTest, IdleScenesAreEvictedAndReloadWhatOtherNodesWrote) {
  RedisTestServer redis;
  ASSERT_TRUE(redis.started()) << redis.log();
  server::ServerConfig config = NodeConfig(redis);  // open mode
  config.limits.scene_idle_evict_ms = 100;
  config.limits.max_scenes_in_memory = 4;
  TestServer a(config);
  TestServer b(NodeConfig(redis));
  std::vector<std::vector<uint8_t>> sent;
  {
    auto writer = Join(a.tcp_url(), "idle");
    sent.push_back(Puts(700, 20, 1, 1.0f));
    writer->SendCrdt(sent.back());
    ASSERT_TRUE(writer->PollUntil([&] { return writer->pending_frames() == 0; }, 30s));
    writer->Stop();
  }
  // Evicted from memory, and its stream left the node's read loop.
  ASSERT_TRUE(WaitUntil([&] { return a.get().num_scenes() == 0; }, 30s))
      << "an idle cluster scene stays in memory";
  EXPECT_GE(a.get().metrics().scene_evictions.load(), 1u);
  EXPECT_TRUE(WaitUntil([&] { return NodeMetric(a, "scenecrdt_cluster_streams_read") == 0; }, 30s));
  EXPECT_EQ(NodeMetric(a, "scenecrdt_cluster_scenes_followed"), 0);
  // Another node writes meanwhile: only Redis has it for node a.
  {
    auto other = Join(b.tcp_url(), "idle");
    sent.push_back(Puts(710, 20, 2, 5.0f));
    other->SendCrdt(sent.back());
    ASSERT_TRUE(other->PollUntil([&] { return other->pending_frames() == 0; }, 30s));
  }
  // Acquired again: loaded from Redis (the tail holds both writers), then followed again.
  auto back = Join(a.tcp_url(), "idle");
  EXPECT_EQ(back->store().StateHashHex(), ReplayHash(sent));
  {
    auto other = Join(b.tcp_url(), "idle");
    sent.push_back(Puts(730, 3, 3, 9.0f));
    other->SendCrdt(sent.back());
    ASSERT_TRUE(other->PollUntil([&] { return other->pending_frames() == 0; }, 30s));
  }
  EXPECT_TRUE(
      back->PollUntil([&] { return back->store().StateHashHex() == ReplayHash(sent); }, 30s))
      << "the reloaded scene is not followed";
  back->Stop();
  // Open mode: every join may create a scene, and the cap (4) stays usable because idle ones
  // go. Before the fix the fifth scene was refused scene_full for good.
  for (int i = 0; i < 12; ++i) {
    const std::string scene = "open" + std::to_string(i);
    ASSERT_TRUE(WaitUntil(
        [&] {
          RawConnection c(a.get().tcp_port());
          return c.Join(scene).has_value();
        },
        30s))
        << scene << " never got a place";
  }
  EXPECT_LE(a.get().num_scenes(), 4u);
}

TEST(ClusterScenesTest, AJoinerGoneBeforeTheLoadDoesNotPinTheScene) {
  RedisTestServer redis;
  ASSERT_TRUE(redis.started()) << redis.log();
  server::ServerConfig config = NodeConfig(redis);  // open mode
  config.limits.scene_idle_evict_ms = 100;
  TestServer node(config);
  // Redis answers nobody for 1.5 s (under the node's 2 s command timeout): the new scene's
  // load from Redis waits, and so does the join held for it.
  cluster::RedisConnection pauser(TestRedisOptions(redis.url()));
  ASSERT_TRUE(pauser.Command({"CLIENT", "PAUSE", "1500", "ALL"}).has_value());
  {
    RawConnection c(node.get().tcp_port());
    ASSERT_TRUE(c.connected());
    ASSERT_TRUE(c.SendFrame(session::Hello{"pinned", "", std::nullopt, ""}));
    ASSERT_TRUE(WaitUntil([&] { return node.get().num_scenes() == 1; }, 5s));
  }  // the joiner goes away before the load
  ASSERT_TRUE(WaitUntil([&] { return node.get().metrics().sessions_closed.load() == 1; }, 5s));
  // Loaded after the pause: the join held for a session that has gone must not make it a
  // member, or the scene is never idle (issue 23 item 2: idle cluster scenes are evicted).
  EXPECT_TRUE(WaitUntil([&] { return node.get().num_scenes() == 0; }, 30s))
      << "a joiner gone before the scene's load pins the scene in memory";
  EXPECT_GE(NodeMetric(node, "scenecrdt_cluster_scene_loads_total"), 1);
}

TEST(ClusterScenesTest, MetricsNameClusterScenesOnlyInOpenMode) {
  RedisTestServer redis;
  ASSERT_TRUE(redis.started()) << redis.log();
  TempDir dir;
  server::ServerConfig with_auth = NodeConfig(redis);
  with_auth.access.auth_file = WriteAuth(dir.path());
  TestServer guarded(with_auth);
  TestServer writer_node(with_auth);
  TestServer open(NodeConfig(redis));
  auto reader = Join(guarded.tcp_url(), "secret-plans", std::nullopt, "w");
  auto watcher = Join(open.tcp_url(), "secret-plans");
  auto writer = Join(writer_node.tcp_url(), "secret-plans", std::nullopt, "w");
  const std::vector<uint8_t> dcl = Puts(700, 3, 1, 1.0f);
  writer->SendCrdt(dcl);
  ASSERT_TRUE(writer->PollUntil([&] { return writer->pending_frames() == 0; }, 30s));
  ASSERT_TRUE(NodeReaches(guarded, "secret-plans", ReplayHash({dcl})));
  ASSERT_TRUE(NodeReaches(open, "secret-plans", ReplayHash({dcl})));
  // Under --auth, /metrics (no token) does not name the scene; the maxima stay.
  const std::string hidden = HttpGet(guarded.get().http_port(), "/metrics");
  EXPECT_EQ(hidden.find("secret-plans"), std::string::npos) << hidden;
  EXPECT_GE(Metric(hidden, "scenecrdt_cluster_read_lag_ms_max"), 0);
  // In open mode every caller may list every scene: the per-scene series name it.
  const std::string shown = HttpGet(open.get().http_port(), "/metrics");
  EXPECT_GE(Metric(shown, "scenecrdt_cluster_read_lag_ms{scene=\"secret-plans\"}"), 0) << shown;
}

}  // namespace
}  // namespace scenecrdt::testing
