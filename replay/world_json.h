// SPDX-License-Identifier: Apache-2.0
// Owns the "world" array of `replay --world` and `pull --world`: every node of the effective
// tree (entities with a Transform and placeholders) with its effective parent, flags and
// column-major LocalToWorld, floats printed so they read back exactly.
#pragma once

#include <string>

#include "scenecrdt/runtime/transform_system.h"

namespace scenecrdt::replay {

// Appends `"world":[...]` (no leading comma) for every node, sorted by entity id.
void AppendWorldJson(const runtime::TransformSystem& transforms, std::string& out);

}  // namespace scenecrdt::replay
