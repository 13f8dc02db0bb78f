// SPDX-License-Identifier: Apache-2.0
// Owns SceneSequences: how a scene numbers what it sends (the scene sequence of Welcome and
// Crdt frames, docs/PROTOCOL.md section 2) and which store sequence a resume continues from.
// On a local log (SQLite) a scene sequence is the incarnation in the high bits and the store
// sequence in the low ones: a resume of this incarnation at or below the current store
// sequence gets a delta. On a shared log (the cluster) it is derived from the log positions the
// scene has merged (ClusterSceneSync's marks, docs/CLUSTER.md "Server integration"), so that
// it means the same on every node. Used on the scene's strand only.
#pragma once

#include <cstdint>
#include <optional>

#include "scenecrdt/server/cluster/cluster_scene_sync.h"

namespace scenecrdt::server {

class SceneSequences {
 public:
  // `wire_base`: the incarnation's scene sequence of store sequence 0 (a local log).
  explicit SceneSequences(uint64_t wire_base) : wire_base_(wire_base) {}

  // From now on the scene is numbered by a shared log's positions (marks()).
  void UseSharedLog() { marks_.emplace(); }
  bool shared() const { return marks_.has_value(); }
  // The shared log's marks (only after UseSharedLog).
  ClusterSceneSync& marks() { return *marks_; }

  // The scene sequence of store sequence `local` (0 on a shared log before any mark).
  uint64_t Wire(uint64_t local) const;
  // The store sequence a client at scene sequence `resume` gets a delta from, the store being
  // at `store_seq`; nullopt: the position is of another incarnation, too old or from the
  // future (it gets a snapshot).
  std::optional<uint64_t> ResumeFrom(uint64_t resume, uint64_t store_seq) const;

 private:
  uint64_t wire_base_;
  std::optional<ClusterSceneSync> marks_;
};

}  // namespace scenecrdt::server
