// SPDX-License-Identifier: Apache-2.0
// Owns `scenecrdt gen`: writes a DCL stream of Transform PUTs for the benchmark scene shapes.
#include <cmath>
#include <cstdio>

#include "scenecrdt/protocol/crdt_codec.h"
#include "scenecrdt/testing/scene_shapes.h"
#include "tools/cli/cli_app.h"
#include "tools/cli/commands.h"

namespace scenecrdt::cli {

namespace {
constexpr const char* kAbout =
    R"(Writes a DCL CRDT stream of Transform PUTs (timestamp 1) for a benchmark scene shape
(docs/reference/TRANSFORM-CASES.md), generated deterministically from the seed:
  wide       one entity at root and N-1 children of it
  deep       one chain of N
  chains     N/1000 chains of 1000
  balanced   a complete 8-ary tree
  random     ~1 % roots, every other parent uniform among earlier entities
  humanoids  N/67 copies of a 67-joint humanoid rig
Entity i gets number 512 + i (version 0); roots have parent 0 and sit on a 4 m grid.

DCL entity numbers are 16-bit and scene entities start at 512, so a stream holds at most
65024 entities: N above that is refused (exit 2). Scenes larger than a DCL scene (the 1 M
benchmarks) use the runtime API directly (testing/scene_shapes.h, tools/bench/).
)";
constexpr const char* kFooter =
    R"(exit status: 0 ok; 2 bad usage (unknown shape, N out of range) or OUT cannot be written.
)";
constexpr uint64_t kMaxEntities = 65536 - 512;
}  // namespace

int RunGen(Args args) {
  CliApp app("gen", kAbout, kFooter);
  std::optional<std::string> shape_name, output;
  std::optional<uint64_t> entities, seed_given;
  bool non_uniform = false;
  app.Value("--shape", "SHAPE", "one of the names above (required)", &shape_name);
  app.U64("--entities", "N", "number of entities, 1..65024 (required)", &entities);
  app.U64("--seed", "S", "generator seed (default 1)", &seed_given);
  app.Flag("--non-uniform", "non-uniform scales (exercise the NonUniformScale path)", &non_uniform);
  app.Value("--output,-o", "OUT", "where to write the stream (required; '-' for stdout)", &output);
  if (auto status = app.Parse(args)) return *status;
  const uint64_t seed = seed_given.value_or(1);
  if (!shape_name || !entities || !output) {
    PrintMessage("gen", "needs --shape, --entities and -o; see 'scenecrdt gen --help'");
    return kExitBadInput;
  }
  const auto shape = testing::ParseSceneShape(*shape_name);
  if (!shape) {
    PrintMessage("gen", "unknown shape '" + *shape_name +
                            "': use wide, deep, chains, balanced, random or humanoids");
    return kExitBadInput;
  }
  if (*entities == 0 || *entities > kMaxEntities) {
    PrintMessage("gen",
                 "--entities must be 1..65024: DCL entity numbers are 16-bit and scene "
                 "entities start at 512 (use the runtime API for larger scenes)");
    return kExitBadInput;
  }
  const auto n = static_cast<uint32_t>(*entities);
  const std::vector<uint32_t> parents = testing::GenerateParents(*shape, n, seed);
  std::size_t roots = 0;
  for (uint32_t p : parents) roots += p == testing::kShapeRoot;
  // Roots are laid out on a grid (4 m apart) so the trees do not overlap in a drawing.
  const auto side = static_cast<uint32_t>(std::ceil(std::sqrt(static_cast<double>(roots))));
  uint32_t root_index = 0;
  std::vector<uint8_t> bytes;
  bytes.reserve(std::size_t{n} * 68);
  for (uint32_t i = 0; i < n; ++i) {
    protocol::Transform t = testing::ShapeLocalTransform(i, seed, !non_uniform);
    if (parents[i] == testing::kShapeRoot && roots > 1) {
      t.position.x += 4.0f * static_cast<float>(root_index % side);
      t.position.z += 4.0f * static_cast<float>(root_index / side);
      ++root_index;
    }
    t.parent = parents[i] == testing::kShapeRoot ? protocol::kRootEntity
                                                 : protocol::MakeEntityId(512 + parents[i], 0);
    protocol::AppendTransformPut(protocol::MakeEntityId(512 + i, 0), 1, t, bytes);
  }
  if (auto w = WriteOutput(*output, bytes); !w.has_value()) {
    PrintError("gen", "cannot write '" + *output + "'", w.error());
    return kExitBadInput;
  }
  return kExitOk;
}

}  // namespace scenecrdt::cli
