// SPDX-License-Identifier: Apache-2.0
// Owns GapTracker: tells a stream follower (the read loop, a scene load) whether compaction
// trimmed entries it never read (docs/CLUSTER.md "Gaps"). Each read from cursor `from` that
// returned `first` as its first entry proves nothing existed in (from, first) at read time.
// Compaction trims a prefix and, in the same script, appends a marker naming the last entry it
// removed (r). A follower missed entries exactly when some read had from < r < first: the trim
// ran before that read and removed what lay just after the cursor. Markers of every trim that
// ran before a read are returned by that read or the next ones, so once a read reaches the end
// of the stream (fewer entries than asked), older intervals can never match: they are dropped.
#pragma once

#include <array>
#include <cstddef>

#include "scenecrdt/cluster/stream_id.h"

namespace scenecrdt::cluster {

class GapTracker {
 public:
  // Interval slots; when full, the two newest merge (a superset: at worst a spurious reload).
  static constexpr std::size_t kMaxIntervals = 8;

  // A read from cursor `from` returned `first` as its first entry.
  void NoteRead(StreamId from, StreamId first);
  // The last read returned everything up to the stream's end, and its entries (markers
  // included) have been handled.
  void NoteCaughtUp() { size_ = 0; }
  // A marker: true when entries up to `trimmed_through` may have been missed (reload the
  // snapshot, which covers them).
  bool MissedByTrim(StreamId trimmed_through) const;
  // After a snapshot reload every trim so far is covered.
  void Reset() { size_ = 0; }
  std::size_t size() const { return size_; }

 private:
  struct Interval {
    StreamId from;
    StreamId first;
  };
  std::array<Interval, kMaxIntervals> intervals_{};
  std::size_t size_ = 0;
};

}  // namespace scenecrdt::cluster
