// SPDX-License-Identifier: Apache-2.0
// Owns the world-matrix JSON writer.
#include "scenecrdt/replay/world_json.h"

#include "scenecrdt/json/values.h"

namespace scenecrdt::replay {

void AppendWorldJson(const runtime::TransformSystem& transforms, std::string& out) {
  out += "\"world\":[";
  bool first = true;
  const auto world = transforms.world_matrices();
  for (const runtime::NodeInfo& n : transforms.Nodes()) {
    if (!first) out += ',';
    first = false;
    out += "{\"entity\":" + std::to_string(n.entity) +
           ",\"parent\":" + std::to_string(n.effective_parent) +
           ",\"parked\":" + (n.parked ? "true" : "false") +
           ",\"placeholder\":" + (n.placeholder ? "true" : "false") + ",\"localToWorld\":[";
    const glm::mat4& m = world[n.index];
    for (int c = 0; c < 4; ++c) {
      for (int r = 0; r < 4; ++r) {
        if (c || r) out += ',';
        json::AppendFloat(m[c][r], out);
      }
    }
    out += "]}";
  }
  out += ']';
}

}  // namespace scenecrdt::replay
