// SPDX-License-Identifier: Apache-2.0
// Owns Scenes: what the rooms above ask of the scenes held in memory (sessions join and leave
// them, the web routes list, inspect and delete them, the demo writes one). SceneRegistry
// (scene_registry.h) implements it; the Server hands it to the objects that need it.
#pragma once

#include <functional>
#include <string_view>
#include <vector>

#include "scenecrdt/protocol/result.h"
#include "scenecrdt/server/scene/scene_deletion.h"

namespace scenecrdt::server {

class Scene;

// Every call is thread-safe.
class Scenes {
 public:
  virtual ~Scenes() = default;
  // The scene called `name`, created on first use and never released, so never evicted
  // (server-side writers such as the demo). nullptr while stopping or when it cannot be loaded.
  virtual Scene* FindOrCreate(std::string_view name) = 0;
  // The scene called `name` for a session, loaded if stored, created only when `may_create`;
  // held in memory until Release (scene_registry.h has the errors).
  virtual Result<Scene*> Acquire(std::string_view name, bool may_create) = 0;
  virtual void Release(Scene* scene) = 0;
  // Deletes the scene (SQLite only; scene_registry.h): an error at once, or `done` later on the
  // scene's strand (post, do not block).
  virtual Result<bool> Delete(std::string_view name, std::function<void(SceneDeletion)> done) = 0;
  // Every scene in memory, in name order, each referenced until Release.
  virtual std::vector<Scene*> AcquireLoaded() = 0;
};

}  // namespace scenecrdt::server
