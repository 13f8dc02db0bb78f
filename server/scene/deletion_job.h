// SPDX-License-Identifier: Apache-2.0
// Owns DeletionJob: a scene's deletion by the admin API (docs/OPERATIONS.md "Admin API";
// SQLite only) once started, on its strand: what it reports (entities, members closed, rows
// erased) and the erase of its rows (Persistence::SubmitErase), submitted once no commit of
// the scene is in flight (after that commit, in one transaction). The scene closes its
// members and stops joining, writing and committing (scene.h "Deletion").
#pragma once

#include <cstddef>
#include <functional>
#include <string>

#include "scenecrdt/net/net.h"
#include "scenecrdt/server/context.h"
#include "scenecrdt/server/scene/scene_deletion.h"

namespace scenecrdt::server {

class DeletionJob {
 public:
  // Everything referenced belongs to the scene `scene` names and outlives this object.
  DeletionJob(ServerContext& ctx, const std::string& scene, const net::Strand& strand)
      : ctx_(ctx), scene_(scene), strand_(strand) {}
  DeletionJob(const DeletionJob&) = delete;
  DeletionJob& operator=(const DeletionJob&) = delete;

  // Started: no join, write or commit any more.
  bool started() const { return started_; }
  // The scene held `entities` and `sessions` members; `done` runs on the strand once the
  // erase is durable (or failed). Once.
  void Start(std::function<void(SceneDeletion)> done, std::size_t entities, std::size_t sessions);
  // Submits the erase (no commit of the scene in flight); its end runs `done`.
  void EraseRows();

 private:
  ServerContext& ctx_;
  const std::string& scene_;
  const net::Strand& strand_;
  bool started_ = false;
  SceneDeletion deletion_;
  std::function<void(SceneDeletion)> done_;
};

}  // namespace scenecrdt::server
