// SPDX-License-Identifier: Apache-2.0
// Owns the stored scene names as the viewer's scene list reads them (web/scene_directory.h):
// a SceneNameSource reads at most a given number of names from a bounded source, SQLite's
// scene_names table (StoredSceneNames, here) or, in cluster mode, a bounded SCAN of the scene
// streams in Redis (cluster/cluster_scene_list.h). Bounds: docs/SERVER.md "Scene list".
#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "scenecrdt/protocol/result.h"

namespace scenecrdt::server {

inline constexpr std::size_t kMaxListedScenes = 1000;  // names in one listing

struct StoredScenes {
  std::vector<std::string> names;  // sorted, at most kMaxListedScenes
  // False: more are stored than listed (the cap), or the read failed (`error`).
  bool complete = true;
  std::string error;  // the read's failure in words, "" when it worked
};
using StoredScenesPtr = std::shared_ptr<const StoredScenes>;

// Reads at most `max_names` names; sets complete = false when there are more. Runs on the
// directory's thread only.
using SceneNameSource = std::function<Result<StoredScenes>(std::size_t max_names)>;

class Persistence;

// The SQLite source: Persistence::ListSceneNames (the scene_names table).
SceneNameSource StoredSceneNames(Persistence& persistence);

}  // namespace scenecrdt::server
