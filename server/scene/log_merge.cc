// SPDX-License-Identifier: Apache-2.0
// Owns the merges of a shared log's loaded state and of other writers' entries.
#include "scenecrdt/server/scene/log_merge.h"

#include <span>

#include "scenecrdt/protocol/crdt_codec.h"

namespace scenecrdt::server {

namespace {

std::span<const uint8_t> Bytes(const std::string& chunk) {
  return std::span(reinterpret_cast<const uint8_t*>(chunk.data()), chunk.size());
}

}  // namespace

uint64_t MergeLoaded(runtime::CrdtStore& store, ClusterSceneSync& marks,
                     const std::vector<std::string>& chunks,
                     const std::vector<cluster::StreamId>& ids, cluster::StreamId last,
                     const EventLog& log, const std::string& scene) {
  const protocol::DecodeOptions decode;
  bool marked = false;
  for (std::size_t i = 0; i < chunks.size(); ++i) {
    const std::string& c = chunks[i];
    if (c.empty()) {
      // The empty state before a tail without snapshot: nothing to merge, a mark all the same.
    } else if (auto r = store.MergeStream(Bytes(c), decode); !r.has_value()) {
      log.Write(LogLevel::kError, "cluster", "scene=%s load_merge_error=%s", scene.c_str(),
                r.error().detail);
    }
    // One mark per loaded piece: everything up to ids[i] is merged now, and what follows
    // changes the store after this point (ClusterSceneSync keeps the newest kMaxMarks).
    if (i < ids.size()) {
      if (!marked) {
        marks.Reset(ids[i], store.sequence());
      } else {
        marks.NoteRead(ids[i], store.sequence(), store.sequence());
      }
      marked = true;
    }
  }
  if (!marked) {
    marks.Reset(last, store.sequence());
  } else {
    marks.NoteRead(last, store.sequence(), store.sequence());
  }
  uint64_t loaded_bytes = 0;
  for (const std::string& c : chunks) loaded_bytes += c.size();
  return loaded_bytes;
}

void MergeRemote(runtime::CrdtStore& store, SceneBytes& bytes,
                 std::span<const cluster::DecodedChunk> chunks, uint64_t cap, Metrics& metrics,
                 const EventLog& log, const std::string& scene) {
  const uint64_t bytes_before = bytes.bytes();
  for (const cluster::DecodedChunk& c : chunks) {
    // Other nodes' writes count towards --max-scene-bytes like local ones (an upper bound
    // of their growth), but are never refused: they are in Redis already, and every node
    // must merge them to converge. What the cap refuses is this node's writers' growth.
    bytes.Add(SceneBytes::Growth(store, c.messages));
    // Merge applies the store's own rules to each message, as a merge of the bytes would.
    for (const protocol::CrdtMessage& m : c.messages) metrics.CountMerge(store.Merge(m).outcome);
  }
  if (cap != 0 && bytes_before <= cap && bytes.bytes() > cap) {
    // From here this node refuses its writers' growth (scene_too_large), not other nodes'.
    log.Write(LogLevel::kWarn, "cluster",
              "scene=%s over_max_scene_bytes=%llu by=other_nodes bytes=%llu", scene.c_str(),
              static_cast<unsigned long long>(cap), static_cast<unsigned long long>(bytes.bytes()));
  }
}

}  // namespace scenecrdt::server
