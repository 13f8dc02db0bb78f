// SPDX-License-Identifier: Apache-2.0
// Owns the scene sequence <-> store sequence marks of a cluster scene.
#include "scenecrdt/server/cluster/cluster_scene_sync.h"

#include <algorithm>

namespace scenecrdt::server {

void ClusterSceneSync::Reset(cluster::StreamId last, uint64_t store_seq) {
  marks_.clear();
  own_.clear();
  Push({last, store_seq, store_seq});
}

void ClusterSceneSync::NoteAppended(cluster::StreamId id, uint64_t from) {
  if (!marks_.empty() && id <= marks_.back().c) return;  // the read loop passed it already
  if (own_.size() >= kMaxOwnAppends) {
    // Merge the two oldest: removed when the newer ID is passed, with the older start.
    const uint64_t oldest_from = own_.front().from;
    own_.pop_front();
    own_.front().from = std::min(own_.front().from, oldest_from);
  }
  own_.push_back({id, from});
}

void ClusterSceneSync::NoteRead(cluster::StreamId last, uint64_t store_seq, uint64_t durable) {
  if (!marks_.empty() && last <= marks_.back().c) return;
  while (!own_.empty() && own_.front().id <= last) own_.pop_front();
  uint64_t s = std::min(durable, store_seq);
  if (!own_.empty()) s = std::min(s, own_.front().from);
  Push({last, store_seq, s});
}

void ClusterSceneSync::Push(Mark m) {
  if (marks_.size() >= kMaxMarks) marks_.pop_front();
  marks_.push_back(m);
}

uint64_t ClusterSceneSync::Advertise(uint64_t store_seq) const {
  // Marks are in increasing t: the last one reached by store_seq.
  for (auto it = marks_.rbegin(); it != marks_.rend(); ++it) {
    if (it->t <= store_seq) return cluster::SceneSequenceFromStreamId(it->c);
  }
  return 0;
}

std::optional<uint64_t> ClusterSceneSync::ResumeFrom(uint64_t wire) const {
  const cluster::StreamId have = cluster::StreamIdFromSceneSequence(wire);
  for (auto it = marks_.rbegin(); it != marks_.rend(); ++it) {
    if (it->c <= have) return it->s;
  }
  return std::nullopt;
}

}  // namespace scenecrdt::server
