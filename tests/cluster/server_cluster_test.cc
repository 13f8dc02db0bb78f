// SPDX-License-Identifier: Apache-2.0
// `scenecrdt serve --redis` end to end (docs/CLUSTER.md "Server integration"): several nodes
// (in-process Servers and the real binary for kill -9) on one real redis-server (unix socket,
// AOF with appendfsync always, in a temp dir). Writers on different nodes converge to the
// replay hash of everything sent; a late node loads the same state; a resume on another node
// gets a delta; Redis killed and restarted from its AOF holds writes unacknowledged, then acks
// them and loses none; a node killed with -9 loses no acknowledged write; compaction under
// writes keeps the hash and bounds the stream; other nodes' writes count towards a node's
// --max-scene-bytes.
#include <gtest/gtest.h>
#include <signal.h>

#include <fstream>
#include <map>
#include <thread>

#include "scenecrdt/cluster/redis_connection.h"
#include "tests/cluster/cluster_node_util.h"
#include "tests/cluster/redis_test_server.h"
#include "tests/server/server_test_util.h"

namespace scenecrdt::testing {
namespace {

using namespace std::chrono_literals;

TEST(ServerClusterTest, WritersOnThreeNodesConvergeToTheReplayHash) {
  RedisTestServer redis;
  ASSERT_TRUE(redis.started()) << redis.log();
  std::vector<std::unique_ptr<TestServer>> nodes;
  for (int i = 0; i < 3; ++i) nodes.push_back(std::make_unique<TestServer>(NodeConfig(redis)));
  constexpr int kClients = 6;
  constexpr int kRounds = 15;
  constexpr uint32_t kEntities = 8;
  std::vector<std::unique_ptr<client::Client>> clients;
  for (int i = 0; i < kClients; ++i) {
    clients.push_back(Join(nodes[static_cast<std::size_t>(i % 3)]->tcp_url(), "hall"));
  }
  // Every client writes every entity with overlapping timestamps and different data: the
  // tie-breaks decide, whatever node merged what first.
  std::vector<std::vector<uint8_t>> sent(kClients);
  std::vector<std::thread> threads;
  for (int i = 0; i < kClients; ++i) {
    threads.emplace_back([&, i] {
      client::Client& c = *clients[static_cast<std::size_t>(i)];
      for (int round = 1; round <= kRounds; ++round) {
        std::vector<uint8_t> dcl;
        for (uint32_t e = 0; e < kEntities; ++e) {
          AppendPut(dcl, 700 + e, static_cast<uint32_t>(round + (i % 3)),
                    static_cast<float>(i * 100 + round) + 0.25f * static_cast<float>(e));
        }
        c.SendCrdt(dcl);
        auto& mine = sent[static_cast<std::size_t>(i)];
        mine.insert(mine.end(), dcl.begin(), dcl.end());
        c.Poll();
      }
      EXPECT_TRUE(c.PollUntil([&] { return c.pending_frames() == 0; }, 60s));
      EXPECT_TRUE(c.TakeRefusals().empty());
    });
  }
  for (auto& t : threads) t.join();
  const std::string expected = ReplayHash(sent);
  for (auto& node : nodes) EXPECT_TRUE(NodeReaches(*node, "hall", expected));
  for (auto& c : clients) {
    EXPECT_TRUE(c->PollUntil([&] { return c->store().StateHashHex() == expected; }, 30s))
        << "a replica did not converge";
  }
  // A new node with an empty --data loads the scene from Redis before welcoming anyone.
  TestServer late(NodeConfig(redis));
  auto joiner = Join(late.tcp_url(), "hall");
  EXPECT_EQ(joiner->store().StateHashHex(), expected);
  EXPECT_EQ(late.SceneHash("hall"), expected);
  // A client of node 0 resumes on node 1 from the sequence node 0 advertised: a delta.
  const uint64_t position = clients[0]->scene_sequence();
  ASSERT_NE(position, 0u);
  auto resumed = Join(nodes[1]->tcp_url(), "hall", position);
  ASSERT_TRUE(resumed->welcome().has_value());
  EXPECT_TRUE(resumed->welcome()->resumed);
}

TEST(ServerClusterTest, ALateNodeJoinsABusySceneWithTheSameHash) {
  RedisTestServer redis;
  ASSERT_TRUE(redis.started()) << redis.log();
  TestServer a(NodeConfig(redis));
  auto writer = Join(a.tcp_url(), "busy");
  std::vector<std::vector<uint8_t>> sent;
  std::atomic<bool> stop{false};
  std::thread load([&] {
    for (uint32_t i = 1; !stop.load() || i < 50; ++i) {
      std::vector<uint8_t> dcl;
      AppendPut(dcl, 800 + i % 30, i, static_cast<float>(i));
      writer->SendCrdt(dcl);
      sent.push_back(dcl);
      writer->Poll();
      std::this_thread::sleep_for(2ms);  // pacing of the load, not synchronisation
    }
    EXPECT_TRUE(writer->PollUntil([&] { return writer->pending_frames() == 0; }, 60s));
  });
  ASSERT_TRUE(WaitUntil([&] { return StreamLength(redis, "busy") >= 20; }, 30s));
  TestServer b(NodeConfig(redis));  // joins while the writer goes on
  auto reader = Join(b.tcp_url(), "busy");
  stop.store(true);
  load.join();
  const std::string expected = ReplayHash(sent);
  EXPECT_TRUE(NodeReaches(a, "busy", expected));
  EXPECT_TRUE(NodeReaches(b, "busy", expected));
  EXPECT_TRUE(reader->PollUntil([&] { return reader->store().StateHashHex() == expected; }, 30s));
}

TEST(ServerClusterTest, RedisDownHoldsWritesAndItsRestartFromTheAofLosesNothing) {
  RedisTestServer redis;
  ASSERT_TRUE(redis.started()) << redis.log();
  TestServer a(NodeConfig(redis));
  auto writer = Join(a.tcp_url(), "outage");
  std::vector<std::vector<uint8_t>> sent;
  for (uint32_t i = 1; i <= 10; ++i) {
    std::vector<uint8_t> dcl;
    AppendPut(dcl, 900 + i, 1, static_cast<float>(i));
    writer->SendCrdt(dcl);
    sent.push_back(dcl);
  }
  ASSERT_TRUE(writer->PollUntil([&] { return writer->pending_frames() == 0; }, 30s));
  const uint64_t acked_before = writer->acked_frame_sequence();

  redis.Kill(SIGKILL);
  for (uint32_t i = 11; i <= 20; ++i) {
    std::vector<uint8_t> dcl;
    AppendPut(dcl, 900 + i, 1, static_cast<float>(i));
    writer->SendCrdt(dcl);
    sent.push_back(dcl);
  }
  // The typed notice arrives; it refuses no frame, nothing is acknowledged.
  bool told = false;
  EXPECT_TRUE(writer->PollUntil(
      [&] {
        for (const client::Refusal& r : writer->TakeRefusals()) {
          told = told || (r.code == ErrorCode::kUnavailable && !r.fatal);
        }
        return told;
      },
      30s));
  EXPECT_EQ(writer->acked_frame_sequence(), acked_before);
  EXPECT_EQ(writer->pending_frames(), 10u);
  // Reads are still served: a new client of the node gets the node's state.
  auto reader = Join(a.tcp_url(), "outage");
  EXPECT_EQ(reader->store().StateHashHex(), ReplayHash(sent));

  ASSERT_TRUE(redis.Restart()) << redis.log();
  EXPECT_TRUE(writer->PollUntil([&] { return writer->pending_frames() == 0; }, 60s));
  EXPECT_EQ(writer->acked_frame_sequence(), writer->last_frame_sequence());
  // Everything acknowledged is in Redis: a fresh node loads all of it.
  TestServer b(NodeConfig(redis));
  auto late = Join(b.tcp_url(), "outage");
  EXPECT_EQ(late->store().StateHashHex(), ReplayHash(sent));
}

TEST(ServerClusterTest, KillingANodeLosesNoAcknowledgedWrite) {
  RedisTestServer redis;
  ASSERT_TRUE(redis.started()) << redis.log();
  TempDir dir;
  ServerProcess victim(dir.path(), {"--redis", redis.url(), "--compact-interval-ms", "0"});
  ASSERT_TRUE(victim.started()) << victim.log();
  TestServer survivor(NodeConfig(redis));
  auto watcher = Join(survivor.tcp_url(), "fall");
  auto writer = Join(victim.tcp_url(), "fall");
  std::map<uint64_t, uint32_t> entity_of;  // frame sequence -> the entity it wrote
  for (uint32_t i = 1; i <= 400; ++i) {
    std::vector<uint8_t> dcl;
    AppendPut(dcl, 1000 + i, 1, static_cast<float>(i));
    entity_of[writer->SendCrdt(dcl)] = 1000 + i;
    writer->Poll();
    if (i == 200) {
      // Some writes are acknowledged before the kill, more are in flight when it comes.
      ASSERT_TRUE(writer->PollUntil([&] { return writer->acked_frame_sequence() >= 100; }, 30s));
    }
    if (i == 300) victim.Kill(SIGKILL);
  }
  writer->Poll();
  const uint64_t acked = writer->acked_frame_sequence();
  EXPECT_GT(acked, 0u);
  // Every acknowledged frame reached Redis, so the surviving node has it.
  std::vector<uint32_t> expected;
  for (const auto& [fs, entity] : entity_of) {
    if (fs != 0 && fs <= acked) expected.push_back(entity);
  }
  const auto all_there = [&] {
    bool ok = true;
    survivor.get().InspectScene("fall", [&](const runtime::CrdtStore& s, uint64_t) {
      for (uint32_t e : expected) ok = ok && s.FindTransform(e) != nullptr;
    });
    return ok;
  };
  EXPECT_TRUE(WaitUntil(all_there, 30s)) << expected.size() << " acknowledged writes expected";
}

TEST(ServerClusterTest, CompactionUnderWritesKeepsTheHashAndBoundsTheStream) {
  RedisTestServer redis;
  ASSERT_TRUE(redis.started()) << redis.log();
  TestServer a(NodeConfig(redis, /*compact_ms=*/100, /*retain_ms=*/0));
  TestServer b(NodeConfig(redis, /*compact_ms=*/100, /*retain_ms=*/0));
  auto wa = Join(a.tcp_url(), "fold");
  auto wb = Join(b.tcp_url(), "fold");
  std::vector<std::vector<uint8_t>> sent;
  for (uint32_t i = 1; i <= 300; ++i) {
    for (client::Client* c : {wa.get(), wb.get()}) {
      std::vector<uint8_t> dcl;
      AppendPut(dcl, 1500 + i % 20, i, static_cast<float>(i) + (c == wa.get() ? 0.5f : 0.f));
      c->SendCrdt(dcl);
      sent.push_back(dcl);
      c->Poll();
    }
    if (i % 50 == 0) {
      ASSERT_TRUE(wa->PollUntil([&] { return wa->pending_frames() == 0; }, 30s));
      ASSERT_TRUE(wb->PollUntil([&] { return wb->pending_frames() == 0; }, 30s));
    }
  }
  const std::string expected = ReplayHash(sent);
  EXPECT_TRUE(NodeReaches(a, "fold", expected));
  EXPECT_TRUE(NodeReaches(b, "fold", expected));
  // 600 entries were appended; compaction folds them into the snapshot and trims.
  EXPECT_TRUE(WaitUntil([&] { return StreamLength(redis, "fold") <= 4; }, 30s))
      << StreamLength(redis, "fold") << " entries left";
  TestServer late(NodeConfig(redis));
  auto joiner = Join(late.tcp_url(), "fold");
  EXPECT_EQ(joiner->store().StateHashHex(), expected);
}

TEST(ServerClusterTest, OtherNodesWritesCountTowardsMaxSceneBytes) {
  RedisTestServer redis;
  ASSERT_TRUE(redis.started()) << redis.log();
  server::ServerConfig capped = NodeConfig(redis);
  capped.limits.max_scene_bytes = 16u << 10;  // ~240 Transform PUTs
  TestServer a(capped);
  TestServer b(NodeConfig(redis));
  auto on_a = Join(a.tcp_url(), "capped");
  auto on_b = Join(b.tcp_url(), "capped");
  // b's writer (no cap there) grows the scene past a's cap: a merges all of it (it is in
  // Redis; refusing it would make the nodes diverge).
  std::vector<std::vector<uint8_t>> sent;
  for (uint32_t frame = 0; frame < 5; ++frame) {
    std::vector<uint8_t> dcl;
    for (uint32_t e = 0; e < 100; ++e) AppendPut(dcl, 600 + frame * 100 + e, 1, 1.0f);
    on_b->SendCrdt(dcl);
    sent.push_back(dcl);
    ASSERT_TRUE(on_b->PollUntil([&] { return on_b->pending_frames() == 0; }, 30s));
  }
  EXPECT_TRUE(on_b->TakeRefusals().empty());
  const std::string expected = ReplayHash(sent);
  ASSERT_TRUE(NodeReaches(a, "capped", expected));
  // a's own writers may no longer grow the scene ...
  std::vector<uint8_t> grow;
  for (uint32_t e = 0; e < 10; ++e) AppendPut(grow, 2000 + e, 1, 2.0f);
  on_a->SendCrdt(grow);
  ASSERT_TRUE(on_a->PollUntil([&] { return on_a->pending_frames() == 0; }, 30s));
  const auto refusals = on_a->TakeRefusals();
  ASSERT_EQ(refusals.size(), 1u);
  EXPECT_EQ(refusals[0].code, ErrorCode::kSceneTooLarge);
  // ... but may still move what exists (no growth).
  std::vector<uint8_t> move;
  for (uint32_t e = 0; e < 10; ++e) AppendPut(move, 600 + e, 2, 3.0f);
  on_a->SendCrdt(move);
  sent.push_back(move);
  ASSERT_TRUE(on_a->PollUntil([&] { return on_a->pending_frames() == 0; }, 30s));
  EXPECT_TRUE(on_a->TakeRefusals().empty());
  EXPECT_TRUE(NodeReaches(b, "capped", ReplayHash(sent)));
}

TEST(ServerClusterTest, LoadSpreadsItsClientsOverTheNodes) {
  RedisTestServer redis;
  ASSERT_TRUE(redis.started()) << redis.log();
  TestServer a(NodeConfig(redis));
  TestServer b(NodeConfig(redis));
  const CommandResult r = RunCommand(std::string(SCENECRDT_BINARY) + " load --server " +
                                     a.tcp_url() + "," + b.tcp_url() +
                                     " --scene spread --clients 4 --movers 2 --rate 10"
                                     " --duration 1 --warmup 0 --json");
  ASSERT_EQ(r.status, 0) << r.output;
  // Clients joined both nodes (each hosts the scene) and the nodes agree.
  const std::string hash = a.SceneHash("spread");
  ASSERT_FALSE(hash.empty());
  EXPECT_TRUE(NodeReaches(b, "spread", hash));
  EXPECT_TRUE(NodeReaches(a, "spread", b.SceneHash("spread")));
}

TEST(ServerClusterTest, ThePasswordFileOpensAProtectedRedisAndAWrongOneSaysWhatToFix) {
  RedisTestServer redis({"--requirepass", "s3cret"});
  ASSERT_TRUE(redis.started()) << redis.log();
  TempDir dir;
  const std::string good = dir.path() + "/good";
  const std::string bad = dir.path() + "/bad";
  std::ofstream(good) << "s3cret\n";
  std::ofstream(bad) << "wrong\n";
  {
    ServerProcess node(dir.path(), {"--redis", redis.url(), "--redis-password-file", good});
    ASSERT_TRUE(node.started()) << node.log();
    auto c = Join(node.tcp_url(), "locked");
    std::vector<uint8_t> dcl;
    AppendPut(dcl, 700, 1, 1.0f);
    c->SendCrdt(dcl);
    EXPECT_TRUE(c->PollUntil([&] { return c->pending_frames() == 0; }, 30s));
    EXPECT_EQ(node.log().find("s3cret"), std::string::npos) << "the password reached the log";
  }
  ServerProcess refused(dir.path(), {"--redis", redis.url(), "--redis-password-file", bad});
  EXPECT_FALSE(refused.started());  // it exited (exit status 2) instead of listening
  EXPECT_EQ(refused.WaitExit(10s), 2) << refused.log();
  // The error says what to do about Redis's password, not the server's own --auth (issue 23).
  EXPECT_NE(refused.log().find("Redis refused the password"), std::string::npos) << refused.log();
  EXPECT_NE(refused.log().find("requirepass"), std::string::npos) << refused.log();
  EXPECT_EQ(refused.log().find("--auth"), std::string::npos) << refused.log();
}

}  // namespace
}  // namespace scenecrdt::testing
