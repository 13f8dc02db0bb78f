// SPDX-License-Identifier: Apache-2.0
// Owns the layout of scene sequences on the wire (docs/PROTOCOL.md section 2 "Sequences"):
// (server incarnation << 40) | store sequence. The server builds them; clients keep them as
// resume points and print their halves. A resume position from another incarnation (a
// restart) is recognised and answered with a full snapshot.
#pragma once

#include <cstdint>

namespace scenecrdt::session {

// Bits of the store sequence; the incarnation sits above them.
inline constexpr int kSequenceShift = 40;
inline constexpr uint64_t kLocalSequenceMask = (uint64_t{1} << kSequenceShift) - 1;

// The wire sequence of store sequence `local` (< 2^40) in server incarnation `incarnation`.
constexpr uint64_t MakeSceneSequence(uint64_t incarnation, uint64_t local) {
  return (incarnation << kSequenceShift) | (local & kLocalSequenceMask);
}
constexpr uint64_t SequenceIncarnation(uint64_t scene_sequence) {
  return scene_sequence >> kSequenceShift;
}
constexpr uint64_t LocalSequence(uint64_t scene_sequence) {
  return scene_sequence & kLocalSequenceMask;
}

}  // namespace scenecrdt::session
