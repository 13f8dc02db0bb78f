// SPDX-License-Identifier: Apache-2.0
// Owns StreamId (a Redis stream entry ID, "ms-seq") and the scene sequence derived from it: the
// u64 a client resumes from, the same on every node (docs/CLUSTER.md "Scene sequence").
#pragma once

#include <compare>
#include <cstdint>
#include <string>
#include <string_view>

#include "scenecrdt/protocol/result.h"

namespace scenecrdt::cluster {

// A stream entry ID. Redis orders them by (ms, seq); 0-0 is "before every entry".
struct StreamId {
  uint64_t ms = 0;   // milliseconds part (Redis's clock when the entry was added)
  uint64_t seq = 0;  // sequence part within that millisecond

  friend auto operator<=>(const StreamId&, const StreamId&) = default;
  bool is_zero() const { return ms == 0 && seq == 0; }
  // The smallest ID after this one (the maximum ID is its own successor).
  StreamId Next() const;
  // "ms-seq", as Redis writes it.
  std::string ToString() const;
};

// Strict parse of "ms-seq": two unsigned 64-bit decimals without sign, spaces or leading zeros.
// Errors: kParse.
Result<StreamId> ParseStreamId(std::string_view text);

// Scene sequence = (ms << kSceneSequenceSeqBits) | seq. Exact and strictly increasing while seq
// < 2^22 (about 4 million entries of one scene in one millisecond) and ms < 2^42 (year 2109).
// Beyond, it saturates: seq to 2^22 - 1, ms to 2^42 - 1. The mapping is then only
// non-decreasing and maps back to an ID at or before the entry, so a resume from it re-sends
// a little more than needed, never less.
inline constexpr int kSceneSequenceSeqBits = 22;
inline constexpr uint64_t kSceneSequenceMaxSeq = (uint64_t{1} << kSceneSequenceSeqBits) - 1;
inline constexpr uint64_t kSceneSequenceMaxMs = (uint64_t{1} << (64 - kSceneSequenceSeqBits)) - 1;

uint64_t SceneSequenceFromStreamId(StreamId id);
// The inverse: the smallest stream ID whose scene sequence is `sequence`, so
// StreamIdFromSceneSequence(SceneSequenceFromStreamId(id)) <= id always, == id when exact.
StreamId StreamIdFromSceneSequence(uint64_t sequence);
// True when the ID maps without saturation (SceneSequenceFromStreamId is exact for it).
constexpr bool IsExactSceneSequence(StreamId id) {
  return id.seq <= kSceneSequenceMaxSeq && id.ms <= kSceneSequenceMaxMs;
}

}  // namespace scenecrdt::cluster
