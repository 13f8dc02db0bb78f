// SPDX-License-Identifier: Apache-2.0
// Owns SceneBytes: the --max-scene-bytes budget of one scene, measured as the size of the
// scene's state as a DCL snapshot (what a joiner receives and what SQLite stores, give or
// take the row overhead). docs/SERVER.md "Memory bounds".
//
// The count is an upper bound kept without scanning the store: a batch's growth is, per
// message, how much larger it is than the register it replaces (0 for a smaller or equal one,
// the whole message for a new key or append element). Deletes never count against the cap
// (they are how a full scene shrinks; tombstones have their own limit). When a batch would
// pass the cap, the exact size is measured (one snapshot export, at most once a second per
// scene) before refusing it. Used on the scene's strand only.
#pragma once

#include <cstdint>
#include <span>

#include "scenecrdt/protocol/crdt_codec.h"
#include "scenecrdt/runtime/crdt_store.h"

namespace scenecrdt::server {

class SceneBytes {
 public:
  // The exact size (a restored scene: the size of the stream that rebuilt it).
  void Reset(uint64_t exact) { bytes_ = exact; }
  uint64_t bytes() const { return bytes_; }

  // Upper bound of what `messages` may add to the snapshot of `store` (before they merge).
  static uint64_t Growth(const runtime::CrdtStore& store,
                         std::span<const protocol::CrdtMessage> messages);
  // True when a batch of `growth` fits under `cap` (0: no cap); may measure exactly first.
  bool Fits(const runtime::CrdtStore& store, uint64_t growth, uint64_t cap, int64_t now_ms);
  // After the batch merged (whatever it changed, the bound stays an upper bound).
  void Add(uint64_t growth) { bytes_ += growth; }

 private:
  uint64_t bytes_ = 0;
  int64_t measured_ms_ = -1000000;
};

}  // namespace scenecrdt::server
