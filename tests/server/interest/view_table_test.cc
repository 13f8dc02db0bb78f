// SPDX-License-Identifier: Apache-2.0
// ViewTable (server/scene/interest/view_table.h) against std::unordered_map on seeded random
// sequences of inserts, erases, core marks, clears and swaps: every lookup, every size and the
// whole content after each step. Keys are drawn from small pools so that probe chains are long
// and erases shift entries across the table's end (entity 0 and 0xFFFFFFFF included).
#include "scenecrdt/server/scene/interest/view_table.h"

#include <gtest/gtest.h>

#include <map>
#include <random>
#include <unordered_map>
#include <vector>

namespace scenecrdt::server {
namespace {

using protocol::EntityId;
using Reference = std::unordered_map<EntityId, bool>;

std::map<EntityId, bool> Contents(const ViewTable& t) {
  std::map<EntityId, bool> out;
  t.ForEach([&](EntityId e, bool core) {
    EXPECT_TRUE(out.emplace(e, core).second) << "entity " << e << " listed twice";
  });
  return out;
}

void ExpectSame(const ViewTable& t, const Reference& ref) {
  ASSERT_EQ(t.size(), ref.size());
  ASSERT_EQ(t.empty(), ref.empty());
  const std::map<EntityId, bool> sorted(ref.begin(), ref.end());
  ASSERT_EQ(Contents(t), sorted);
}

TEST(ViewTableTest, RandomOperationsMatchAHashMap) {
  for (uint32_t seed = 1; seed <= 20; ++seed) {
    std::mt19937 engine(seed);
    const auto rng = [&engine] { return static_cast<uint32_t>(engine()); };
    // A pool of keys: small numbers, numbers with versions, and the extremes.
    std::vector<EntityId> pool = {0u, 0xFFFFFFFFu, 1u, 512u};
    const uint32_t pool_size = 8 + seed * 40;
    for (uint32_t i = 0; i < pool_size; ++i) {
      pool.push_back(rng() % 4 == 0 ? rng() : 512 + rng() % (pool_size * 2) + ((rng() % 3) << 16));
    }
    ViewTable table;
    Reference ref;
    for (int step = 0; step < 4000; ++step) {
      const EntityId e = pool[rng() % pool.size()];
      const uint32_t op = rng() % 100;
      if (op < 45) {
        const bool core = rng() % 2 == 0;
        const bool inserted = table.Insert(e, core);
        ASSERT_EQ(inserted, ref.emplace(e, core).second) << "seed " << seed << " step " << step;
      } else if (op < 75) {
        ASSERT_EQ(table.Erase(e), ref.erase(e) == 1) << "seed " << seed << " step " << step;
      } else if (op < 85) {
        const auto it = ref.find(e);
        ASSERT_EQ(table.SetCore(e), it != ref.end());
        if (it != ref.end()) it->second = true;
      } else if (op < 86) {
        table.clear();
        ref.clear();
      } else if (op < 87) {
        table.reserve(rng() % 300);
      } else if (op < 88) {
        ViewTable other;
        other.Insert(e, true);
        table.swap(other);
        EXPECT_EQ(table.size(), 1u);
        table.swap(other);
      }
      for (const EntityId probe : {e, pool[rng() % pool.size()]}) {
        const auto it = ref.find(probe);
        const ViewTable::Mark want = it == ref.end() ? ViewTable::kAbsent
                                     : it->second    ? ViewTable::kCore
                                                     : ViewTable::kHeld;
        ASSERT_EQ(table.Get(probe), want) << "seed " << seed << " step " << step;
        ASSERT_EQ(table.contains(probe), it != ref.end());
      }
      if (step % 97 == 0) ExpectSame(table, ref);
    }
    ExpectSame(table, ref);
  }
}

TEST(ViewTableTest, EqualityIgnoresOrderButNotMarks) {
  ViewTable a, b;
  for (EntityId e = 512; e < 900; ++e) a.Insert(e, e % 3 == 0);
  for (EntityId e = 899; e >= 512; --e) b.Insert(e, e % 3 == 0);
  b.reserve(5000);  // a different layout, the same content
  EXPECT_TRUE(a == b);
  b.Erase(600);
  EXPECT_FALSE(a == b);
  b.Insert(600, false);  // 600 % 3 == 0: core in a
  EXPECT_FALSE(a == b);
  b.SetCore(600);
  EXPECT_TRUE(a == b);
}

TEST(ViewTableTest, ClearKeepsWorkingAfterItLetsALargeTableGo) {
  ViewTable t;
  for (EntityId e = 0; e < 10000; ++e) t.Insert(e, false);
  for (EntityId e = 0; e < 9990; ++e) ASSERT_TRUE(t.Erase(e));
  t.clear();  // 10 held in a table grown for 10 000
  EXPECT_TRUE(t.empty());
  EXPECT_EQ(t.Get(9995), ViewTable::kAbsent);
  EXPECT_TRUE(t.Insert(7, true));
  EXPECT_EQ(t.Get(7), ViewTable::kCore);
  EXPECT_EQ(t.size(), 1u);
}

}  // namespace
}  // namespace scenecrdt::server
