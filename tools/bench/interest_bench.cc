// SPDX-License-Identifier: Apache-2.0
// Interest management's per-flush server work (docs/INTEREST.md "Performance: the index"): a
// scene's store with a large static world (groups of ten: a root and nine children) and movers
// random-walking over an S x S square, one flush per step of every mover (20 Hz movers, one
// flush each 50 ms). Per flush it times, with the server's own classes, what Scene's fan-out
// does for its interest members: InterestIndex::Sync (the transform side on dirty subtrees
// and the grid), ChangeBatch::Build (the batch exported and classified once), the cell
// lookup that picks the members to visit, and MemberView::Update of each visited member.
// Members hold point interests spread over the square. Each member count runs twice on the
// same seeded schedule: with the incremental view update and with every update forced to
// recompute the view from the grid (--mode picks one); the bytes sent must match. Plain main
// (a timing, not a test):
//   interest_bench [--static N] [--movers M] [--members K[,K...]] [--flushes F]
//                  [--world S] [--radius R] [--cell C] [--follow N]
//                  [--mode both|incremental|full] [--catch-up K]
// --catch-up K: instead, every member is delivered on every K-th flush only (busy in between,
// as at a loaded server) and each delivery's changes come two ways on the same schedule: gathered
// from the newest flushes' batches (ChangeRing, what the scene does) and built from the store at
// the member's cursor (ChangeBatch::Build, what it did); both are timed and the bytes must match.
// --follow N: the first N members follow the first N movers (load's mover clients do; their
// centre moves every flush, so their view is recomputed from the grid).
// Build with the release preset for figures.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "scenecrdt/server/scene/interest/change_ring.h"
#include "scenecrdt/server/scene/interest/member_view.h"

namespace {

using scenecrdt::protocol::EntityId;
using scenecrdt::protocol::Transform;
using scenecrdt::runtime::CrdtStore;
using scenecrdt::server::ChangeBatch;
using scenecrdt::server::ChangeRing;
using scenecrdt::server::InterestIndex;
using scenecrdt::server::InterestSpec;
using scenecrdt::server::MemberView;
using Clock = std::chrono::steady_clock;

struct Options {
  uint32_t statics = 64000;
  uint32_t movers = 1000;
  std::vector<uint32_t> members = {500, 2000, 8000};
  uint32_t flushes = 40;
  double world = 1000;
  double radius = 50;
  double cell = 16;
  uint32_t follow = 0;  // the first members follow the first movers (as load's mover clients)
  bool incremental = true;
  bool full = true;
  uint32_t catch_up = 0;  // deliver each member every K-th flush (0: every flush it is visited)
};

double Us(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double, std::micro>(b - a).count();
}

struct Series {
  std::vector<double> v;
  double Mean() const {
    double s = 0;
    for (double x : v) s += x;
    return v.empty() ? 0 : s / static_cast<double>(v.size());
  }
  double P(double q) {
    if (v.empty()) return 0;
    std::sort(v.begin(), v.end());
    return v[std::min(v.size() - 1, static_cast<std::size_t>(q * static_cast<double>(v.size())))];
  }
};

// The static world and the movers of a run, written into `store`.
struct World {
  std::mt19937 rng{20261128};
  std::uniform_real_distribution<float> where;
  std::vector<Transform> movers;
  EntityId first_mover = 0;
  std::vector<uint8_t> scratch;

  World(const Options& o, CrdtStore& store) : where(0.0f, static_cast<float>(o.world)) {
    std::uniform_real_distribution<float> near(-2.0f, 2.0f);
    EntityId next = 512;
    for (uint32_t k = 0; k < o.statics; ++k, ++next) {
      Transform t;
      const EntityId root = 512 + (next - 512) / 10 * 10;  // groups of ten: a root, 9 children
      if (next == root) {
        t.position = {where(rng), 0.0f, where(rng)};
      } else {
        t.position = {near(rng), near(rng), near(rng)};
        t.parent = root;
      }
      scratch.clear();
      (void)store.WriteTransform(next, t, scratch);
    }
    movers.resize(o.movers);
    first_mover = next;
    for (uint32_t k = 0; k < o.movers; ++k, ++next) {
      movers[k].position = {where(rng), 0.0f, where(rng)};
      scratch.clear();
      (void)store.WriteTransform(next, movers[k], scratch);
    }
  }
  // Every mover takes a random step of up to 0.5 m per axis.
  void Step(const Options& o, CrdtStore& store) {
    std::uniform_real_distribution<float> step(-0.5f, 0.5f);
    for (uint32_t k = 0; k < o.movers; ++k) {
      Transform& t = movers[k];
      t.position.x = std::clamp(t.position.x + step(rng), 0.0f, static_cast<float>(o.world));
      t.position.z = std::clamp(t.position.z + step(rng), 0.0f, static_cast<float>(o.world));
      scratch.clear();
      (void)store.WriteTransform(first_mover + k, t, scratch);
    }
  }
  InterestSpec Member(const Options& o, uint32_t k) {
    InterestSpec spec;
    spec.mode = scenecrdt::session::InterestMode::kPoint;
    spec.center = {where(rng), 0.0f, where(rng)};
    if (k < std::min(o.follow, o.movers)) {
      spec.mode = scenecrdt::session::InterestMode::kFollow;
      spec.follow = first_mover + k;
      spec.center = {movers[k].position.x, movers[k].position.y, movers[k].position.z};
    }
    spec.radius = o.radius;
    spec.hysteresis = std::max(1.0, 0.1 * o.radius);
    return spec;
  }
};

// Returns the bytes sent to the members over the run.
double Run(const Options& o, uint32_t members, bool incremental) {
  CrdtStore store;
  World w(o, store);
  const auto built = Clock::now();
  InterestIndex index(store, o.cell);
  const double build_us = Us(built, Clock::now());

  // Members: point interests over the square, their views computed (as a join does), each
  // registered under the cells of its enter radius (as SceneInterest::RegisterCells does).
  std::vector<MemberView> views;
  std::unordered_map<uint64_t, std::vector<uint32_t>> cells;
  ChangeBatch none;
  none.Build(store, index, store.sequence());
  double view_sum = 0;
  for (uint32_t k = 0; k < members; ++k) {
    // A follower is registered under the cells of its first view: its mover stays near them.
    const InterestSpec spec = w.Member(o, k);
    views.emplace_back(spec, false);
    views.back().set_incremental(incremental);
    MemberView::Delivery d;
    views.back().Update(index, store, none, true, d);
    view_sum += static_cast<double>(views.back().size());
    const InterestIndex::CellRect r = index.RectNear(spec.center, spec.radius + spec.hysteresis);
    for (int64_t x = r.x0; x <= r.x1; ++x) {
      for (int64_t z = r.z0; z <= r.z1; ++z) cells[InterestIndex::Key(x, z)].push_back(k);
    }
  }

  Series sync, batch, pick, update, total, visited, bytes;
  for (uint32_t f = 0; f < o.flushes; ++f) {
    const uint64_t from = store.sequence();
    w.Step(o, store);
    const auto t0 = Clock::now();
    index.Sync();
    const auto t1 = Clock::now();
    ChangeBatch changes;
    changes.Build(store, index, from);
    const auto t2 = Clock::now();
    std::unordered_set<uint32_t> visit;
    const auto mark = [&](uint64_t cell) {
      const auto it = cells.find(cell);
      if (it != cells.end()) visit.insert(it->second.begin(), it->second.end());
    };
    for (const uint64_t cell : index.touched_cells()) mark(cell);
    index.ClearTouched();
    for (const auto& kv : changes.by_entity) {
      if (const auto cell = index.CellOf(kv.first)) mark(*cell);
    }
    // A follower's centre moved with its mover (the scene re-registers it; here: visited).
    for (uint32_t k = 0; k < std::min({o.follow, o.movers, members}); ++k) visit.insert(k);
    const auto t3 = Clock::now();
    std::size_t sent = 0;
    for (const uint32_t k : visit) {
      MemberView::Delivery d;
      views[k].Update(index, store, changes, false, d);
      sent += d.dcl.size();
    }
    const auto t4 = Clock::now();
    sync.v.push_back(Us(t0, t1));
    batch.v.push_back(Us(t1, t2));
    pick.v.push_back(Us(t2, t3));
    update.v.push_back(Us(t3, t4));
    total.v.push_back(Us(t0, t4));
    visited.v.push_back(static_cast<double>(visit.size()));
    bytes.v.push_back(static_cast<double>(sent));
  }
  uint64_t full_updates = 0;
  uint64_t incremental_updates = 0;
  for (const MemberView& v : views) {
    full_updates += v.full_updates();
    incremental_updates += v.incremental_updates();
  }
  std::printf(
      "[%s] entities %zu (static %u, movers %u) members %u: index built in %.0f us, view mean "
      "%.1f entities; updates: %llu incremental, %llu from the grid\n",
      incremental ? "incremental" : "full", index.size(), o.statics, o.movers, members, build_us,
      view_sum / members, static_cast<unsigned long long>(incremental_updates),
      static_cast<unsigned long long>(full_updates));
  std::printf(
      "  per flush (us, mean / p50 / p99): sync (transforms + grid) %.0f / %.0f / %.0f; "
      "batch %.0f / %.0f / %.0f; visit pick %.0f / %.0f / %.0f\n",
      sync.Mean(), sync.P(0.5), sync.P(0.99), batch.Mean(), batch.P(0.5), batch.P(0.99),
      pick.Mean(), pick.P(0.5), pick.P(0.99));
  std::printf(
      "  members visited %.0f (%.1f %%), their updates %.0f us (%.2f us each; p50 flush %.0f "
      "us), total %.0f us / flush, %.0f bytes to members\n",
      visited.Mean(), 100.0 * visited.Mean() / members, update.Mean(),
      visited.Mean() > 0 ? update.Mean() / visited.Mean() : 0.0, update.P(0.5), total.Mean(),
      bytes.Mean());
  double sum = 0;
  for (const double b : bytes.v) sum += b;
  return sum;
}

// --catch-up K: member k is delivered on the flushes f with (f + k) % K == 0 only. Twins on one
// schedule: one catches up from the ring, the other from the store. False when their deliveries
// differ.
bool CatchUp(const Options& o, uint32_t members) {
  CrdtStore store;
  World w(o, store);
  InterestIndex index(store, o.cell);
  ChangeRing ring;
  struct Twin {
    MemberView gathered;
    MemberView built;
    uint64_t cursor = 0;
  };
  std::vector<Twin> twins;
  ChangeBatch none;
  none.Build(store, index, store.sequence());
  for (uint32_t k = 0; k < members; ++k) {
    const InterestSpec spec = w.Member(o, k);
    twins.push_back({MemberView(spec, false), MemberView(spec, false), store.sequence()});
    MemberView::Delivery d;
    twins.back().gathered.Update(index, store, none, true, d);
    twins.back().built.Update(index, store, none, true, d);
  }
  Series push, gather, build;
  ChangeBatch gathered;
  ChangeBatch built;
  uint64_t flushed = store.sequence();
  bool same = true;
  double bytes = 0;
  uint64_t deliveries = 0;
  uint64_t behind = 0;
  for (uint32_t f = 0; f < o.flushes; ++f) {
    w.Step(o, store);
    index.Sync();
    const auto p0 = Clock::now();
    ring.Push(store, index, flushed);
    push.v.push_back(Us(p0, Clock::now()));
    flushed = store.sequence();
    double g = 0;
    double b = 0;
    std::size_t n = 0;
    for (uint32_t k = 0; k < members; ++k) {
      if ((f + k) % o.catch_up != 0) continue;
      Twin& t = twins[k];
      if (!ring.Covers(t.cursor, flushed)) {
        ++behind;  // further back than the ring keeps (its bytes bound): both rebuild
        MemberView::Delivery d;
        built.Build(store, index, t.cursor);
        t.gathered.Update(index, store, built, false, d);
        t.built.Update(index, store, built, false, d);
        t.cursor = flushed;
        continue;
      }
      MemberView::Delivery dg;
      MemberView::Delivery db;
      const auto t0 = Clock::now();
      ring.Gather(t.cursor, store, index, t.gathered.view(), gathered);
      t.gathered.Update(index, store, gathered, false, dg);
      const auto t1 = Clock::now();
      built.Build(store, index, t.cursor);
      t.built.Update(index, store, built, false, db);
      const auto t2 = Clock::now();
      t.cursor = flushed;
      g += Us(t0, t1);
      b += Us(t1, t2);
      ++n;
      same = same && dg.dcl == db.dcl && dg.leaving == db.leaving && dg.entering == db.entering;
      bytes += static_cast<double>(dg.dcl.size());
    }
    deliveries += n;
    if (n == 0) continue;
    gather.v.push_back(g / static_cast<double>(n));
    build.v.push_back(b / static_cast<double>(n));
  }
  std::printf(
      "[catch-up every %u flushes] entities %zu (static %u, movers %u) members %u, %llu "
      "deliveries\n  per delivery (batch + view update, us, mean / p50): gathered from the ring "
      "%.2f / %.2f, built from the store %.2f / %.2f (%.1f x); ring push per flush %.0f us; %.0f "
      "bytes to members, gathered vs built: %s; %llu deliveries behind the ring\n",
      o.catch_up, index.size(), o.statics, o.movers, members,
      static_cast<unsigned long long>(deliveries), gather.Mean(), gather.P(0.5), build.Mean(),
      build.P(0.5), gather.Mean() > 0 ? build.Mean() / gather.Mean() : 0.0, push.Mean(), bytes,
      same ? "equal" : "DIFFERENT", static_cast<unsigned long long>(behind));
  return same;
}

bool Arg(int argc, char** argv, int& i, const char* name, std::string& value) {
  if (std::strcmp(argv[i], name) != 0 || i + 1 >= argc) return false;
  value = argv[++i];
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    std::string v;
    if (Arg(argc, argv, i, "--static", v)) {
      o.statics = static_cast<uint32_t>(std::strtoul(v.c_str(), nullptr, 10));
    } else if (Arg(argc, argv, i, "--movers", v)) {
      o.movers = static_cast<uint32_t>(std::strtoul(v.c_str(), nullptr, 10));
    } else if (Arg(argc, argv, i, "--members", v)) {
      o.members.clear();
      for (char* p = v.data(); *p != '\0';) {
        o.members.push_back(static_cast<uint32_t>(std::strtoul(p, &p, 10)));
        if (*p == ',') ++p;
      }
    } else if (Arg(argc, argv, i, "--follow", v)) {
      o.follow = static_cast<uint32_t>(std::strtoul(v.c_str(), nullptr, 10));
    } else if (Arg(argc, argv, i, "--flushes", v)) {
      o.flushes = static_cast<uint32_t>(std::strtoul(v.c_str(), nullptr, 10));
    } else if (Arg(argc, argv, i, "--world", v)) {
      o.world = std::strtod(v.c_str(), nullptr);
    } else if (Arg(argc, argv, i, "--radius", v)) {
      o.radius = std::strtod(v.c_str(), nullptr);
    } else if (Arg(argc, argv, i, "--cell", v)) {
      o.cell = std::strtod(v.c_str(), nullptr);
    } else if (Arg(argc, argv, i, "--catch-up", v)) {
      o.catch_up = static_cast<uint32_t>(std::strtoul(v.c_str(), nullptr, 10));
    } else if (Arg(argc, argv, i, "--mode", v) &&
               (v == "both" || v == "incremental" || v == "full")) {
      o.incremental = v != "full";
      o.full = v != "incremental";
    } else {
      std::fprintf(stderr,
                   "usage: interest_bench [--static N] [--movers M] [--members K,...] "
                   "[--flushes F] [--world S] [--radius R] [--cell C] [--follow N] "
                   "[--mode both|incremental|full] [--catch-up K]\n");
      return 2;
    }
  }
  // A scene holds at most 65 024 entities (entity numbers 512 ..= 65535).
  if (o.statics + o.movers > scenecrdt::protocol::kSceneEntityNumbers || o.flushes == 0 ||
      !(o.world > 0) || !(o.radius > 0) || !(o.cell >= 0.5) ||
      o.catch_up > ChangeRing::kMaxBatches) {
    std::fprintf(stderr,
                 "interest_bench: at most %u entities, flushes > 0, world, radius > 0, "
                 "cell >= 0.5, catch-up <= 512\n",
                 scenecrdt::protocol::kSceneEntityNumbers);
    return 2;
  }
  int status = 0;
  for (const uint32_t k : o.members) {
    if (k == 0) continue;
    if (o.catch_up != 0) {
      if (!CatchUp(o, k)) status = 1;
      continue;
    }
    const double a = o.incremental ? Run(o, k, true) : 0;
    const double b = o.full ? Run(o, k, false) : 0;
    if (o.incremental && o.full) {
      std::printf("  bytes to members, incremental vs full: %.0f vs %.0f (%s)\n", a, b,
                  a == b ? "equal" : "DIFFERENT");
      if (a != b) status = 1;
    }
  }
  return status;
}
