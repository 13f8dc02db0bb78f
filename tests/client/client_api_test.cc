// SPDX-License-Identifier: Apache-2.0
// The renderer-facing Client API against in-process servers on loopback: Join (success, a
// timeout, a closed connection), deletes of a Transform and of an entity seen by another client,
// interpolation through the client, URL lists, and fail-over between two servers: the first
// server dies with a write unacknowledged, the client moves to the second, keeps the write
// and gets it acknowledged there.
#include <gtest/gtest.h>

#include "scenecrdt/client/client.h"
#include "scenecrdt/client/url.h"
#include "tests/client/fault_proxy.h"
#include "tests/client/test_server.h"

namespace scenecrdt::client::test {
namespace {

using namespace std::chrono_literals;

protocol::Transform At(float x) {
  protocol::Transform t;
  t.position = {x, 0.0f, 0.0f};
  return t;
}

ClientOptions Options(const std::string& url, const std::string& scene) {
  ClientOptions o;
  o.url = url;
  o.scene = scene;
  return o;
}

// A reconnecting client with fast backoff and keepalive.
ClientOptions Resilient(std::vector<std::string> urls, const std::string& scene,
                        std::vector<std::string>* log) {
  ClientOptions o;
  o.urls = std::move(urls);
  o.scene = scene;
  o.reconnect.enabled = true;
  o.reconnect.backoff.initial_delay_ms = 5;
  o.reconnect.backoff.max_delay_ms = 80;
  o.reconnect.backoff.seed = 7;
  o.reconnect.ping_interval_ms = 50;
  o.reconnect.pong_timeout_ms = 600;
  o.log = [log](std::string_view line) { log->emplace_back(line); };
  return o;
}

std::string Lines(const std::vector<std::string>& log) {
  std::string out;
  for (const auto& l : log) out += l + "\n";
  return out;
}

TEST(ServerListTest, SplitsTrimsAndSkipsEmptyEntries) {
  EXPECT_EQ(SplitServerList("tcp://a:1, ws://b:2 ,,tcp://c:3"),
            (std::vector<std::string>{"tcp://a:1", "ws://b:2", "tcp://c:3"}));
  EXPECT_TRUE(SplitServerList(" , ").empty());
  EXPECT_EQ(SplitServerList("tcp://a:1"), (std::vector<std::string>{"tcp://a:1"}));
}

TEST(ClientJoinTest, RefusesBadListsBeforeStarting) {
  EXPECT_EQ(Client(Options("", "s")).Start().error().code, ErrorCode::kInvalidArgument);
  EXPECT_EQ(Client(Options("tcp://127.0.0.1:7600,http://x:1", "s")).Start().error().code,
            ErrorCode::kInvalidArgument);
  ClientOptions two_scenes;
  two_scenes.urls = {"ws://127.0.0.1:1/scene/a", "ws://127.0.0.1:2/scene/b"};
  EXPECT_EQ(Client(two_scenes).Start().error().code, ErrorCode::kInvalidArgument);
}

class ClientApiTest : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_TRUE(a_.Start()); }
  TestServer a_;
};

TEST_F(ClientApiTest, JoinWaitsForTheStateAndReportsTimeoutsAndRefusals) {
  Client c(Options(a_.tcp_url(), "join"));
  ASSERT_TRUE(c.Join(20s).has_value());
  EXPECT_TRUE(c.state_ready());
  EXPECT_TRUE(c.synced());

  // Nothing listens there; with retries on, Join times out.
  const std::string dead = "tcp://127.0.0.1:1";
  std::vector<std::string> log;
  ClientOptions retrying = Resilient({dead}, "join", &log);
  retrying.reconnect.retry_first_connect = true;
  Client waiting(retrying);
  auto timed_out = waiting.Join(300ms);
  ASSERT_FALSE(timed_out.has_value());
  EXPECT_EQ(timed_out.error().code, ErrorCode::kIo);
  EXPECT_NE(std::string(timed_out.error().detail).find("timed out"), std::string::npos);
  EXPECT_FALSE(waiting.closed());

  // Without retries the connection failure closes the client and Join says why.
  Client once(Options(dead, "join"));
  auto failed = once.Join(20s);
  ASSERT_FALSE(failed.has_value());
  EXPECT_EQ(failed.error().code, ErrorCode::kIo);
  EXPECT_TRUE(once.closed());
}

TEST_F(ClientApiTest, DeletesOfATransformAndOfAnEntityReachOtherClients) {
  Client writer(Options(a_.tcp_url(), "deletes"));
  Client viewer(Options(a_.tcp_url(), "deletes"));
  ASSERT_TRUE(writer.Join(20s).has_value());
  ASSERT_TRUE(viewer.Join(20s).has_value());
  ASSERT_TRUE(writer.WriteTransform(600, At(1.0f)).has_value());
  ASSERT_TRUE(writer.WriteTransform(601, At(2.0f)).has_value());
  writer.Flush();
  ASSERT_TRUE(viewer.PollUntil(
      [&] { return viewer.store().FindTransform(600) && viewer.store().FindTransform(601); }, 20s));
  viewer.Update();
  EXPECT_TRUE(viewer.runtime().IndexOf(600).has_value());

  ASSERT_TRUE(writer.DeleteTransform(600).has_value());
  ASSERT_TRUE(writer.DeleteEntity(601).has_value());
  EXPECT_EQ(writer.store().FindTransform(600), nullptr);  // merged locally at once
  EXPECT_EQ(writer.DeleteEntity(5).error().code, ErrorCode::kReservedEntity);
  // A deleted entity takes no more writes.
  EXPECT_FALSE(writer.WriteTransform(601, At(3.0f)).has_value());
  writer.Flush();
  ASSERT_TRUE(writer.PollUntil([&] { return writer.pending_frames() == 0; }, 20s));
  ASSERT_TRUE(viewer.PollUntil(
      [&] { return !viewer.store().FindTransform(600) && !viewer.store().FindTransform(601); },
      20s));
  viewer.Update();
  EXPECT_FALSE(viewer.runtime().IndexOf(600).has_value());
  EXPECT_FALSE(viewer.runtime().IndexOf(601).has_value());
  EXPECT_EQ(viewer.runtime().removed_entities().size(), 2u);
  EXPECT_TRUE(viewer.store().DeletedVersion(601).has_value());
  EXPECT_EQ(viewer.store().StateHashHex(), a_.SceneHash("deletes"));
  EXPECT_EQ(writer.store().StateHashHex(), a_.SceneHash("deletes"));
}

TEST_F(ClientApiTest, DeletesHeldBeforeTheSnapshotAreStampedOnTopOfIt) {
  Client writer(Options(a_.tcp_url(), "held-delete"));
  ASSERT_TRUE(writer.Join(20s).has_value());
  ASSERT_TRUE(writer.WriteTransform(700, At(1.0f)).has_value());
  ASSERT_TRUE(writer.WriteTransform(700, At(2.0f)).has_value());  // timestamp 2
  ASSERT_TRUE(writer.PollUntil([&] { return writer.pending_frames() == 0; }, 20s));
  // Before its snapshot, a new client does not know the stamp: the deletion is held.
  Client late(Options(a_.tcp_url(), "held-delete"));
  ASSERT_TRUE(late.DeleteTransform(700).has_value());
  EXPECT_EQ(late.unsent_writes(), 1u);
  ASSERT_TRUE(late.Join(20s).has_value());
  ASSERT_TRUE(late.PollUntil([&] { return late.pending_frames() == 0; }, 20s));
  EXPECT_EQ(late.stats().held_writes, 1u);
  const auto r = late.store().FindRegister(protocol::kTransformComponentId, 700);
  ASSERT_TRUE(r.has_value());
  EXPECT_FALSE(r->has_data);
  EXPECT_EQ(r->timestamp, 3u);  // on top of the writer's 2
  EXPECT_EQ(late.store().StateHashHex(), a_.SceneHash("held-delete"));
}

TEST_F(ClientApiTest, InterpolationRunsThroughTheClient) {
  Client writer(Options(a_.tcp_url(), "interp"));
  Client viewer(Options(a_.tcp_url(), "interp"));
  ASSERT_TRUE(writer.Join(20s).has_value());
  ASSERT_TRUE(viewer.Join(20s).has_value());
  runtime::InterpolationOptions bad;
  bad.snap_distance = -1.0f;
  EXPECT_EQ(viewer.EnableInterpolation(bad).error().code, ErrorCode::kInvalidArgument);
  EXPECT_FALSE(viewer.interpolation_enabled());
  runtime::InterpolationOptions options;
  options.fixed_delay_us = 50'000;
  options.max_extrapolation_us = 0;  // past the newest sample: hold it
  ASSERT_TRUE(viewer.EnableInterpolation(options).has_value());
  EXPECT_TRUE(viewer.interpolation_enabled());
  for (int i = 1; i <= 5; ++i) {
    ASSERT_TRUE(writer.WriteTransform(650, At(static_cast<float>(i))).has_value());
    writer.Flush();
    ASSERT_TRUE(viewer.PollUntil(
        [&] {
          const protocol::Transform* t = viewer.store().FindTransform(650);
          return t && t->position.x == static_cast<float>(i);
        },
        20s));
    ASSERT_TRUE(viewer.UpdateInterpolated().has_value());
  }
  // Well past the delay the presentation shows the newest position.
  ASSERT_TRUE(viewer.UpdateInterpolated(viewer.NowUs() + 2'000'000).has_value());
  const auto index = viewer.runtime().InterpolatedIndexOf(650);
  ASSERT_TRUE(index.has_value());
  EXPECT_EQ(viewer.runtime().interpolated_world_matrices()[*index][3][0], 5.0f);
  const runtime::InterpolationStats stats = viewer.runtime().interpolation_stats();
  EXPECT_EQ(stats.frames, 6u);
  EXPECT_GT(stats.delay_us, 0);
  viewer.DisableInterpolation();
  EXPECT_FALSE(viewer.interpolation_enabled());
}

TEST_F(ClientApiTest, AFirstServerThatIsDownFailsOverToTheNext) {
  const std::string dead = "tcp://127.0.0.1:1";  // nothing listens there
  std::vector<std::string> log;
  // Reconnect off (a one-shot command): each server of the list still gets one try.
  ClientOptions o = Options(dead + "," + a_.tcp_url(), "first");
  o.log = [&log](std::string_view line) { log.emplace_back(line); };
  Client c(o);
  ASSERT_TRUE(c.Join(20s).has_value()) << Lines(log);
  EXPECT_EQ(c.current_server(), 1u);
  EXPECT_EQ(c.stats().failovers, 1u);
  EXPECT_EQ(c.servers().size(), 2u);
  // Both down: the client gives up after one round.
  Client none(Options(dead + "," + dead, "first"));
  EXPECT_EQ(none.Join(20s).error().code, ErrorCode::kIo);
  EXPECT_TRUE(none.closed());
}

TEST_F(ClientApiTest, KilledServerFailsOverAndKeepsUnackedWrites) {
  TestServer b;
  ASSERT_TRUE(b.Start());
  FaultProxy proxy(a_.tcp_port(), /*seed=*/5);
  std::vector<std::string> log;
  // Two unrelated servers (not nodes of one cluster): their sequences mean different things.
  ClientOptions o = Resilient({proxy.url(), b.tcp_url()}, "failover", &log);
  o.reconnect.resume_across_servers = false;
  Client c(o);
  ASSERT_TRUE(c.Join(20s).has_value()) << Lines(log);
  EXPECT_EQ(c.current_server(), 0u);
  ASSERT_TRUE(c.WriteTransform(900, At(1.0f)).has_value());
  ASSERT_TRUE(c.PollUntil([&] { return c.pending_frames() == 0; }, 20s));
  // The next write leaves but never reaches server A: it stays unacknowledged.
  proxy.Stall(Direction::kToServer, true);
  ASSERT_TRUE(c.WriteTransform(901, At(2.0f)).has_value());
  c.Flush();
  EXPECT_EQ(c.pending_frames(), 1u);
  // A dies; nothing reaches it any more.
  proxy.SetAccepting(false);
  a_.Stop();
  proxy.CutAll();
  ASSERT_TRUE(c.PollUntil([&] { return !c.synced(); }, 20s)) << Lines(log);
  // Written while between servers.
  ASSERT_TRUE(c.WriteTransform(902, At(3.0f)).has_value());
  ASSERT_TRUE(c.PollUntil(
      [&] { return c.synced() && c.pending_frames() == 0 && c.unsent_writes() == 0; }, 20s))
      << Lines(log);
  EXPECT_EQ(c.current_server(), 1u);
  EXPECT_GE(c.stats().failovers, 1u);
  EXPECT_GE(c.stats().resent_frames, 1u);
  // B never saw A's state: it was asked for a snapshot, which replaced the replica; the
  // unacked write went along.
  EXPECT_FALSE(c.welcome()->resumed);
  EXPECT_EQ(c.stats().resyncs, 1u);
  EXPECT_EQ(b.TransformOf("failover", 901).second, 2.0f);
  EXPECT_EQ(b.TransformOf("failover", 902).second, 3.0f);
  EXPECT_EQ(c.store().StateHashHex(), b.SceneHash("failover"));
}

}  // namespace
}  // namespace scenecrdt::client::test
