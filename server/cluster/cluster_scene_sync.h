// SPDX-License-Identifier: Apache-2.0
// Owns ClusterSceneSync: one scene's map between the cluster-wide scene sequence (derived from
// the Redis stream IDs its read loop has passed) and the node's local store sequence
// (docs/CLUSTER.md "Server integration"). Pure bookkeeping, used on the scene strand only.
//
// A mark (c, t, s) says: every entry up to stream ID c is merged at store sequence t, and
// every entry after c that this node merged (others' entries read later, and its own entries,
// which it merged before appending) changed the store after store sequence s. So:
//  - a frame built at store sequence >= t may advertise c's scene sequence (Advertise);
//  - a client that has everything up to some ID c' >= c gets a complete resume delta with
//    ExportChangesSince(s) (ResumeFrom), whichever node advertised c' to it.
// Own entries: they are merged at store sequence a (the durable point when their flush was
// exported) but may get stream IDs after marks made later; until the read loop passes their
// ID, marks take s <= a. Both lists are bounded (kMaxMarks, kMaxOwnAppends): past the oldest
// mark a resume is answered with a snapshot; own appends beyond the cap merge (conservative).
#pragma once

#include <cstdint>
#include <deque>
#include <optional>

#include "scenecrdt/cluster/stream_id.h"

namespace scenecrdt::server {

class ClusterSceneSync {
 public:
  static constexpr std::size_t kMaxMarks = 1024;
  static constexpr std::size_t kMaxOwnAppends = 1024;

  // The scene was loaded: everything up to `last` is merged at store sequence `store_seq`.
  void Reset(cluster::StreamId last, uint64_t store_seq);
  // An own flush exported from durable point `from` is in Redis with (last) entry ID `id`.
  void NoteAppended(cluster::StreamId id, uint64_t from);
  // The read loop delivered every entry up to `last` (own ones included); the store is at
  // `store_seq` after merging them; `durable` is the scene's durable point (own changes after
  // it are not in Redis yet).
  void NoteRead(cluster::StreamId last, uint64_t store_seq, uint64_t durable);

  // The scene sequence a frame built at store sequence `store_seq` advertises (0: none known).
  uint64_t Advertise(uint64_t store_seq) const;
  // The store sequence to export a resume delta from for a client at scene sequence `wire`;
  // nullopt when it is older than every mark (send a snapshot).
  std::optional<uint64_t> ResumeFrom(uint64_t wire) const;

  cluster::StreamId cursor() const {
    return marks_.empty() ? cluster::StreamId{} : marks_.back().c;
  }
  std::size_t marks() const { return marks_.size(); }
  std::size_t own_appends() const { return own_.size(); }

 private:
  struct Mark {
    cluster::StreamId c;
    uint64_t t;
    uint64_t s;
  };
  struct OwnAppend {
    cluster::StreamId id;
    uint64_t from;
  };
  void Push(Mark m);

  std::deque<Mark> marks_;
  std::deque<OwnAppend> own_;
};

}  // namespace scenecrdt::server
