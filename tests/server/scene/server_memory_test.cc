// SPDX-License-Identifier: Apache-2.0
// Memory bounds end to end: a read-only token creates no scene however many names it tries;
// idle scenes leave memory and come back with the same state hash (and a fresh incarnation,
// so an old resume position gets a snapshot); the in-memory cap refuses with scene_full and
// evicts; --max-scene-bytes refuses growth but not same-size updates or deletes; joiners at
// one sequence share one snapshot.
#include <gtest/gtest.h>

#include <fstream>
#include <thread>

#include "scenecrdt/protocol/crdt_codec.h"
#include "scenecrdt/protocol/session/sequence.h"
#include "tests/server/server_test_util.h"

namespace scenecrdt::testing {
namespace {

using namespace std::chrono_literals;

std::unique_ptr<client::Client> Join(const std::string& url, const std::string& scene,
                                     const std::string& token = {},
                                     std::optional<uint64_t> resume = std::nullopt) {
  client::ClientOptions o;
  o.url = url;
  o.scene = scene;
  o.token = token;
  o.resume_sequence = resume;
  auto c = std::make_unique<client::Client>(o);
  EXPECT_TRUE(c->Start().has_value());
  EXPECT_TRUE(c->PollUntil([&] { return c->state_ready(); }, 20s)) << "join " << scene;
  return c;
}

std::string WriteAuth(const std::string& dir) {
  const std::string path = dir + "/auth.json";
  std::ofstream(path) << R"({"tokens":[{"token":"w","scenes":["*"],"role":"write"},)"
                      << R"({"token":"r","scenes":["*"],"role":"read"}]})";
  return path;
}

TEST(MemoryBoundsTest, ReadOnlyTokenCreatesNoScene) {
  TempDir dir;
  auto config = TestServer::Config();
  config.access.auth_file = WriteAuth(dir.path());
  TestServer server(config);
  const uint16_t port = server.get().tcp_port();
  for (int i = 0; i < 2000; ++i) {
    RawConnection c(port);
    ASSERT_TRUE(c.connected());
    ASSERT_TRUE(c.SendFrame(session::Hello{"n" + std::to_string(i), "r", std::nullopt, ""}));
    auto error = c.ReadError();
    ASSERT_TRUE(error.has_value()) << i;
    ASSERT_EQ(error->code, ErrorCode::kUnauthorized) << error->text;
  }
  EXPECT_EQ(server.get().num_scenes(), 0u);
  EXPECT_EQ(server.get().metrics().scene_create_refusals.load(), 2000u);
  // A writer creates the scene; then the reader may join it.
  auto writer = Join(server.tcp_url(), "made", "w");
  auto reader = Join(server.tcp_url(), "made", "r");
  EXPECT_TRUE(reader->state_ready());
  EXPECT_EQ(server.get().num_scenes(), 1u);
}

TEST(MemoryBoundsTest, IdleSceneIsEvictedAndReloadsTheSameState) {
  auto config = TestServer::Config();
  config.limits.scene_idle_evict_ms = 50;
  TestServer server(config);
  std::vector<uint8_t> dcl;
  for (uint32_t e = 0; e < 50; ++e) AppendPut(dcl, 700 + e, 3, static_cast<float>(e));
  protocol::CrdtMessage del;
  del.type = protocol::MessageType::kDeleteEntity;
  del.entity = 710;
  protocol::AppendMessage(del, dcl);
  uint64_t seq = 0;
  {
    auto c = Join(server.tcp_url(), "idle");
    c->SendCrdt(dcl);
    ASSERT_TRUE(c->PollUntil([&] { return c->pending_frames() == 0; }, 20s));
    seq = c->scene_sequence();
    c->Stop();
  }
  ASSERT_TRUE(WaitUntil([&] { return server.get().num_scenes() == 0; }))
      << "an idle scene stays in memory";
  EXPECT_GE(server.get().metrics().scene_evictions.load(), 1u);
  // Loaded again on the next join: the same state; the old resume position is from another
  // life of the scene, so it gets a full snapshot, not a wrong delta.
  auto back = Join(server.tcp_url(), "idle", {}, seq);
  EXPECT_EQ(back->store().StateHashHex(), ReplayHash({dcl}));
  EXPECT_FALSE(back->welcome()->resumed);
  EXPECT_NE(session::SequenceIncarnation(back->scene_sequence()),
            session::SequenceIncarnation(seq));
  EXPECT_EQ(server.get().metrics().scene_loads.load(), 1u);
  // A scene with a member is never evicted.
  server.get().SweepIdleScenes();
  std::this_thread::sleep_for(200ms);  // several sweeps at 12 ms; it must stay
  EXPECT_EQ(server.get().num_scenes(), 1u);
}

TEST(MemoryBoundsTest, InMemoryCapRefusesWithSceneFullAndEvictsIdleScenes) {
  auto config = TestServer::Config();
  config.limits.max_scenes_in_memory = 2;
  config.limits.scene_idle_evict_ms = 3600000;  // only the cap evicts here
  TestServer server(config);
  auto a = Join(server.tcp_url(), "a");
  auto b = Join(server.tcp_url(), "b");
  {
    RawConnection c(server.get().tcp_port());
    ASSERT_TRUE(c.SendFrame(session::Hello{"c", "", std::nullopt, ""}));
    auto error = c.ReadError();
    ASSERT_TRUE(error.has_value());
    EXPECT_EQ(error->code, ErrorCode::kSceneFull) << error->text;
  }
  EXPECT_EQ(server.get().num_scenes(), 2u);
  a->Stop();
  // Scene a is idle now: the next refused join evicts it, the retry gets in.
  ASSERT_TRUE(WaitUntil([&] {
    RawConnection c(server.get().tcp_port());
    return c.Join("c").has_value();
  })) << "an idle scene was not evicted for room";
  EXPECT_EQ(server.get().num_scenes(), 2u);
  EXPECT_GE(server.get().metrics().scene_cap_refusals.load(), 1u);
}

TEST(MemoryBoundsTest, MaxSceneBytesRefusesGrowthNotUpdatesOrDeletes) {
  auto config = TestServer::Config();
  config.limits.max_scene_bytes = 64u << 10;  // ~960 Transform PUTs
  TestServer server(config);
  auto c = Join(server.tcp_url(), "cap");
  // 100 new entities per frame: the tenth frame passes the cap.
  std::vector<ErrorCode> refused;
  std::vector<std::vector<uint8_t>> accepted;
  for (uint32_t frame = 0; frame < 12; ++frame) {
    std::vector<uint8_t> dcl;
    for (uint32_t e = 0; e < 100; ++e) AppendPut(dcl, 600 + frame * 100 + e, 1, 1.0f);
    c->SendCrdt(dcl);
    ASSERT_TRUE(c->PollUntil([&] { return c->pending_frames() == 0; }, 20s));
    auto r = c->TakeRefusals();
    if (r.empty()) {
      accepted.push_back(dcl);
    } else {
      refused.push_back(r[0].code);
    }
  }
  ASSERT_EQ(refused.size(), 3u);
  for (ErrorCode code : refused) EXPECT_EQ(code, ErrorCode::kSceneTooLarge);
  EXPECT_EQ(server.SceneHash("cap"), ReplayHash(accepted));
  // At the cap, moving what exists is fine (same size) and so is deleting.
  std::vector<uint8_t> move;
  for (uint32_t e = 0; e < 100; ++e) AppendPut(move, 600 + e, 2, 5.0f);
  c->SendCrdt(move);
  protocol::CrdtMessage del;
  del.type = protocol::MessageType::kDeleteEntity;
  del.entity = 650;
  std::vector<uint8_t> deletes;
  protocol::AppendMessage(del, deletes);
  c->SendCrdt(deletes);
  ASSERT_TRUE(c->PollUntil([&] { return c->pending_frames() == 0; }, 20s));
  EXPECT_TRUE(c->TakeRefusals().empty());
  accepted.push_back(move);
  accepted.push_back(deletes);
  EXPECT_EQ(server.SceneHash("cap"), ReplayHash(accepted));
}

TEST(MemoryBoundsTest, JoinersAtOneSequenceShareOneSnapshot) {
  auto config = TestServer::Config();
  config.limits.messages_per_second = 1000000;
  config.limits.message_burst = 1000000;
  config.limits.slow_consumer_ms = 120000;  // the joiners below read only at the end
  TestServer server(config);
  // ~8 MB of state: more than loopback socket buffers hold, so a joiner that does not read
  // keeps its snapshot in flight.
  {
    auto w = Join(server.tcp_url(), "shared");
    const std::vector<uint8_t> payload(400, 9);
    for (uint32_t frame = 0; frame < 9; ++frame) {
      std::vector<uint8_t> dcl;
      for (uint32_t e = 0; e < 1800; ++e) {
        const uint32_t entity = 600 + frame * 1800 + e;
        AppendPut(dcl, entity, 1, 1.0f);
        protocol::CrdtMessage m;
        m.type = protocol::MessageType::kPutComponent;
        m.entity = entity;
        m.component = 1100;
        m.timestamp = 1;
        m.data = payload;
        protocol::AppendMessage(m, dcl);
      }
      w->SendCrdt(dcl);
      ASSERT_TRUE(w->PollUntil([&] { return w->pending_frames() == 0; }, 20s));
    }
    w->Stop();
  }
  // Four joiners that do not read (tiny receive buffers): their snapshot stays in flight, so
  // the second, third and fourth get the first one's frames instead of building their own.
  const uint64_t built_before = server.get().metrics().state_bytes.load();
  std::vector<std::unique_ptr<RawConnection>> joiners;
  for (int i = 0; i < 4; ++i) {
    joiners.push_back(std::make_unique<RawConnection>(server.get().tcp_port(), 4096));
    ASSERT_TRUE(joiners.back()->SendFrame(session::Hello{"shared", "", std::nullopt, ""}));
  }
  ASSERT_TRUE(WaitUntil([&] { return server.get().metrics().snapshots.load() >= 4; }));
  EXPECT_EQ(server.get().metrics().snapshot_shares.load(), 3u);
  EXPECT_GT(server.get().metrics().state_bytes.load(), built_before);
  // Every one of them still gets the whole state.
  for (auto& j : joiners) {
    std::size_t state_frames = 0;
    for (;;) {
      auto bytes = j->ReadFrameBytes(20s);
      ASSERT_TRUE(bytes.has_value());
      auto frame = session::ReadFrame(*bytes, {64u << 20});
      ASSERT_TRUE(frame.has_value());
      if (auto* crdt = std::get_if<session::Crdt>(&frame.value())) {
        ++state_frames;
        if (crdt->is_state && crdt->frame_sequence == 0) break;
      }
    }
    EXPECT_GE(state_frames, 1u);
  }
}

}  // namespace
}  // namespace scenecrdt::testing
