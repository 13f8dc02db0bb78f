// SPDX-License-Identifier: Apache-2.0
// Example: drives runtime::TransformSystem the way a renderer's frame loop would. It builds a
// small scene (a spinning, non-uniformly scaled turntable carrying a few children, one of them
// attached to an entity that has no Transform yet), then each frame writes the changed
// Transforms, calls Update() once, and "uploads" only the world matrices whose entities are
// in changed_entities() (a full upload when layout_version() moves). It also creates and
// breaks a parenting loop to show parking, and prints a decomposition with shear.
#include <cmath>
#include <cstdio>
#include <glm/gtc/quaternion.hpp>
#include <vector>

#include "scenecrdt/protocol/transform_glm.h"
#include "scenecrdt/runtime/transform_system.h"

namespace {

using scenecrdt::protocol::EntityId;
using scenecrdt::protocol::Transform;
using scenecrdt::runtime::DecomposeWorld;
using scenecrdt::runtime::TransformSystem;

constexpr EntityId kTurntable = 512, kLamp = 513, kBook = 514, kCup = 515, kShelf = 516;

Transform Make(EntityId parent, glm::vec3 position, glm::quat rotation, glm::vec3 scale) {
  Transform t;
  t.parent = parent;
  t.position = scenecrdt::protocol::FromGlm(position);
  t.rotation = scenecrdt::protocol::FromGlm(rotation);  // member-wise: wire order x, y, z, w
  t.scale = scenecrdt::protocol::FromGlm(scale);
  return t;
}

// Stand-in for a GPU buffer: the renderer keeps a copy indexed like world_matrices().
struct GpuBuffer {
  std::vector<glm::mat4> matrices;
  uint64_t layout_version = ~uint64_t{0};
  std::size_t uploads = 0;

  void Sync(const TransformSystem& ts) {
    const auto worlds = ts.world_matrices();
    if (ts.layout_version() != layout_version || matrices.size() != worlds.size()) {
      matrices.assign(worlds.begin(), worlds.end());  // indices moved: full upload
      layout_version = ts.layout_version();
      uploads += worlds.size();
      return;
    }
    for (EntityId e : ts.changed_entities()) {
      const uint32_t index = *ts.IndexOf(e);
      matrices[index] = worlds[index];
      ++uploads;
    }
  }
};

}  // namespace

int main() {
  TransformSystem ts;
  const glm::quat identity(1.0f, 0.0f, 0.0f, 0.0f);
  ts.SetTransform(kTurntable, Make(0, {0, 0, 0}, identity, {2, 1, 1}));
  ts.SetTransform(kLamp, Make(kTurntable, {1, 0, 0},
                              glm::angleAxis(glm::radians(45.0f), glm::vec3(0, 0, 1)), {1, 1, 1}));
  ts.SetTransform(kBook, Make(kTurntable, {0, 0, 1}, identity, {1, 1, 1}));
  ts.SetTransform(kCup, Make(kShelf, {0, 1, 0}, identity, {1, 1, 1}));  // kShelf: no Transform yet
  ts.SetRotationPivot(kBook, {0.5f, 0, 0});  // a local, non-replicated DOTS component

  GpuBuffer gpu;
  for (int frame = 0; frame < 5; ++frame) {
    // Replicated changes arrive (here: the turntable spins about Y).
    const float angle = glm::radians(30.0f * static_cast<float>(frame));
    ts.SetTransform(kTurntable,
                    Make(0, {0, 0, 0}, glm::angleAxis(angle, glm::vec3(0, 1, 0)), {2, 1, 1}));
    if (frame == 2) ts.SetTransform(kShelf, Make(0, {5, 0, 0}, identity, {1, 1, 1}));
    if (frame == 3)
      ts.SetTransform(kTurntable, Make(kLamp, {0, 0, 0}, identity, {2, 1, 1}));            // loop
    if (frame == 4) ts.SetTransform(kTurntable, Make(0, {0, 0, 0}, identity, {2, 1, 1}));  // broken

    ts.Update();  // once per frame
    gpu.Sync(ts);

    std::printf("frame %d: %zu changed, %zu matrices uploaded so far\n", frame,
                ts.changed_entities().size(), gpu.uploads);
    for (const auto& node : ts.Nodes()) {
      const glm::mat4& w = gpu.matrices[node.index];
      std::printf("  entity %u parent %u%s%s at (%.3f, %.3f, %.3f)\n", node.entity,
                  node.effective_parent, node.parked ? " [parked]" : "",
                  node.placeholder ? " [placeholder]" : "", w[3][0], w[3][1], w[3][2]);
    }
  }
  const auto d = DecomposeWorld(*ts.WorldMatrix(kLamp));
  std::printf("lamp: scale (%.3f, %.3f, %.3f), shear %.3f (%s)\n", d.scale.x, d.scale.y, d.scale.z,
              d.shear, d.has_shear ? "sheared: no exact TRS" : "pure TRS");
  return 0;
}
