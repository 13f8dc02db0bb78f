// SPDX-License-Identifier: Apache-2.0
// A `serve --redis` node and its Redis (issue 23, items 3 and 11), on a real redis-server:
// after Redis is killed with -9 and restarted from its AOF, the first joiners of a new scene
// on every node get in at once (each connection Redis closed is re-established on use, the
// command retried); a join refused `unavailable` (Redis away) is retried by the client until
// it gets in; entries far larger than usual are read in rounds within the byte budget.
#include <gtest/gtest.h>
#include <signal.h>

#include <mutex>
#include <nlohmann/json.hpp>
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

TEST(ClusterRedisTest, AfterARedisRestartTheFirstJoinersOfANewSceneGetIn) {
  RedisTestServer redis;
  ASSERT_TRUE(redis.started()) << redis.log();
  std::vector<std::unique_ptr<TestServer>> nodes;
  std::vector<std::unique_ptr<client::Client>> writers;
  for (uint32_t i = 0; i < 3; ++i) {
    nodes.push_back(std::make_unique<TestServer>(NodeConfig(redis)));  // no compaction
    writers.push_back(Join(nodes.back()->tcp_url(), "before"));
  }
  const auto write_everywhere = [&](uint32_t timestamp) {
    for (uint32_t i = 0; i < 3; ++i) {
      writers[i]->SendCrdt(Puts(700 + i * 10, 5, timestamp, static_cast<float>(timestamp)));
    }
    for (auto& w : writers) {
      ASSERT_TRUE(w->PollUntil([&] { return w->pending_frames() == 0; }, 60s));
    }
  };
  write_everywhere(1);
  redis.Kill(SIGKILL);
  ASSERT_TRUE(redis.Restart()) << redis.log();
  write_everywhere(2);  // every node's appends are acknowledged again
  // New scene, first joiners on every node: the node's control connection (idle through the
  // restart) loads it. Before the fix the load failed on the stale connection and these
  // joiners were closed with `unavailable`.
  std::vector<std::unique_ptr<client::Client>> joiners;
  for (uint32_t i = 0; i < 3; ++i) {
    for (int k = 0; k < 5; ++k) joiners.push_back(Join(nodes[i]->tcp_url(), "after"));
  }
  for (auto& j : joiners) {
    EXPECT_TRUE(j->state_ready());
    EXPECT_EQ(j->stats().disconnects, 0u) << "a joiner was refused and had to come back";
  }
  for (auto& node : nodes) {
    EXPECT_EQ(NodeMetric(*node, "scenecrdt_cluster_scene_load_failures_total"), 0);
    EXPECT_GE(NodeMetric(*node, "scenecrdt_cluster_redis_stale_total"), 1);
  }
}

TEST(ClusterRedisTest, AJoinRefusedUnavailableIsRetriedUntilItGetsIn) {
  RedisTestServer redis;
  ASSERT_TRUE(redis.started()) << redis.log();
  TestServer node(NodeConfig(redis));
  redis.Kill(SIGKILL);
  // Reconnecting is off (the default of one-shot commands): only `unavailable` is retried.
  client::ClientOptions o;
  o.url = node.tcp_url();
  o.scene = "later";
  o.reconnect.backoff.initial_delay_ms = 50;
  o.reconnect.backoff.max_delay_ms = 500;
  o.reconnect.max_unavailable_retries = 100;
  std::vector<std::string> log;
  o.log = [&](std::string_view line) { log.emplace_back(line); };
  client::Client c(o);
  ASSERT_TRUE(c.Start().has_value());
  // The node cannot load the scene: the join is refused `unavailable` (fatal to the session).
  ASSERT_TRUE(c.PollUntil([&] { return c.stats().disconnects >= 2 || c.closed(); }, 30s));
  ASSERT_FALSE(c.closed()) << "the client gave up after `unavailable`";
  ASSERT_TRUE(redis.Restart()) << redis.log();
  EXPECT_TRUE(c.PollUntil([&] { return c.state_ready(); }, 60s)) << [&] {
    std::string all;
    for (const std::string& l : log) all += l + "\n";
    return all;
  }();
  EXPECT_GE(NodeMetric(node, "scenecrdt_cluster_scene_load_failures_total"), 1);
}

TEST(ClusterRedisTest, EntriesFarLargerThanUsualAreReadWithinTheRoundBudget) {
  RedisTestServer redis;
  ASSERT_TRUE(redis.started()) << redis.log();
  TestServer node(NodeConfig(redis));
  auto watcher = Join(node.tcp_url(), "huge");
  // Someone with access to Redis appends 12 entries of 3 MB (unusable: they do not decode),
  // then a good one, in one transaction: the node's blocked XREAD (COUNT 64) wakes up to all
  // 36 MB at once.
  cluster::RedisConnection raw(TestRedisOptions(redis.url()));
  const std::string junk(3u << 20, 'x');
  const std::vector<uint8_t> good = Puts(700, 4, 1, 3.0f);
  const std::string good_text(good.begin(), good.end());
  std::vector<cluster::RedisArgs> batch = {{"MULTI"}};
  for (int i = 0; i < 12; ++i) {
    batch.push_back({"XADD", "scenecrdt:{huge}:log", "*", "n", "intruder", "d", junk});
  }
  batch.push_back({"XADD", "scenecrdt:{huge}:log", "*", "n", "other", "d", good_text});
  batch.push_back({"EXEC"});
  auto added = raw.Pipeline(batch);
  ASSERT_TRUE(added.has_value()) << added.error().detail;
  ASSERT_TRUE(added->back().is_array()) << added->back().str;
  EXPECT_TRUE(NodeReaches(node, "huge", ReplayHash({good})));
  EXPECT_TRUE(watcher->PollUntil(
      [&] { return watcher->store().StateHashHex() == ReplayHash({good}); }, 30s));
  const double largest = NodeMetric(node, "scenecrdt_cluster_read_bytes_max");
  EXPECT_GT(largest, 0);
  EXPECT_LE(largest, 16.0 * (1u << 20) + (16u << 10))
      << "a read took more than the 16 MiB round budget (and one 16 KiB read past it)";
  EXPECT_GE(NodeMetric(node, "scenecrdt_cluster_read_overflows_total"), 1);
  EXPECT_GE(NodeMetric(node, "scenecrdt_cluster_bad_entries_total"), 12);
}

// With --log-format json, what the node's Redis connections say (here: Redis went away) is a
// json line of the event log too (event "cluster"), not a plain "scenecrdt cluster:" line on
// stderr beside the json ones.
TEST(ClusterRedisTest, RedisLinesAreJsonInJsonMode) {
  RedisTestServer redis;
  ASSERT_TRUE(redis.started()) << redis.log();
  std::mutex mu;
  std::vector<std::string> lines;
  server::ServerConfig config = NodeConfig(redis);
  config.log_events = true;
  config.log_format = server::LogFormat::kJson;
  config.log_sink = [&](std::string_view line) {
    std::lock_guard lock(mu);
    lines.emplace_back(line);
  };
  TestServer node(config);
  auto writer = Join(node.tcp_url(), "json");
  redis.Kill(SIGKILL);
  writer->SendCrdt(Puts(900, 3, 1, 1.0f));  // an append that cannot reach Redis
  const auto redis_line_seen = [&] {
    std::lock_guard lock(mu);
    for (const std::string& l : lines) {
      const auto j = nlohmann::json::parse(l, nullptr, /*allow_exceptions=*/false);
      if (j.is_object() && j.value("event", "") == "cluster" && j.contains("message")) return true;
    }
    return false;
  };
  EXPECT_TRUE(WaitUntil(redis_line_seen, 30s)) << "no json line from the Redis connections";
  {
    std::lock_guard lock(mu);
    for (const std::string& l : lines) {
      const auto j = nlohmann::json::parse(l, nullptr, /*allow_exceptions=*/false);
      EXPECT_TRUE(j.is_object()) << l;
    }
  }
  ASSERT_TRUE(redis.Restart()) << redis.log();  // so the node's final commit lands at once
}

}  // namespace
}  // namespace scenecrdt::testing
