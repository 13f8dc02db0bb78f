// SPDX-License-Identifier: Apache-2.0
// Owns the SQLite source of the stored scene names (see scene_names.h).
#include "scenecrdt/server/storage/scene_names.h"

#include "scenecrdt/server/storage/persistence.h"

namespace scenecrdt::server {

SceneNameSource StoredSceneNames(Persistence& persistence) {
  return [&persistence](std::size_t max_names) -> Result<StoredScenes> {
    // One more than the cap tells whether the list is complete.
    auto names = persistence.ListSceneNames(max_names + 1);
    if (!names.has_value()) return names.error();
    StoredScenes out;
    out.names = std::move(names.value());
    if (out.names.size() > max_names) {
      out.names.resize(max_names);
      out.complete = false;
    }
    return out;
  };
}

}  // namespace scenecrdt::server
