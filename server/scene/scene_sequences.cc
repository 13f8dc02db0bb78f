// SPDX-License-Identifier: Apache-2.0
// Owns numbering a scene's frames and placing a resume position, on either kind of log.
#include "scenecrdt/server/scene/scene_sequences.h"

#include "scenecrdt/protocol/session/sequence.h"

namespace scenecrdt::server {

uint64_t SceneSequences::Wire(uint64_t local) const {
  return marks_ ? marks_->Advertise(local) : wire_base_ | local;
}

std::optional<uint64_t> SceneSequences::ResumeFrom(uint64_t resume, uint64_t store_seq) const {
  if (marks_) {
    if (const auto at = marks_->ResumeFrom(resume); at && *at <= store_seq) return at;
    return std::nullopt;
  }
  if ((resume & ~session::kLocalSequenceMask) == wire_base_ &&
      session::LocalSequence(resume) <= store_seq) {
    return session::LocalSequence(resume);
  }
  return std::nullopt;
}

}  // namespace scenecrdt::server
