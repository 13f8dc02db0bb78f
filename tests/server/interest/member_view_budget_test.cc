// SPDX-License-Identifier: Apache-2.0
// MemberView under a byte budget (docs/INTEREST.md "Byte budget"), without a network: the
// nearest entities' changes go first, the rest are deferred and coalesced (their newest whole
// state goes later), an entity deferred MemberView::kMaxDeferrals deliveries goes before
// nearer ones (the starvation bound), the deferred set stays within the view, and the replica
// that applies every delivery ends equal to the server's state. Also ByteBudget's bucket.
#include <gtest/gtest.h>

#include <set>
#include <vector>

#include "scenecrdt/protocol/crdt_codec.h"
#include "scenecrdt/server/scene/interest/member_view.h"

namespace scenecrdt::server {
namespace {

void Put(runtime::CrdtStore& s, protocol::EntityId e, uint32_t timestamp, float x) {
  std::vector<uint8_t> dcl;
  protocol::Transform t;
  t.position = {x, 0.0f, 0.0f};
  protocol::AppendTransformPut(e, timestamp, t, dcl);
  ASSERT_TRUE(s.MergeStream(dcl).has_value());
}

// The entities a delivery names, and the x of their Transforms.
std::set<protocol::EntityId> Entities(const std::vector<uint8_t>& dcl) {
  std::set<protocol::EntityId> out;
  (void)protocol::DecodeStream(dcl, {},
                               [&](const protocol::CrdtMessage& m) { out.insert(m.entity); });
  return out;
}

InterestSpec Point(double radius) {
  InterestSpec spec;
  spec.mode = session::InterestMode::kPoint;
  spec.radius = radius;
  return spec;
}

// A member of `store` joined with a snapshot of its view, its replica holding it.
struct Member {
  Member(runtime::CrdtStore& s, InterestIndex& i, double kbps)
      : store(s), index(i), view(Point(50), false) {
    std::vector<uint8_t> all, snapshot;
    store.ExportSnapshot(all);
    view.Snapshot(index, all, snapshot);
    EXPECT_TRUE(replica.MergeStream(snapshot).has_value());
    view.SetBudget(ByteBudget(kbps, 0));
    cursor = store.sequence();
  }
  // One delivery of what changed since the last one; the replica applies it.
  MemberView::Delivery Deliver() {
    index.Sync();
    ChangeBatch batch;
    batch.Build(store, index, cursor);
    cursor = store.sequence();
    MemberView::Delivery d;
    view.Update(index, store, batch, false, d);
    view.budget()->Spend(d.dcl.size());
    EXPECT_TRUE(replica.MergeStream(d.dcl).has_value());
    EXPECT_LE(view.deferred(), view.size());  // the documented memory bound
    return d;
  }
  runtime::CrdtStore& store;
  InterestIndex& index;
  MemberView view;
  runtime::CrdtStore replica;
  uint64_t cursor = 0;
};

TEST(MemberViewBudgetTest, NearestFirstTheRestCoalescedThenConverged) {
  runtime::CrdtStore store;
  for (uint32_t k = 1; k <= 10; ++k) Put(store, 100 + k, 1, static_cast<float>(k));
  InterestIndex index(store, 16);
  // 1 kbit/s: 125 bytes per second, a burst of 256 bytes: three Transform PUTs (68 bytes).
  Member m(store, index, 1);
  for (uint32_t k = 1; k <= 10; ++k) Put(store, 100 + k, 2, static_cast<float>(k) + 0.5f);
  MemberView::Delivery d = m.Deliver();
  EXPECT_EQ(Entities(d.dcl), (std::set<protocol::EntityId>{101, 102, 103}));
  EXPECT_EQ(d.deferred, 7u);
  EXPECT_EQ(m.view.deferred(), 7u);
  EXPECT_TRUE(m.view.dirty());
  // Entity 106 moves again meanwhile: coalesced, its newest value goes when its turn comes.
  Put(store, 106, 3, 42.0f);
  // A second later the bucket holds 52 + 125 bytes: the two nearest deferred go.
  m.view.budget()->Refill(1000);
  d = m.Deliver();
  EXPECT_EQ(Entities(d.dcl), (std::set<protocol::EntityId>{104, 105}));
  // Quiet from now on: every deferred entity arrives, the replica equals the server's state.
  int64_t now = 1000;
  for (int i = 0; i < 20 && m.view.deferred() != 0; ++i) {
    now += 1000;
    m.view.budget()->Refill(now);
    m.Deliver();
  }
  EXPECT_EQ(m.view.deferred(), 0u);
  EXPECT_FALSE(m.view.dirty());
  EXPECT_EQ(m.replica.StateHashHex(), store.StateHashHex());
  EXPECT_EQ(m.replica.FindTransform(106)->position.x, 42.0f);
}

TEST(MemberViewBudgetTest, AFarEntityIsSentWithinTheStarvationBound) {
  runtime::CrdtStore store;
  Put(store, 101, 1, 1.0f);   // near
  Put(store, 110, 1, 40.0f);  // far
  InterestIndex index(store, 16);
  Member m(store, index, 1);
  // Each delivery has room for one Transform: the near one wins until the far one is old.
  m.view.budget()->Spend(256 - 70);
  int64_t now = 0;
  int far_sent_at = -1;
  for (uint32_t round = 1; round <= MemberView::kMaxDeferrals + 2 && far_sent_at < 0; ++round) {
    Put(store, 101, 1 + round, 1.0f + 0.01f * static_cast<float>(round));
    Put(store, 110, 1 + round, 40.0f + 0.01f * static_cast<float>(round));
    const std::set<protocol::EntityId> sent = Entities(m.Deliver().dcl);
    ASSERT_EQ(sent.size(), 1u) << "round " << round;
    if (sent.count(110) != 0) far_sent_at = static_cast<int>(round);
    now += 560;  // 70 bytes
    m.view.budget()->Refill(now);
  }
  // Deferred in rounds 1..8, then first in round 9: with its newest value.
  EXPECT_EQ(far_sent_at, static_cast<int>(MemberView::kMaxDeferrals) + 1);
  EXPECT_EQ(m.replica.FindTransform(110)->position.x, store.FindTransform(110)->position.x);
}

TEST(MemberViewBudgetTest, ADeferredEntityThatLeavesIsNamedAndForgotten) {
  runtime::CrdtStore store;
  Put(store, 101, 1, 1.0f);
  Put(store, 102, 1, 2.0f);
  InterestIndex index(store, 16);
  Member m(store, index, 1);
  m.view.budget()->Spend(256 - 70);
  Put(store, 101, 2, 1.5f);
  Put(store, 102, 2, 2.5f);
  EXPECT_EQ(Entities(m.Deliver().dcl), (std::set<protocol::EntityId>{101}));
  EXPECT_EQ(m.view.deferred(), 1u);
  Put(store, 102, 3, 500.0f);  // out of view before its turn
  const MemberView::Delivery d = m.Deliver();
  EXPECT_EQ(d.leaving, (std::vector<protocol::EntityId>{102}));
  EXPECT_TRUE(Entities(d.dcl).empty());  // not sent after its OutOfView
  EXPECT_EQ(m.view.deferred(), 0u);
}

TEST(ByteBudgetTest, FillsAtTheRateUpToTheBurstAndMayOwe) {
  ByteBudget b(80, 0);  // 10 000 bytes per second, a burst of 1 000
  EXPECT_EQ(b.available(), 1000);
  b.Spend(1500);
  EXPECT_EQ(b.available(), -500);
  EXPECT_FALSE(b.Ready());
  EXPECT_EQ(b.ReadyAt(0), 100);  // 1 000 bytes to earn: up to half a burst
  b.Refill(100);
  EXPECT_TRUE(b.Ready());
  b.Refill(10000);
  EXPECT_EQ(b.available(), 1000);
  ByteBudget tiny(1, 0);
  EXPECT_EQ(tiny.burst(), ByteBudget::kMinBurstBytes);
}

}  // namespace
}  // namespace scenecrdt::server
