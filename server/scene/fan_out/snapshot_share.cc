// SPDX-License-Identifier: Apache-2.0
// Owns the weak snapshot sets shared by joiners at one store sequence.
#include "scenecrdt/server/scene/fan_out/snapshot_share.h"

namespace scenecrdt::server {

void SnapshotShare::At(uint64_t seq) {
  if (sequence_ == seq) return;
  sequence_ = seq;
  for (auto& set : sets_) set.clear();
}

std::vector<SharedFrame> SnapshotShare::Alive(uint64_t seq, Form form) {
  At(seq);
  std::vector<SharedFrame> frames;
  for (const auto& weak : sets_[static_cast<std::size_t>(form)]) {
    SharedFrame f = weak.lock();
    if (!f) return {};
    frames.push_back(std::move(f));
  }
  return frames;
}

void SnapshotShare::Keep(uint64_t seq, Form form, const std::vector<SharedFrame>& frames) {
  At(seq);
  sets_[static_cast<std::size_t>(form)].assign(frames.begin(), frames.end());
}

}  // namespace scenecrdt::server
