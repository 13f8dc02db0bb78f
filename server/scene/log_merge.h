// SPDX-License-Identifier: Apache-2.0
// Owns merging what a shared log hands a scene (docs/CLUSTER.md "Server integration"): its
// stored state when the scene loads (snapshot, then the tail, with a mark per position), and
// the entries other writers append later. Neither is ever refused: both are in the log
// already and every node must merge them to converge; a chunk that does not decode is logged
// (event "cluster") and skipped. Runs on the scene's strand (Scene's LoggedScene calls).
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "scenecrdt/cluster/stream_entry.h"
#include "scenecrdt/cluster/stream_id.h"
#include "scenecrdt/runtime/crdt_store.h"
#include "scenecrdt/server/cluster/cluster_scene_sync.h"
#include "scenecrdt/server/observability/event_log.h"
#include "scenecrdt/server/observability/metrics.h"
#include "scenecrdt/server/scene/scene_bytes.h"

namespace scenecrdt::server {

// Merges a loaded scene's `chunks` into `store` in order, marking in `marks` that everything
// up to `ids[i]` is in the store after chunk i, and finally `last`. Returns the bytes that
// rebuilt the state (what counts towards --max-scene-bytes: an upper bound).
uint64_t MergeLoaded(runtime::CrdtStore& store, ClusterSceneSync& marks,
                     const std::vector<std::string>& chunks,
                     const std::vector<cluster::StreamId>& ids, cluster::StreamId last,
                     const EventLog& log, const std::string& scene);

// Merges other writers' `chunks` (decoded by the read loop) into `store`, counting each merge in
// `metrics` and each chunk's growth in `bytes` (other writers' growth counts towards `cap`,
// --max-scene-bytes, like local writes, but is never refused; passing the cap is logged once per
// crossing).
void MergeRemote(runtime::CrdtStore& store, SceneBytes& bytes,
                 std::span<const cluster::DecodedChunk> chunks, uint64_t cap, Metrics& metrics,
                 const EventLog& log, const std::string& scene);

}  // namespace scenecrdt::server
