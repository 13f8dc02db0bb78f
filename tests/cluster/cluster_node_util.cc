// SPDX-License-Identifier: Apache-2.0
// Owns the shared helpers of the `serve --redis` tests (cluster_node_util.h).
#include "tests/cluster/cluster_node_util.h"

#include <gtest/gtest.h>

#include <fstream>

#include "scenecrdt/cluster/redis_connection.h"

namespace scenecrdt::testing {

using namespace std::chrono_literals;

server::ServerConfig NodeConfig(const RedisTestServer& redis, uint32_t compact_ms,
                                uint32_t retain_ms) {
  server::ServerConfig c = TestServer::Config();
  c.redis_url = redis.url();
  c.compact_interval_ms = compact_ms;
  c.compact_retain_ms = retain_ms;
  c.log_events = false;
  return c;
}

std::unique_ptr<client::Client> Join(const std::string& url, const std::string& scene,
                                     std::optional<uint64_t> resume, const std::string& token) {
  client::ClientOptions o;
  o.url = url;
  o.scene = scene;
  o.token = token;
  o.resume_sequence = resume;
  auto c = std::make_unique<client::Client>(o);
  EXPECT_TRUE(c->Start().has_value());
  EXPECT_TRUE(c->PollUntil([&] { return c->state_ready(); }, 30s)) << "join " << scene;
  return c;
}

bool NodeReaches(TestServer& node, const std::string& scene, const std::string& hash) {
  return WaitUntil([&] { return node.SceneHash(scene) == hash; }, 30s);
}

uint64_t StreamLength(const RedisTestServer& redis, const std::string& scene) {
  cluster::RedisConnection c(TestRedisOptions(redis.url()));
  auto r = c.Command({"XLEN", "scenecrdt:{" + scene + "}:log"});
  return r.has_value() ? static_cast<uint64_t>(r->integer) : ~uint64_t{0};
}

std::string WriteAuth(const std::string& dir) {
  const std::string path = dir + "/auth.json";
  std::ofstream(path) << R"({"tokens":[{"token":"w","scenes":["*"],"role":"write"},)"
                      << R"({"token":"r","scenes":["*"],"role":"read"}]})";
  return path;
}

double NodeMetric(TestServer& node, const std::string& series) {
  return Metric(HttpGet(node.get().http_port(), "/metrics"), series);
}

}  // namespace scenecrdt::testing
