// SPDX-License-Identifier: Apache-2.0
// Owns DirtySet: the slots whose world matrix (and subtree) must be recomputed by the next
// update, and the one rule that turns many dirty roots into a full sweep.
#pragma once

#include <algorithm>
#include <cstdint>
#include <span>
#include <vector>

namespace scenecrdt::runtime::internal {

class DirtySet {
 public:
  // Once one live node in kSweepRatio is a dirty root, one sweep over the whole sequence is
  // cheaper than sorting the roots and expanding each to its subtree.
  static constexpr std::size_t kSweepRatio = 16;

  void Mark(uint32_t slot) {
    if (slot >= flag_.size()) flag_.resize(std::max<std::size_t>(slot + 1, flag_.size() * 3 / 2));
    if (flag_[slot] != 0) return;
    flag_[slot] = 1;
    slots_.push_back(slot);
  }
  void MarkAll() { all_ = true; }
  // Whether the next update recomputes every node of a layout with `live` nodes.
  bool SweepAll(std::size_t live) const { return all_ || slots_.size() * kSweepRatio >= live; }
  // Dirty slots in marking order, each once.
  std::span<const uint32_t> slots() const { return slots_; }
  void Clear() {
    for (uint32_t s : slots_) flag_[s] = 0;
    slots_.clear();
    all_ = false;
  }

 private:
  std::vector<uint8_t> flag_;  // per slot
  std::vector<uint32_t> slots_;
  bool all_ = false;
};

}  // namespace scenecrdt::runtime::internal
