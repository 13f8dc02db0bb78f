// SPDX-License-Identifier: Apache-2.0
// Owns the interval bookkeeping of GapTracker (the reasoning is in gap_tracker.h).
#include "scenecrdt/cluster/gap_tracker.h"

namespace scenecrdt::cluster {

void GapTracker::NoteRead(StreamId from, StreamId first) {
  if (!(from < first)) return;  // cannot happen with Redis; nothing to record
  if (size_ == kMaxIntervals) {
    // Merge the two newest into one covering both: still contains every real gap.
    intervals_[size_ - 2].first = intervals_[size_ - 1].first;
    --size_;
  }
  intervals_[size_++] = Interval{from, first};
}

bool GapTracker::MissedByTrim(StreamId trimmed_through) const {
  for (std::size_t i = 0; i < size_; ++i) {
    if (intervals_[i].from < trimmed_through && trimmed_through < intervals_[i].first) return true;
  }
  return false;
}

}  // namespace scenecrdt::cluster
