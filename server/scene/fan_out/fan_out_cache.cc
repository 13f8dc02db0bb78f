// SPDX-License-Identifier: Apache-2.0
// Owns the per-cursor batches of one store sequence.
#include "scenecrdt/server/scene/fan_out/fan_out_cache.h"

#include <algorithm>

namespace scenecrdt::server {

FanOutCache::Batch& FanOutCache::At(uint64_t seq, uint64_t cursor, bool& created) {
  if (sequence_ != seq) {
    batches_.clear();
    sequence_ = seq;
  }
  auto it = std::find_if(batches_.begin(), batches_.end(),
                         [&](const Batch& b) { return b.cursor == cursor; });
  created = it == batches_.end();
  if (!created) return *it;
  batches_.push_back(Batch{});
  batches_.back().cursor = cursor;
  return batches_.back();
}

}  // namespace scenecrdt::server
