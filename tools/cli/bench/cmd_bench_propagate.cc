// SPDX-License-Identifier: Apache-2.0
// Owns `scenecrdt bench propagate`: one propagation configuration (scene shape, size, threads,
// dirty fraction) timed on the user's machine without Google Benchmark; prints the median time
// per TransformSystem::Update (docs/PROPAGATION.md, "Measurements").
#include "tools/cli/bench/cmd_bench_propagate.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "scenecrdt/runtime/transform_system.h"
#include "scenecrdt/testing/scene_shapes.h"
#include "tools/cli/cli_app.h"

namespace scenecrdt::cli {

namespace {

// 16 M entities take about 4 GiB (graph, layout, world matrices): the documented bound.
constexpr uint64_t kMaxEntities = 1u << 24;
constexpr uint64_t kMaxUpdates = 100000;
constexpr uint64_t kMaxThreads = 64;

struct Config {
  testing::SceneShape shape = testing::SceneShape::kRandomForest;
  uint32_t entities = 100000;
  int threads = 0;  // 0: one per hardware thread
  double dirty_fraction = 1.0;
  uint32_t updates = 21;
  uint64_t seed = 42;
  bool json = false;
};

protocol::EntityId Id(uint32_t index) { return index + 1; }

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t m = v.size() / 2;
  return v.size() % 2 == 1 ? v[m] : (v[m - 1] + v[m]) / 2;
}

int Run(const Config& c) {
  const std::vector<uint32_t> parents = testing::GenerateParents(c.shape, c.entities, c.seed);
  runtime::TransformSystem ts;
  for (uint32_t i = 0; i < c.entities; ++i) {
    protocol::Transform t = testing::ShapeLocalTransform(i, c.seed);
    t.parent = parents[i] == testing::kShapeRoot ? 0 : Id(parents[i]);
    ts.SetTransform(Id(i), t);
  }
  ts.Update({c.threads});  // the initial build is not timed
  const bool all_dirty = c.dirty_fraction >= 1.0;
  const auto dirty = static_cast<uint32_t>(
      std::max<double>(1.0, std::round(c.dirty_fraction * static_cast<double>(c.entities))));
  std::vector<double> ms;
  ms.reserve(c.updates);
  uint64_t h = c.seed | 1;
  std::size_t computed = 0, parts = 0;
  for (uint32_t u = 0; u < c.updates; ++u) {
    if (all_dirty) {
      ts.MarkAllDirty();
    } else {
      for (uint32_t j = 0; j < dirty; ++j) {
        h = testing::ShapeHash(h);
        const protocol::EntityId e = Id(static_cast<uint32_t>(h % c.entities));
        protocol::Transform t = *ts.GetTransform(e);
        t.position.x += 0.001f;
        ts.SetTransform(e, t);
      }
    }
    const auto start = std::chrono::steady_clock::now();
    ts.Update({c.threads});
    const auto stop = std::chrono::steady_clock::now();
    ms.push_back(std::chrono::duration<double, std::milli>(stop - start).count());
    computed += ts.stats().computed;
    parts = std::max(parts, ts.stats().last_parts);
  }
  const double median = Median(ms);
  const double best = *std::min_element(ms.begin(), ms.end());
  const double computed_per_update = static_cast<double>(computed) / c.updates;
  const char* shape = testing::SceneShapeName(c.shape);
  if (c.json) {
    nlohmann::ordered_json out;
    out["shape"] = shape;
    out["entities"] = c.entities;
    out["threads"] = c.threads;
    out["ms_per_update"] = std::round(median * 1e6) / 1e6;
    out["min_ms"] = std::round(best * 1e6) / 1e6;
    out["updates"] = c.updates;
    out["dirty_fraction"] = all_dirty ? 1.0 : c.dirty_fraction;
    out["computed_per_update"] = std::round(computed_per_update);
    out["threads_used"] = parts;
    out["kernel"] = ts.stats().kernel;
    std::printf("%s\n", out.dump().c_str());
  } else {
    std::printf(
        "propagate %s, %u entities, %s dirty, threads %d (used up to %zu): median %.4f ms per "
        "update (min %.4f, %u updates, %.0f computed each, kernel %s)\n",
        shape, c.entities, all_dirty ? "all" : std::to_string(c.dirty_fraction).c_str(), c.threads,
        parts, median, best, c.updates, computed_per_update, ts.stats().kernel);
  }
  return kExitOk;
}

}  // namespace

namespace {

constexpr const char* kAbout =
    R"(Builds a generated scene and times updates of its world matrices: every entity dirty,
or (--dirty-fraction F, 0 < F < 1) round(F * N) random Transforms changed before each update
(not timed). Prints the median milliseconds per update. --json prints {"shape","entities",
"threads","ms_per_update","min_ms","updates","dirty_fraction","computed_per_update",
"threads_used","kernel"}.
)";

// `bench propagate`'s declarations.
struct PropagateCli {
  CliApp app;
  std::optional<std::string> shape;
  std::optional<uint64_t> entities, threads, updates, seed;
  std::optional<double> fraction;
  bool json = false;
  std::vector<std::string> extra;
  explicit PropagateCli(const char* footer) : app("bench", kAbout, footer) {
    app.SetUsageName("bench propagate");
    app.Value("--shape", "S", "random (default), deep, wide, chains, humanoids or balanced",
              &shape);
    app.U64("--entities", "N", "entities (default 100000, at most 16777216: about 250 B each)",
            &entities);
    app.U64("--threads", "T", "threads (default 0: one per hardware thread; at most 64)", &threads);
    app.Double("--dirty-fraction", "F", "the fraction changed before each update (default 1)",
               &fraction);
    app.U64("--updates", "U", "timed updates (default 21, at most 100000)", &updates);
    app.U64("--seed", "X", "the scene's seed (default 42)", &seed);
    app.Flag("--json", "print one JSON object (above)", &json);
    app.HiddenPositionals(&extra);
  }
};

}  // namespace

std::string BenchPropagateHelp(const char* footer) { return PropagateCli(footer).app.Help(); }

int RunBenchPropagate(Args args) {
  PropagateCli cli("");
  if (auto status = cli.app.Parse(args)) return *status;
  Config c;
  const auto& shape = cli.shape;
  const uint64_t entities = cli.entities.value_or(c.entities);
  const uint64_t threads = cli.threads.value_or(0);
  const double fraction = cli.fraction.value_or(1.0);
  const uint64_t updates = cli.updates.value_or(c.updates);
  c.seed = cli.seed.value_or(c.seed);
  c.json = cli.json;
  const auto& extra = cli.extra;
  if (!extra.empty()) {
    PrintMessage("bench", "propagate takes no FILE; see 'scenecrdt bench --help'");
    return kExitBadInput;
  }
  if (shape.has_value()) {
    const auto parsed = testing::ParseSceneShape(*shape);
    if (!parsed.has_value()) {
      PrintMessage("bench", "unknown --shape '" + *shape +
                                "': use random, deep, wide, chains, humanoids or balanced");
      return kExitBadInput;
    }
    c.shape = *parsed;
  }
  if (entities < 1 || entities > kMaxEntities || threads > kMaxThreads || updates < 1 ||
      updates > kMaxUpdates || !(fraction > 0.0 && fraction <= 1.0)) {
    PrintMessage("bench",
                 "propagate needs 1 <= --entities <= 16777216, --threads <= 64, "
                 "1 <= --updates <= 100000 and 0 < --dirty-fraction <= 1");
    return kExitBadInput;
  }
  c.entities = static_cast<uint32_t>(entities);
  c.threads = static_cast<int>(threads);
  c.dirty_fraction = fraction;
  c.updates = static_cast<uint32_t>(updates);
  return Run(c);
}

}  // namespace scenecrdt::cli
