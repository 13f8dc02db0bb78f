// SPDX-License-Identifier: Apache-2.0
// The viewer's scene list on cluster nodes (docs/CLUSTER.md "Scene list"; issue 23 item 1):
// real nodes on a real redis-server. A node lists the scenes it holds in memory and those
// with a stream in Redis (a bounded SCAN, names a client could not join left out, at most
// kMaxListedScenes); GET / and /api/scenes answer on a node that never loaded a scene, and the
// `scenecrdt serve --redis` process stays up (it crashed on a null persistence before).
#include <gtest/gtest.h>

#include <csignal>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "scenecrdt/cluster/redis_connection.h"
#include "scenecrdt/server/web/scene_directory.h"
#include "tests/cluster/redis_test_server.h"
#include "tests/server/server_test_util.h"

namespace scenecrdt::testing {
namespace {

using namespace std::chrono_literals;

server::ServerConfig NodeConfig(const RedisTestServer& redis) {
  server::ServerConfig c = TestServer::Config();
  c.redis_url = redis.url();
  c.compact_interval_ms = 0;
  c.log_events = false;
  return c;
}

nlohmann::json ListJson(uint16_t port) {
  const std::string answer = HttpGet(port, "/api/scenes");
  EXPECT_EQ(answer.rfind("HTTP/1.1 200", 0), 0u) << answer;
  const auto at = answer.find("\r\n\r\n");
  return nlohmann::json::parse(at == std::string::npos ? std::string() : answer.substr(at + 4),
                               nullptr, /*allow_exceptions=*/false);
}

// name -> in_memory, for the scenes of a listing.
std::map<std::string, bool> Names(const nlohmann::json& list) {
  std::map<std::string, bool> out;
  if (!list.is_object() || !list["scenes"].is_array()) return out;
  for (const auto& s : list["scenes"]) out[s["name"].get<std::string>()] = s["in_memory"];
  return out;
}

TEST(ClusterSceneListTest, NodesListScenesInMemoryAndInRedis) {
  RedisTestServer redis;
  ASSERT_TRUE(redis.started()) << redis.log();
  TestServer a(NodeConfig(redis));
  client::ClientOptions o;
  o.url = a.tcp_url();
  o.scene = "alpha";
  client::Client writer(o);
  ASSERT_TRUE(writer.Start().has_value());
  ASSERT_TRUE(writer.PollUntil([&] { return writer.state_ready(); }, 30s));
  std::vector<uint8_t> dcl;
  AppendPut(dcl, 700, 1, 1.0f);
  writer.SendCrdt(dcl);
  ASSERT_TRUE(writer.PollUntil([&] { return writer.pending_frames() == 0; }, 30s));
  // A stream whose name no client can join (not [A-Za-z0-9_.-]) is not listed.
  cluster::RedisConnection c(TestRedisOptions(redis.url()));
  ASSERT_TRUE(c.Command({"XADD", "scenecrdt:{odd*name}:log", "*", "k", "v"}).has_value());

  const auto on_a = Names(ListJson(a.get().http_port()));
  ASSERT_EQ(on_a.count("alpha"), 1u);
  EXPECT_TRUE(on_a.at("alpha"));
  EXPECT_EQ(on_a.count("odd*name"), 0u);
  // Node b never loaded alpha: it knows it from Redis only.
  TestServer b(NodeConfig(redis));
  const nlohmann::json list = ListJson(b.get().http_port());
  const auto on_b = Names(list);
  ASSERT_EQ(on_b.count("alpha"), 1u) << list;
  EXPECT_FALSE(on_b.at("alpha"));
  EXPECT_EQ(list["complete"], true);
  const std::string html = HttpGet(b.get().http_port(), "/");
  EXPECT_EQ(html.rfind("HTTP/1.1 200", 0), 0u) << html;
  EXPECT_NE(html.find("/view/alpha"), std::string::npos);
}

TEST(ClusterSceneListTest, ManyStreamsAreListedUpToTheCap) {
  RedisTestServer redis;
  ASSERT_TRUE(redis.started()) << redis.log();
  cluster::RedisConnection c(TestRedisOptions(redis.url()));
  std::vector<std::string> keys;
  for (int i = 0; i < 1203; ++i)
    keys.push_back("scenecrdt:{s" + std::to_string(10000 + i) + "}:log");
  std::vector<cluster::RedisArgs> commands;
  for (const std::string& key : keys) commands.push_back({"XADD", key, "*", "k", "v"});
  ASSERT_TRUE(c.Pipeline(commands).has_value());
  TestServer node(NodeConfig(redis));
  const nlohmann::json list = ListJson(node.get().http_port());
  ASSERT_TRUE(list.is_object());
  EXPECT_EQ(list["scenes"].size(), server::kMaxListedScenes);
  EXPECT_EQ(list["complete"], false);
  const std::string metrics = HttpGet(node.get().http_port(), "/metrics");
  EXPECT_EQ(Metric(metrics, "scenecrdt_scene_list_failures_total"), 0) << metrics;
}

#ifdef SCENECRDT_BINARY
TEST(ClusterSceneListTest, ServeWithRedisAnswersTheSceneListAndStaysUp) {
  RedisTestServer redis;
  ASSERT_TRUE(redis.started()) << redis.log();
  TempDir dir;
  ServerProcess node(dir.path(), {"--redis", redis.url(), "--http", "127.0.0.1:0"});
  ASSERT_TRUE(node.started()) << node.log();
  ASSERT_TRUE(WaitUntil([&] { return node.http_port() != 0; })) << node.log();
  for (const std::string path : {"/api/scenes", "/"}) {
    const std::string answer = HttpGet(node.http_port(), path);
    EXPECT_EQ(answer.rfind("HTTP/1.1 200", 0), 0u) << path << ": " << answer << node.log();
  }
  EXPECT_EQ(HttpGet(node.http_port(), "/healthz").rfind("HTTP/1.1 200", 0), 0u) << node.log();
  node.Kill(SIGTERM);
  EXPECT_EQ(node.WaitExit(30s), 0) << node.log();
}
#endif

}  // namespace
}  // namespace scenecrdt::testing
