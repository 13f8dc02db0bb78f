// SPDX-License-Identifier: Apache-2.0
// MemberView's incremental update (docs/INTEREST.md "Server work and bounds") against the
// recomputation from the grid, without a network: twin members (one incremental, one forced
// to recompute every update) see the same seeded random schedule of moves, hierarchies,
// reparentings, loops, gained and lost Transforms, deleted entities and interest changes, and
// every delivery of the twins must be the same bytes, the same leaves and enters, and the
// same view. Members are visited on random flushes (a journal window of several Syncs).
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "scenecrdt/server/scene/interest/member_view.h"
#include "tests/server/interest/interest_world.h"

namespace scenecrdt::server {
namespace {

using protocol::EntityId;

struct Twin {
  Twin(const InterestSpec& spec, runtime::CrdtStore& store)
      : fast(spec, false), full(spec, false), cursor(store.sequence()) {
    full.set_incremental(false);
  }
  MemberView fast;
  MemberView full;
  uint64_t cursor = 0;
};

// Runs `steps` flushes of the schedule of `seed`; returns the incremental updates made.
uint64_t RunSchedule(uint32_t seed, int steps, double structure_rate) {
  InterestWorld w(seed);
  EntityId next = 512;
  for (int k = 0; k < 400; ++k, ++next) {
    // Groups: a root and, now and then, children a few metres from it.
    const bool child = k % 5 != 0 && w.Chance(0.4);
    w.Put(next, child ? w.Coord(6) : w.Coord(200), child ? w.Coord(6) : w.Coord(200),
          child ? next - 1 - w.Pick(3) : 0);
  }
  InterestIndex index(w.store, 8);
  std::vector<std::unique_ptr<Twin>> twins;
  for (int k = 0; k < 16; ++k) twins.push_back(std::make_unique<Twin>(RandomInterest(w), w.store));
  uint64_t incremental = 0;
  for (int step = 0; step < steps; ++step) {
    for (int k = 0; k < 40; ++k) w.Move();
    if (w.Chance(structure_rate)) w.Reparent();
    if (w.Chance(structure_rate)) w.Remove();
    if (w.Chance(structure_rate)) w.Put(next++, w.Coord(200), w.Coord(200), 0);
    if (w.Chance(structure_rate)) w.Put(next++, w.Coord(200), w.Coord(200), w.AnyEntity());
    index.Sync();
    for (std::size_t k = 0; k < twins.size(); ++k) {
      Twin& t = *twins[k];
      if (w.Chance(0.02)) {
        const InterestSpec spec = RandomInterest(w);
        t.fast.SetSpec(spec);
        t.full.SetSpec(spec);
      }
      if (!w.Chance(0.6)) continue;  // not visited this flush
      ChangeBatch batch;
      batch.Build(w.store, index, t.cursor);
      t.cursor = w.store.sequence();
      MemberView::Delivery a;
      MemberView::Delivery b;
      t.fast.Update(index, w.store, batch, false, a);
      t.full.Update(index, w.store, batch, false, b);
      SCOPED_TRACE("seed " + std::to_string(seed) + " step " + std::to_string(step) + " member " +
                   std::to_string(k));
      EXPECT_EQ(a.leaving, b.leaving);
      EXPECT_EQ(a.entering, b.entering);
      EXPECT_EQ(a.dcl, b.dcl);
      EXPECT_EQ(t.fast.view(), t.full.view());
      if (::testing::Test::HasFailure()) return incremental;
    }
  }
  for (const auto& t : twins) {
    EXPECT_EQ(t->full.incremental_updates(), 0u);
    incremental += t->fast.incremental_updates();
  }
  return incremental;
}

TEST(MemberViewIncrementalTest, DeliveriesEqualARecomputationFromTheGrid) {
  // Mostly moves (the incremental path), with hierarchies changing now and then.
  for (uint32_t seed = 1; seed <= 3; ++seed) {
    const uint64_t incremental = RunSchedule(seed, 120, 0.1);
    ASSERT_FALSE(HasFailure());
    EXPECT_GT(incremental, 200u) << "the schedule barely exercised the incremental update";
  }
}

TEST(MemberViewIncrementalTest, DeliveriesEqualUnderManyStructureChanges) {
  // Reparentings, loops, gained and lost Transforms on most flushes (mostly recomputations,
  // the incremental update in between).
  for (uint32_t seed = 11; seed <= 12; ++seed) {
    RunSchedule(seed, 80, 0.6);
    ASSERT_FALSE(HasFailure());
  }
}

TEST(MemberViewIncrementalTest, AMemberWhoseCentreStaysIsUpdatedIncrementally) {
  runtime::CrdtStore store;
  std::vector<uint8_t> scratch;
  protocol::Transform t;
  for (EntityId e = 512; e < 612; ++e) {
    t.position = {static_cast<float>(e - 512), 0.0f, 0.0f};
    ASSERT_TRUE(store.WriteTransform(e, t, scratch).has_value());
  }
  InterestIndex index(store, 16);
  InterestSpec spec;
  spec.mode = session::InterestMode::kPoint;
  spec.radius = 10;
  spec.hysteresis = 1;
  MemberView view(spec, false);
  MemberView::Delivery d;
  ChangeBatch batch;
  batch.Build(store, index, store.sequence());
  view.Update(index, store, batch, false, d);
  EXPECT_EQ(view.size(), 11u);  // x = 0 ..= 10
  // Entity 600 (x = 88) comes to x = 5: it enters; entity 512 (x = 0) goes to x = 12 (within
  // the hysteresis: it stays), then to x = 30: it leaves.
  const uint64_t from = store.sequence();
  t.position = {5.0f, 0.0f, 0.0f};
  ASSERT_TRUE(store.WriteTransform(600, t, scratch).has_value());
  t.position = {-10.5f, 0.0f, 0.0f};
  ASSERT_TRUE(store.WriteTransform(512, t, scratch).has_value());
  index.Sync();
  batch.Build(store, index, from);
  d = {};
  view.Update(index, store, batch, false, d);
  EXPECT_EQ(d.entering, 1u);
  EXPECT_TRUE(d.leaving.empty());
  const uint64_t again = store.sequence();
  t.position = {-30.0f, 0.0f, 0.0f};
  ASSERT_TRUE(store.WriteTransform(512, t, scratch).has_value());
  index.Sync();
  batch.Build(store, index, again);
  d = {};
  view.Update(index, store, batch, false, d);
  EXPECT_EQ(d.leaving, (std::vector<EntityId>{512}));
  EXPECT_EQ(view.size(), 11u);
  EXPECT_EQ(view.full_updates(), 1u);
  EXPECT_EQ(view.incremental_updates(), 2u);
}

TEST(MemberViewIncrementalTest, AMemberOlderThanTheJournalRecomputesFromTheGrid) {
  // 100 entities around the centre leave the view at once; then 2 000 far entities move 33
  // times (66 000 journal entries: more than InterestIndex::kMaxJournal), so the leaving
  // moves are no longer in the journal when the member is next updated.
  runtime::CrdtStore store;
  std::vector<uint8_t> scratch;
  protocol::Transform t;
  const auto put = [&](EntityId e, float x) {
    t.position = {x, 0.0f, 0.0f};
    scratch.clear();
    ASSERT_TRUE(store.WriteTransform(e, t, scratch).has_value());
  };
  for (EntityId e = 512; e < 612; ++e) put(e, static_cast<float>(e - 512) * 0.2f);
  for (EntityId e = 1000; e < 3000; ++e) put(e, 1000.0f + static_cast<float>(e));
  InterestIndex index(store, 16);
  InterestSpec spec;
  spec.mode = session::InterestMode::kPoint;
  spec.radius = 30;
  spec.hysteresis = 3;
  Twin twin(spec, store);
  ChangeBatch batch;
  MemberView::Delivery a;
  MemberView::Delivery b;
  batch.Build(store, index, twin.cursor);
  twin.fast.Update(index, store, batch, false, a);
  twin.full.Update(index, store, batch, false, b);
  ASSERT_EQ(twin.fast.size(), 100u);
  for (EntityId e = 512; e < 612; ++e) put(e, 500.0f);
  index.Sync();
  for (int round = 1; round <= 33; ++round) {
    for (EntityId e = 1000; e < 3000; ++e) put(e, 1000.0f + static_cast<float>(e + round));
    index.Sync();
  }
  batch.Build(store, index, twin.cursor);
  a = {};
  b = {};
  twin.fast.Update(index, store, batch, false, a);
  twin.full.Update(index, store, batch, false, b);
  EXPECT_EQ(a.leaving.size(), 100u);
  EXPECT_EQ(a.leaving, b.leaving);
  EXPECT_EQ(a.dcl, b.dcl);
  EXPECT_EQ(twin.fast.view(), twin.full.view());
  EXPECT_EQ(twin.fast.full_updates(), 2u);  // the journal no longer reached back
  EXPECT_EQ(twin.fast.incremental_updates(), 0u);
}

}  // namespace
}  // namespace scenecrdt::server
