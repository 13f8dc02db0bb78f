// SPDX-License-Identifier: Apache-2.0
// Interest management end to end (docs/INTEREST.md): a real server, real clients. Each interest
// client's replica must equal the server's state restricted to the documented view (the pure
// reference of interest_reference.h): same registers and timestamps (state hash), bitwise the
// same world matrices; after random moves, reparenting, Transform deletions, interest moves
// and a reconnect. Then a mover crossing the border leaves and enters exactly once
// (hysteresis), and bad interests are refused.
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <limits>
#include <memory>
#include <random>
#include <vector>

#include "scenecrdt/client/client.h"
#include "scenecrdt/protocol/crdt_codec.h"
#include "tests/client/fault_proxy.h"
#include "tests/client/interest_reference.h"
#include "tests/client/test_server.h"

namespace scenecrdt::client::test {
namespace {

using namespace std::chrono_literals;

constexpr char kScene[] = "interest";
constexpr uint32_t kFirst = 512;

bool Quiet(const Client& c) {
  return c.synced() && c.pending_frames() == 0 && c.unsent_writes() == 0;
}

protocol::Transform At(float x, float y, float z, protocol::EntityId parent = 0) {
  protocol::Transform t;
  t.position = {x, y, z};
  t.parent = parent;
  return t;
}

class InterestTest : public ::testing::Test {
 protected:
  void SetUp() override {
    server_.config().limits.messages_per_second = 1000000;
    server_.config().limits.message_burst = 1000000;
    ASSERT_TRUE(server_.Start());
    proxy_ = std::make_unique<FaultProxy>(server_.tcp_port(), /*seed=*/19);
  }

  ClientOptions Options(bool via_proxy) {
    ClientOptions o;
    o.url = via_proxy ? proxy_->url() : server_.tcp_url();
    o.scene = kScene;
    o.reconnect.enabled = via_proxy;
    o.reconnect.backoff.initial_delay_ms = 5;
    o.reconnect.backoff.max_delay_ms = 50;
    o.reconnect.backoff.seed = 3;
    return o;
  }

  ViewReference Expected(const Interest& i) {
    ViewReference ref;
    server_.get().InspectScene(kScene, [&](const runtime::CrdtStore& s, uint64_t) {
      ref = ReferenceView(s, i.center, i.follow_entity, i.radius);
    });
    return ref;
  }

  // Every replica against its reference (interest_reference.h AwaitViews).
  void ExpectViews(const std::vector<std::unique_ptr<Client>>& clients, const char* when) {
    std::vector<Client*> all;
    std::vector<ViewReference> refs;
    for (const auto& c : clients) {
      all.push_back(c.get());
      refs.push_back(Expected(*c->interest()));
    }
    ASSERT_EQ(AwaitViews(all, refs, 20s), "") << when;
  }

  TestServer server_;
  std::unique_ptr<FaultProxy> proxy_;
};

// A few thousand entities: hierarchies whose children sit far from their parents, a loop with
// a child, entities without a Transform (with components), entities with both, tombstones.
TEST_F(InterestTest, ReplicasEqualTheServerStateRestrictedToTheView) {
  std::mt19937 rng(20261128);
  std::uniform_real_distribution<float> pos(-100.0f, 100.0f);
  std::uniform_real_distribution<float> off(-60.0f, 60.0f);
  constexpr uint32_t kEntities = 2500;
  Client writer(Options(false));
  ASSERT_TRUE(writer.Start().has_value());
  ASSERT_TRUE(writer.PollUntil([&] { return writer.synced(); }, 20s));
  std::vector<protocol::EntityId> with_transform;
  const auto place = [&](protocol::EntityId e) {
    // A third hang under an earlier entity, at a large offset.
    protocol::EntityId parent = 0;
    if (!with_transform.empty() && rng() % 3 == 0) {
      parent = with_transform[rng() % with_transform.size()];
    }
    const protocol::Transform t =
        parent ? At(off(rng), off(rng) / 10, off(rng), parent) : At(pos(rng), 0, pos(rng));
    ASSERT_TRUE(writer.WriteTransform(e, t).has_value());
  };
  for (uint32_t n = kFirst; n < kFirst + kEntities; ++n) {
    place(n);
    with_transform.push_back(n);
  }
  // A loop 700 -> 701 -> 702 -> 700 (parked at root) and 703 under 700.
  ASSERT_TRUE(writer.WriteTransform(700, At(5, 0, 5, 701)).has_value());
  ASSERT_TRUE(writer.WriteTransform(701, At(90, 0, 90, 702)).has_value());
  ASSERT_TRUE(writer.WriteTransform(702, At(-90, 0, -90, 700)).has_value());
  ASSERT_TRUE(writer.WriteTransform(703, At(1, 1, 1, 700)).has_value());
  // Components: on entities without a Transform (everyone gets them) and with one.
  std::vector<uint8_t> dcl;
  for (uint32_t n = kFirst + kEntities; n < kFirst + kEntities + 60; ++n) {
    const uint8_t data[] = {1, 2, static_cast<uint8_t>(n)};
    protocol::AppendMessage({protocol::MessageType::kPutComponent, n, 1090, 1, 0, data}, dcl);
  }
  for (uint32_t n = kFirst; n < kFirst + 400; n += 3) {
    const uint8_t data[] = {7, static_cast<uint8_t>(n)};
    protocol::AppendMessage({protocol::MessageType::kPutComponent, n, 1091, 1, 0, data}, dcl);
    protocol::AppendMessage({protocol::MessageType::kAppendValue, n, 1092, 1, 0, data}, dcl);
  }
  ASSERT_NE(writer.SendCrdt(dcl), 0u);
  for (uint32_t n = kFirst + 2000; n < kFirst + 2010; ++n) {
    ASSERT_TRUE(writer.DeleteEntity(n).has_value());
  }
  writer.Flush();
  ASSERT_TRUE(writer.PollUntil([&] { return Quiet(writer); }, 30s));

  // Interest clients: random points (exact: hysteresis 0), a follower of a moving parent, a
  // follower of a loop member's child, one following an entity that does not exist yet.
  std::vector<std::unique_ptr<Client>> clients;
  const auto add = [&](Interest i) {
    ClientOptions o = Options(true);
    o.interest = i;
    clients.push_back(std::make_unique<Client>(o));
    ASSERT_TRUE(clients.back()->Start().has_value());
  };
  for (int k = 0; k < 6; ++k) {
    Interest i;
    i.center = {pos(rng), 0, pos(rng)};
    i.radius = 10.0f + static_cast<float>(rng() % 50);
    i.hysteresis = 0.0f;
    add(i);
  }
  Interest follow;
  follow.follow_entity = with_transform[7];
  follow.radius = 30;
  follow.hysteresis = 0.0f;
  add(follow);
  follow.follow_entity = 703;
  add(follow);
  follow.follow_entity = 60000;
  add(follow);
  ExpectViews(clients, "after the joins");
  if (HasFatalFailure()) return;

  const auto move_some = [&](int count) {
    for (int k = 0; k < count; ++k) {
      const protocol::EntityId e = with_transform[rng() % with_transform.size()];
      if (e >= kFirst + 2000 && e < kFirst + 2010) continue;  // deleted
      if (rng() % 10 == 0) {
        ASSERT_TRUE(writer.DeleteTransform(e).has_value());
      } else {
        place(e);  // moved, maybe reparented (loops may form and break: parked at root)
      }
    }
    writer.Flush();
    ASSERT_TRUE(writer.PollUntil([&] { return Quiet(writer); }, 30s));
  };
  for (int round = 0; round < 3; ++round) {
    move_some(300);
    if (HasFatalFailure()) return;
    if (round == 1) {
      // Interests move too.
      for (int k = 0; k < 3; ++k) {
        Interest i = *clients[k]->interest();
        i.center = {pos(rng), 0, pos(rng)};
        ASSERT_TRUE(clients[k]->SetInterest(i).has_value());
      }
    }
    ExpectViews(clients, ("after moves, round " + std::to_string(round)).c_str());
    if (HasFatalFailure()) return;
  }
  // The followed entity appears: its view follows.
  ASSERT_TRUE(writer.WriteTransform(60000, At(0, 0, 0)).has_value());
  move_some(50);
  ExpectViews(clients, "after the followed entity appeared");
  if (HasFatalFailure()) return;

  // A reconnect: every link cut, the scene changes meanwhile, the clients come back with a
  // snapshot of their view.
  const uint64_t snapshots_before = clients[0]->stats().snapshots;
  proxy_->SetAccepting(false);
  proxy_->CutAll();
  move_some(300);
  proxy_->SetAccepting(true);
  ExpectViews(clients, "after a reconnect");
  EXPECT_GT(clients[0]->stats().snapshots, snapshots_before);

  // Clearing an interest brings everything back.
  clients[0]->ClearInterest();
  std::string full;
  server_.get().InspectScene(
      kScene, [&](const runtime::CrdtStore& s, uint64_t) { full = s.StateHashHex(); });
  EXPECT_TRUE(
      clients[0]->PollUntil([&] { return clients[0]->store().StateHashHex() == full; }, 20s));
  for (auto& c : clients) c->Stop();
  writer.Stop();
}

// A body walks out across the border and back, lingering in the hysteresis band: exactly one
// leave and one enter, seen in the replica's removed / added lists.
TEST_F(InterestTest, ABorderCrossingLeavesOnceAndEntersOnce) {
  Client writer(Options(false));
  ASSERT_TRUE(writer.Start().has_value());
  ASSERT_TRUE(writer.PollUntil([&] { return writer.synced(); }, 20s));
  constexpr protocol::EntityId kMover = 900;
  ASSERT_TRUE(writer.WriteTransform(kMover, At(0, 0, 0)).has_value());
  writer.Flush();
  ASSERT_TRUE(writer.PollUntil([&] { return Quiet(writer); }, 20s));

  ClientOptions o = Options(false);
  Interest i;
  i.radius = 10;  // default hysteresis: max(1 m, 1 m) = 1 m
  o.interest = i;
  Client viewer(o);
  ASSERT_TRUE(viewer.Start().has_value());
  ASSERT_TRUE(viewer.PollUntil([&] { return viewer.synced(); }, 20s));
  ASSERT_TRUE(viewer.interest_ack().has_value());
  EXPECT_EQ(viewer.interest_ack()->hysteresis, 1.0f);
  viewer.Update();
  int added = 0, removed = 0;
  // Out to 10.9 (in the band), back to 9.5, out to 10.8, then out past 11, lingering at
  // 10.5 (in the band, out of view), then home.
  const std::vector<float> path = {2,    5,     9.5f,  10.5f, 10.9f, 9.5f, 10.8f, 11.5f,
                                   12.f, 10.5f, 10.2f, 10.5f, 9.9f,  5.0f, 0.0f};
  bool in = true;
  for (const float x : path) {
    ASSERT_TRUE(writer.WriteTransform(kMover, At(x, 0, 0)).has_value());
    writer.Flush();
    ASSERT_TRUE(writer.PollUntil([&] { return Quiet(writer); }, 20s));
    in = x <= 10.0f || (in && x <= 11.0f);
    ASSERT_TRUE(viewer.PollUntil(
        [&] {
          const protocol::Transform* t = viewer.store().FindTransform(kMover);
          return in ? (t != nullptr && t->position.x == x) : t == nullptr;
        },
        20s))
        << "x " << x;
    viewer.Update();
    for (const protocol::EntityId e : viewer.runtime().added_entities()) added += e == kMover;
    for (const protocol::EntityId e : viewer.runtime().removed_entities()) removed += e == kMover;
  }
  EXPECT_EQ(removed, 1);
  EXPECT_EQ(added, 1);
  EXPECT_EQ(viewer.stats().out_of_view_frames, 1u);
  viewer.Stop();
  writer.Stop();
}

TEST_F(InterestTest, BadInterestsAreRefusedAndLargeRadiiClamped) {
  server_.Stop();
  server_.config().limits.max_interest_radius_m = 100;
  ASSERT_TRUE(server_.Start());
  Client c(Options(false));
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const float inf = std::numeric_limits<float>::infinity();
  for (const Interest bad : {Interest{{0, 0, 0}, std::nullopt, nan, std::nullopt},
                             Interest{{0, 0, 0}, std::nullopt, -1.0f, std::nullopt},
                             Interest{{inf, 0, 0}, std::nullopt, 5.0f, std::nullopt},
                             Interest{{0, nan, 0}, std::nullopt, 5.0f, std::nullopt},
                             Interest{{0, 0, 0}, std::nullopt, 5.0f, -2.0f}}) {
    const Result<void> r = c.SetInterest(bad);
    ASSERT_FALSE(r.has_value());
    EXPECT_EQ(r.error().code, ErrorCode::kInvalidInterest);
  }
  EXPECT_FALSE(c.interest().has_value());
  ASSERT_TRUE(c.SetInterest(Interest{{0, 0, 0}, std::nullopt, 5000.0f, std::nullopt}).has_value());
  ASSERT_TRUE(c.Start().has_value());
  ASSERT_TRUE(c.PollUntil([&] { return c.synced() && c.interest_ack().has_value(); }, 20s));
  EXPECT_TRUE(c.interest_ack()->clamped);
  EXPECT_EQ(c.interest_ack()->radius, 100.0f);
  EXPECT_EQ(c.interest_ack()->hysteresis, 10.0f);
  c.Stop();
}

}  // namespace
}  // namespace scenecrdt::client::test
