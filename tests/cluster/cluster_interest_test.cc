// SPDX-License-Identifier: Apache-2.0
// Interest management in cluster mode (docs/INTEREST.md "Cluster mode"): two `serve --redis`
// nodes on a real redis-server. A writer on node A places and moves a few hundred entities
// (hierarchies, reparenting, Transform deletions); interest clients on node B and on node A
// must hold exactly the node's state restricted to their view (the reference and the check of
// tests/client/interest_reference.h), after joins, moves, interest moves, a client of node B
// following an entity it writes itself, and a viewer of node A resuming on node B. Each node
// filters for its own clients; the stream carries everything.
#include <gtest/gtest.h>

#include <memory>
#include <random>
#include <vector>

#include "tests/client/interest_reference.h"
#include "tests/cluster/cluster_node_util.h"
#include "tests/cluster/redis_test_server.h"
#include "tests/server/server_test_util.h"

namespace scenecrdt::testing {
namespace {

using namespace std::chrono_literals;
using client::Client;
using client::ClientOptions;
using client::Interest;
using client::test::AwaitViews;
using client::test::ViewReference;

constexpr char kScene[] = "cluster-interest";
constexpr uint32_t kFirst = 512;
constexpr uint32_t kEntities = 400;

protocol::Transform At(float x, float z, protocol::EntityId parent = 0) {
  protocol::Transform t;
  t.position = {x, 0.0f, z};
  t.parent = parent;
  return t;
}

bool Quiet(const Client& c) {
  return c.synced() && c.pending_frames() == 0 && c.unsent_writes() == 0;
}

server::ServerConfig Node(const RedisTestServer& redis) {
  server::ServerConfig c = NodeConfig(redis);
  c.limits.messages_per_second = 1000000;
  c.limits.message_burst = 1000000;
  return c;
}

std::unique_ptr<Client> Viewer(const std::string& url, const Interest& i) {
  ClientOptions o;
  o.url = url;
  o.scene = kScene;
  o.interest = i;
  auto c = std::make_unique<Client>(o);
  EXPECT_TRUE(c->Start().has_value());
  return c;
}

TEST(ClusterInterestTest, ClientsOfEitherNodeHoldTheStateRestrictedToTheirView) {
  RedisTestServer redis;
  ASSERT_TRUE(redis.started()) << redis.log();
  TestServer a(Node(redis));
  TestServer b(Node(redis));
  std::mt19937 rng(19);
  std::uniform_real_distribution<float> pos(-60.0f, 60.0f);
  std::uniform_real_distribution<float> off(-40.0f, 40.0f);
  auto writer = Join(a.tcp_url(), kScene);
  ASSERT_NE(writer, nullptr);
  std::vector<protocol::EntityId> placed;
  const auto place = [&](protocol::EntityId e) {
    // A third hang under an earlier entity, far from it.
    protocol::EntityId parent = 0;
    if (!placed.empty() && rng() % 3 == 0) parent = placed[rng() % placed.size()];
    const protocol::Transform t = parent ? At(off(rng), off(rng), parent) : At(pos(rng), pos(rng));
    ASSERT_TRUE(writer->WriteTransform(e, t).has_value());
  };
  for (uint32_t e = kFirst; e < kFirst + kEntities; ++e) {
    place(e);
    placed.push_back(e);
  }
  writer->Flush();
  ASSERT_TRUE(writer->PollUntil([&] { return Quiet(*writer); }, 30s));

  // Viewers: points and a follower on node B, a point on node A; one more on node B follows
  // the entity it writes itself.
  std::vector<std::unique_ptr<Client>> viewers;
  std::vector<std::string> on;  // the node of each viewer: "a" or "b"
  const auto add = [&](TestServer& node, const char* name, Interest i) {
    i.hysteresis = 0.0f;  // exact: the reference has no hysteresis
    viewers.push_back(Viewer(node.tcp_url(), i));
    on.push_back(name);
  };
  for (int k = 0; k < 3; ++k) add(b, "b", Interest{{pos(rng), 0, pos(rng)}, {}, 25.0f, {}});
  add(b, "b", Interest{{}, placed[5], 30.0f, {}});
  add(a, "a", Interest{{pos(rng), 0, pos(rng)}, {}, 25.0f, {}});
  constexpr protocol::EntityId kAvatar = 60000;
  add(b, "b", Interest{{}, kAvatar, 20.0f, {}});
  Client& avatar = *viewers.back();

  const auto expect_views = [&](const char* when) {
    SCOPED_TRACE(when);
    const std::string hash = a.SceneHash(kScene);
    ASSERT_TRUE(NodeReaches(b, kScene, hash)) << "node B did not reach node A's state";
    std::vector<Client*> all;
    std::vector<ViewReference> refs;
    for (std::size_t i = 0; i < viewers.size(); ++i) {
      const Interest interest = *viewers[i]->interest();
      ViewReference ref;
      TestServer& node = on[i] == "a" ? a : b;
      ASSERT_TRUE(node.get().InspectScene(kScene, [&](const runtime::CrdtStore& s, uint64_t) {
        ref = client::test::ReferenceView(s, interest.center, interest.follow_entity,
                                          interest.radius);
      }));
      all.push_back(viewers[i].get());
      refs.push_back(std::move(ref));
    }
    ASSERT_EQ(AwaitViews(all, refs, 20s), "");
    // The views are partial and not empty (the check would be void otherwise).
    std::size_t held = 0;
    for (const ViewReference& r : refs) {
      EXPECT_LT(r.view.size(), r.transform_entities);
      held += r.view.size();
    }
    EXPECT_GT(held, 0u);
  };
  expect_views("after the joins");
  if (HasFatalFailure()) return;

  const auto move_some = [&](int count) {
    for (int k = 0; k < count; ++k) {
      const protocol::EntityId e = placed[rng() % placed.size()];
      if (rng() % 10 == 0) {
        ASSERT_TRUE(writer->DeleteTransform(e).has_value());
      } else {
        place(e);  // moved, maybe reparented (loops may form: parked at root)
      }
    }
    writer->Flush();
    ASSERT_TRUE(writer->PollUntil([&] { return Quiet(*writer); }, 30s));
  };
  for (int round = 0; round < 3; ++round) {
    move_some(150);
    if (HasFatalFailure()) return;
    if (round == 1) {
      // Interests move too, on both nodes.
      for (std::size_t k : {std::size_t{0}, std::size_t{4}}) {
        Interest i = *viewers[k]->interest();
        i.center = {pos(rng), 0, pos(rng)};
        ASSERT_TRUE(viewers[k]->SetInterest(i).has_value());
      }
    }
    if (round == 2) {
      // The follower of node B writes its own avatar: its view follows it.
      ASSERT_TRUE(avatar.WriteTransform(kAvatar, At(pos(rng), pos(rng))).has_value());
      avatar.Flush();
      ASSERT_TRUE(avatar.PollUntil([&] { return Quiet(avatar); }, 30s));
      ASSERT_TRUE(NodeReaches(a, kScene, b.SceneHash(kScene)));
    }
    expect_views(("after moves, round " + std::to_string(round)).c_str());
    if (HasFatalFailure()) return;
  }
  // A viewer of node A comes back on node B with its resume position: a snapshot of its view.
  ClientOptions o;
  o.url = b.tcp_url();
  o.scene = kScene;
  o.interest = viewers[4]->interest();
  o.resume_sequence = viewers[4]->scene_sequence();
  viewers[4]->Stop();
  viewers[4] = std::make_unique<Client>(o);
  on[4] = "b";
  ASSERT_TRUE(viewers[4]->Start().has_value());
  move_some(50);
  expect_views("after a viewer moved from node A to node B");
  ASSERT_TRUE(viewers[4]->welcome().has_value());
  EXPECT_FALSE(viewers[4]->welcome()->resumed);
  for (auto& v : viewers) v->Stop();
  writer->Stop();
}

}  // namespace
}  // namespace scenecrdt::testing
