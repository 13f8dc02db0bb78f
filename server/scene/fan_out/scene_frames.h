// SPDX-License-Identifier: Apache-2.0
// Owns SceneFrames: what a scene's members receive, built once and shared (docs/SERVER.md
// "Fan-out"), on its strand: a joiner's snapshot (shared with earlier joiners at the same
// store sequence), a resumer's delta, and the batch of every cursor in the member's form
// (raw DCL chunk, envelope frames, their zstd records), over the jobs of this room:
// FrameBuilder, FanOutCache, SnapshotShare and SharedCompression. Interest members' frames
// are their own (interest/scene_interest.h), built with the same FrameBuilder and compression.
#pragma once

#include <cstdint>
#include <vector>

#include "scenecrdt/runtime/crdt_store.h"
#include "scenecrdt/server/context.h"
#include "scenecrdt/server/scene/fan_out/fan_out_cache.h"
#include "scenecrdt/server/scene/fan_out/frame_builder.h"
#include "scenecrdt/server/scene/fan_out/shared_compression.h"
#include "scenecrdt/server/scene/fan_out/snapshot_share.h"
#include "scenecrdt/server/scene/scene_member_state.h"
#include "scenecrdt/server/scene/scene_sequences.h"

namespace scenecrdt::server {

class SceneFrames {
 public:
  // `store` and `sequences` belong to the scene and outlive this object; `chunk_bytes`:
  // state_chunk_bytes.
  SceneFrames(Metrics& metrics, uint32_t chunk_bytes, const runtime::CrdtStore& store,
              const SceneSequences& sequences)
      : metrics_(metrics),
        store_(store),
        sequences_(sequences),
        builder_(metrics, chunk_bytes),
        compression_(metrics) {}
  SceneFrames(const SceneFrames&) = delete;
  SceneFrames& operator=(const SceneFrames&) = delete;

  FrameBuilder& builder() { return builder_; }
  SharedCompression& compression() { return compression_; }

  // The snapshot frames for a joiner at the current sequence, shared with earlier joiners
  // whose copies are still alive (`raw`: one plain DCL chunk; `zstd`: as zstd records).
  std::vector<SharedFrame> Snapshot(bool raw, bool zstd);
  // A resumer's state frames: the changes after store sequence `from` (`zstd`: as records).
  std::vector<SharedFrame> Resume(uint64_t from, bool zstd);
  // The batch of the members at `cursor` in store sequence `seq`, with the store's export
  // after `cursor` built (once: the fan-out's representations and the commit share it).
  FanOutCache::Batch& Export(uint64_t seq, uint64_t cursor);
  // The frames of m's delivery of (m.cursor, seq] in its form, built once per cursor and
  // shared. The first delivery of a batch counts its messages out, and one shared frame
  // (`shared`: from the last fan-out's cursor) or catch-up.
  std::vector<SharedFrame> Delivery(const MemberState& m, uint64_t seq, bool shared);

 private:
  Metrics& metrics_;
  const runtime::CrdtStore& store_;
  const SceneSequences& sequences_;
  FrameBuilder builder_;
  FanOutCache cache_;
  SnapshotShare snapshots_;
  SharedCompression compression_;
};

}  // namespace scenecrdt::server
