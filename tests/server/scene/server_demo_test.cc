// SPDX-License-Identifier: Apache-2.0
// Owner: server/scene/demo.cc. The demo scene must look alive: every body's world position moves.
// Checked on the kinematics over two minutes (world matrices through the runtime, as a
// renderer computes them), and on the live demo scene a client replicates from the server.
#include <gtest/gtest.h>

#include <algorithm>
#include <glm/glm.hpp>
#include <map>

#include "scenecrdt/server/scene/demo.h"
#include "tests/server/server_test_util.h"

namespace scenecrdt::testing {
namespace {

using namespace std::chrono_literals;

// World positions of the demo bodies in `runtime` (entity -> translation column), after the
// frame's Update() as a renderer calls it.
std::map<uint32_t, glm::vec3> Positions(const runtime::Runtime& runtime) {
  std::map<uint32_t, glm::vec3> out;
  for (uint32_t e = 512; e < 512 + server::kDemoBodies; ++e) {
    const auto index = runtime.IndexOf(e);
    if (index) out[e] = glm::vec3(runtime.world_matrices()[*index][3]);
  }
  return out;
}
std::map<uint32_t, glm::vec3> WorldPositions(runtime::Runtime& runtime) {
  runtime.Update();
  return Positions(runtime);
}
// The same for a client's replica (read-only: the client updates it).
std::map<uint32_t, glm::vec3> WorldPositions(client::Client& c) {
  c.Update();
  return Positions(c.runtime());
}

void Write(runtime::Runtime& runtime, double t_s) {
  std::vector<uint8_t> out;
  for (const server::DemoBody& b : server::DemoBodiesAt(t_s)) {
    ASSERT_TRUE(runtime.WriteTransform(b.entity, b.local, out).has_value());
  }
  runtime.Update();
}

// Every body's world position keeps moving: between any two samples 0.5 s apart over two
// minutes, each one travels at least 0.05 units (a body whose orbit period equals its
// parent's spin period would stay put in world space).
TEST(DemoTest, EveryBodyMovesInWorldSpaceAtAllTimes) {
  runtime::Runtime runtime;
  Write(runtime, 0.0);
  auto before = WorldPositions(runtime);
  ASSERT_EQ(before.size(), server::kDemoBodies);
  for (int step = 1; step <= 240; ++step) {
    const double t = step * 0.5;
    Write(runtime, t);
    const auto now = WorldPositions(runtime);
    for (const auto& [entity, position] : now) {
      EXPECT_GT(glm::distance(position, before[entity]), 0.05f)
          << "entity " << entity << " stood still at t=" << t << " s";
    }
    before = now;
  }
}

// The live demo scene, as a client sees it: sampled at two times, every body has moved.
TEST(DemoTest, LiveDemoSceneMovesEveryBodyForAClient) {
  auto config = TestServer::Config();
  config.demo = true;
  config.demo_hz = 50;
  TestServer server(config);
  client::ClientOptions o;
  o.url = server.tcp_url();
  o.scene = "demo";
  client::Client c(o);
  ASSERT_TRUE(c.Start().has_value());
  ASSERT_TRUE(c.PollUntil(
      [&] { return c.state_ready() && WorldPositions(c).size() == server::kDemoBodies; }, 20s));
  const auto first = WorldPositions(c);
  std::map<uint32_t, float> moved;
  EXPECT_TRUE(c.PollUntil(
      [&] {
        for (const auto& [entity, position] : WorldPositions(c)) {
          moved[entity] = glm::distance(position, first.at(entity));
        }
        return std::all_of(moved.begin(), moved.end(),
                           [](const auto& m) { return m.second > 0.2f; });
      },
      20s));
  for (const auto& [entity, distance] : moved) {
    EXPECT_GT(distance, 0.2f) << "entity " << entity << " did not move in world space";
  }
}

}  // namespace
}  // namespace scenecrdt::testing
