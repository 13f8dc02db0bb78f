// SPDX-License-Identifier: Apache-2.0
// Owns SceneDeletion: what deleting a scene did (the admin API; Scene::Delete, Scenes::Delete).
#pragma once

#include <cstddef>
#include <cstdint>

namespace scenecrdt::server {

// `ok` false when its rows could not be erased (the commit failure is logged by the storage
// health; the rows stay, the members were closed and the scene left memory all the same).
struct SceneDeletion {
  bool ok = false;
  std::size_t entities = 0;  // in its state when it was deleted
  std::size_t sessions = 0;  // members closed
  uint64_t rows = 0;         // register, tombstone and append rows erased
};

}  // namespace scenecrdt::server
