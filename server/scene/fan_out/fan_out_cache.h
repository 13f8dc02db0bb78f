// SPDX-License-Identifier: Apache-2.0
// Owns FanOutCache: the frames a scene built in its current store sequence, one Batch per
// start cursor, each representation built at most once and shared by every member at that
// cursor (docs/SERVER.md "Fan-out"): members that were busy catch up from the same cursor
// with the same frames. The store is exported once per batch (`dcl`); the raw-DCL chunk is
// that export, the envelope frames wrap it, and a commit from the same cursor writes it. A
// new store sequence forgets every batch. Bounded by the number of distinct member cursors
// (plus the commit's); used on the scene's strand only.
#pragma once

#include <cstdint>
#include <vector>

#include "scenecrdt/server/context.h"

namespace scenecrdt::server {

class FanOutCache {
 public:
  // The frames of one catch-up (store sequence cursor -> now), built once per representation.
  struct Batch {
    uint64_t cursor = 0;
    SharedFrame dcl;  // the store's export after `cursor` (FrameBuilder::Export), once built
    std::size_t messages = 0;  // in `dcl`
    bool delivered = false;    // a member received it (the fan-out's metrics count it once)
    std::vector<SharedFrame> envelope;
    std::vector<SharedFrame> zstd;  // the envelope frames' records, when a member needs them
  };

  // The batch from `cursor` in store sequence `seq`; `created`: it was not there yet (nothing
  // built in it). The reference is valid until the next call.
  Batch& At(uint64_t seq, uint64_t cursor, bool& created);

 private:
  uint64_t sequence_ = ~uint64_t{0};
  std::vector<Batch> batches_;
};

}  // namespace scenecrdt::server
