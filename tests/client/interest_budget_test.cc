// SPDX-License-Identifier: Apache-2.0
// `serve --client-budget-kbps` end to end (docs/INTEREST.md "Byte budget"): a real server, a
// writer moving many bodies far above an interest member's budget, then quiet. While the load
// runs the member receives about its budget on the wire (loosely: the budget plus a burst and
// one frame);
// the server says it deferred changes; once the load stops the replica converges to exactly
// the server's state restricted to the view (interest_reference.h AwaitViews).
#include <gtest/gtest.h>

#include <chrono>
#include <random>
#include <vector>

#include "scenecrdt/client/client.h"
#include "tests/client/interest_reference.h"
#include "tests/client/test_server.h"

namespace scenecrdt::client::test {
namespace {

using namespace std::chrono_literals;

constexpr char kScene[] = "budget";

protocol::Transform At(float x, float z) {
  protocol::Transform t;
  t.position = {x, 0.0f, z};
  return t;
}

TEST(InterestBudgetTest, ALowBudgetSendsAboutItsRateAndConvergesWhenQuiet) {
  constexpr double kKbps = 64;  // 8 000 bytes per second, a burst of 800
  constexpr double kBytesPerSecond = kKbps * 1000 / 8;
  TestServer server;
  server.config().limits.messages_per_second = 1000000;
  server.config().limits.message_burst = 1000000;
  server.config().limits.client_budget_kbps = kKbps;
  ASSERT_TRUE(server.Start());
  ClientOptions o;
  o.url = server.tcp_url();
  o.scene = kScene;
  Client writer(o);
  ASSERT_TRUE(writer.Start().has_value());
  ASSERT_TRUE(writer.PollUntil([&] { return writer.synced(); }, 20s));
  // 150 movers around the origin (in view), 50 static bodies far away (out of view).
  std::mt19937 rng(64);
  std::uniform_real_distribution<float> near(-30.0f, 30.0f);
  std::uniform_real_distribution<float> step(-0.5f, 0.5f);
  constexpr uint32_t kMovers = 150;
  std::vector<protocol::Transform> movers;
  for (uint32_t k = 0; k < kMovers; ++k) {
    movers.push_back(At(near(rng), near(rng)));
    ASSERT_TRUE(writer.WriteTransform(600 + k, movers.back()).has_value());
  }
  for (uint32_t k = 0; k < 50; ++k) {
    ASSERT_TRUE(writer.WriteTransform(900 + k, At(200.0f + static_cast<float>(k), 0)).has_value());
  }
  writer.Flush();
  const auto quiet = [](const Client& c) {
    return c.synced() && c.pending_frames() == 0 && c.unsent_writes() == 0;
  };
  ASSERT_TRUE(writer.PollUntil([&] { return quiet(writer); }, 20s));

  o.interest = Interest{glm::vec3(0.0f), std::nullopt, 50.0f, 0.0f};
  Client viewer(o);
  ASSERT_TRUE(viewer.Start().has_value());
  ASSERT_TRUE(viewer.PollUntil([&] { return viewer.synced(); }, 20s));

  // 1.5 s of every mover stepping 50 times a second: about 500 kB/s of changes in view.
  // Transport bytes: the budget counts what goes on the wire (zstd frames here).
  const uint64_t bytes_before = viewer.stats().bytes_received;
  const auto started = std::chrono::steady_clock::now();
  auto tick = started;
  while (std::chrono::steady_clock::now() - started < 1500ms) {
    if (std::chrono::steady_clock::now() >= tick) {
      for (uint32_t k = 0; k < kMovers; ++k) {
        movers[k].position.x += step(rng);
        movers[k].position.z += step(rng);
        ASSERT_TRUE(writer.WriteTransform(600 + k, movers[k]).has_value());
      }
      writer.Flush();
      tick += 20ms;
    }
    writer.Poll();
    viewer.Poll();
    viewer.WaitForInput(1ms);
  }
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  const uint64_t received = viewer.stats().bytes_received - bytes_before;
  // Loosely: the budget, plus a burst and a delivery in flight when the window opened.
  EXPECT_GT(received, 0u);
  EXPECT_LE(static_cast<double>(received), kBytesPerSecond * seconds + 4000.0)
      << received << " bytes in " << seconds << " s";
  EXPECT_GT(server.get().metrics().interest_deferred.load(), 0u);

  // Quiet: everything deferred arrives; the replica is the state restricted to the view.
  ASSERT_TRUE(writer.PollUntil([&] { return quiet(writer); }, 20s));
  ViewReference ref;
  server.get().InspectScene(kScene, [&](const runtime::CrdtStore& s, uint64_t) {
    ref = ReferenceView(s, glm::vec3(0.0f), std::nullopt, 50.0);
  });
  EXPECT_GT(ref.view.size(), kMovers / 2);
  EXPECT_LT(ref.view.size(), ref.transform_entities);
  ASSERT_EQ(AwaitViews({&viewer}, {ref}, 20s), "");
  viewer.Stop();
  writer.Stop();
}

}  // namespace
}  // namespace scenecrdt::client::test
