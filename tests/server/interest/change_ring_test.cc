// SPDX-License-Identifier: Apache-2.0
// ChangeRing (docs/INTEREST.md "Server work and bounds") against ChangeBatch::Build, without a
// network: twin members see the same seeded random schedule (moves, hierarchies, gained and
// lost Transforms, other components on entities with and without a Transform, append sets,
// deleted entities, interest changes) while every flush pushes its batch into the ring; a
// member is delivered on random flushes only (busy in between), one twin from the batch the
// ring gathers, the other from Build at its cursor, and every delivery must be the same bytes,
// the same leaves and enters, and the same view.
#include "scenecrdt/server/scene/interest/change_ring.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "tests/server/interest/interest_world.h"

namespace scenecrdt::server {
namespace {

using protocol::EntityId;

struct Twin {
  Twin(const InterestSpec& spec, uint64_t at)
      : gathered(spec, false), built(spec, false), cursor(at) {}
  MemberView gathered;
  MemberView built;
  uint64_t cursor = 0;
};

struct Counts {
  uint64_t gathered = 0;  // deliveries compared with a gathered batch
  uint64_t rebuilt = 0;   // the ring did not reach back: both built
};

Counts RunSchedule(uint32_t seed, int steps, double structure_rate, double visit_rate) {
  InterestWorld w(seed);
  EntityId next = 512;
  std::vector<EntityId> plain;  // entities that never get a Transform
  for (int k = 0; k < 300; ++k, ++next) {
    const bool child = k % 5 != 0 && w.Chance(0.4);
    w.Put(next, child ? w.Coord(6) : w.Coord(200), child ? w.Coord(6) : w.Coord(200),
          child ? next - 1 - w.Pick(3) : 0);
  }
  for (int k = 0; k < 20; ++k) plain.push_back(next++);
  InterestIndex index(w.store, 8);
  ChangeRing ring;
  uint64_t flushed = w.store.sequence();
  std::vector<std::unique_ptr<Twin>> twins;
  for (int k = 0; k < 16; ++k) {
    twins.push_back(std::make_unique<Twin>(RandomInterest(w), w.store.sequence()));
  }
  Counts counts;
  ChangeBatch gathered;
  ChangeBatch built;
  for (int step = 0; step < steps; ++step) {
    for (int k = 0; k < 30; ++k) w.Move();
    for (int k = 0; k < 4; ++k)
      w.PutComponent(w.Chance(0.5) ? w.AnyEntity() : plain[w.Pick(plain.size())]);
    if (w.Chance(0.3)) w.Append(w.Chance(0.5) ? w.AnyEntity() : plain[w.Pick(plain.size())]);
    if (w.Chance(structure_rate)) w.Reparent();
    if (w.Chance(structure_rate)) w.Remove();
    if (w.Chance(structure_rate)) w.Put(next++, w.Coord(200), w.Coord(200), 0);
    if (w.Chance(structure_rate)) w.Put(next++, w.Coord(200), w.Coord(200), w.AnyEntity());
    // An entity without a Transform gains one (it was held by every member until now).
    if (w.Chance(structure_rate)) {
      const EntityId e = plain[w.Pick(plain.size())];
      if (!w.IsDeleted(e)) w.Put(e, w.Coord(200), w.Coord(200), 0);
    }
    index.Sync();
    if (w.Chance(0.03)) ring.Clear();  // a gap: members behind it rebuild
    ring.Push(w.store, index, flushed);
    flushed = w.store.sequence();
    for (std::size_t k = 0; k < twins.size(); ++k) {
      Twin& t = *twins[k];
      if (w.Chance(0.02)) {
        const InterestSpec spec = RandomInterest(w);
        t.gathered.SetSpec(spec);
        t.built.SetSpec(spec);
      }
      if (!w.Chance(visit_rate)) continue;  // busy this flush
      built.Build(w.store, index, t.cursor);
      const bool covered = ring.Covers(t.cursor, flushed);
      if (covered) {
        ring.Gather(t.cursor, w.store, index, t.gathered.view(), gathered);
        ++counts.gathered;
      } else {
        gathered.Build(w.store, index, t.cursor);
        ++counts.rebuilt;
      }
      t.cursor = flushed;
      MemberView::Delivery a;
      MemberView::Delivery b;
      t.gathered.Update(index, w.store, gathered, false, a);
      t.built.Update(index, w.store, built, false, b);
      SCOPED_TRACE("seed " + std::to_string(seed) + " step " + std::to_string(step) + " member " +
                   std::to_string(k) + (covered ? " gathered" : " rebuilt"));
      EXPECT_EQ(a.leaving, b.leaving);
      EXPECT_EQ(a.entering, b.entering);
      EXPECT_EQ(a.dcl, b.dcl);
      EXPECT_EQ(t.gathered.view(), t.built.view());
      if (::testing::Test::HasFailure()) return counts;
    }
  }
  return counts;
}

TEST(ChangeRingTest, GatheredCatchUpsDeliverWhatABuildFromTheCursorDelivers) {
  for (uint32_t seed = 1; seed <= 3; ++seed) {
    const Counts c = RunSchedule(seed, 150, 0.1, 0.3);
    ASSERT_FALSE(HasFailure());
    EXPECT_GT(c.gathered, 300u) << "the schedule barely exercised the ring";
  }
}

TEST(ChangeRingTest, GatheredCatchUpsAgreeUnderManyStructureChanges) {
  for (uint32_t seed = 21; seed <= 22; ++seed) {
    const Counts c = RunSchedule(seed, 100, 0.6, 0.15);
    ASSERT_FALSE(HasFailure());
    EXPECT_GT(c.gathered, 100u);
    EXPECT_GT(c.rebuilt, 0u);
  }
}

TEST(ChangeRingTest, TheRingKeepsItsBoundsAndStartsOverAfterAGap) {
  InterestWorld w(5);
  for (EntityId e = 512; e < 612; ++e) w.Put(e, w.Coord(100), w.Coord(100), 0);
  InterestIndex index(w.store, 8);
  ChangeRing ring;
  uint64_t flushed = w.store.sequence();
  for (std::size_t k = 0; k < ChangeRing::kMaxBatches + 10; ++k) {
    w.Move();
    index.Sync();
    ring.Push(w.store, index, flushed);
    flushed = w.store.sequence();
  }
  EXPECT_EQ(ring.size(), ChangeRing::kMaxBatches);
  EXPECT_FALSE(ring.Covers(flushed - ChangeRing::kMaxBatches - 1, flushed));
  EXPECT_TRUE(ring.Covers(flushed - ChangeRing::kMaxBatches, flushed));
  EXPECT_FALSE(ring.Covers(flushed - 1, flushed + 1));
  w.Move();
  w.Move();
  index.Sync();
  ring.Push(w.store, index, w.store.sequence() - 1);  // not where the newest batch ended
  EXPECT_EQ(ring.size(), 1u);
  EXPECT_FALSE(ring.Covers(flushed, w.store.sequence()));
}

}  // namespace
}  // namespace scenecrdt::server
