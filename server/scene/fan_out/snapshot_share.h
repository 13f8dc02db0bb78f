// SPDX-License-Identifier: Apache-2.0
// Owns SnapshotShare: joiners at one store sequence share one set of snapshot frames (docs/
// SERVER.md "Memory bounds"). It keeps weak references only, one set per form (envelope
// frames, their zstd records, the raw-DCL chunk): a set is shared while every frame of it is
// still alive somewhere (a member's queue), and nothing is kept once sent. A new store
// sequence forgets the sets of the older one. Used on the scene's strand only.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <vector>

#include "scenecrdt/server/context.h"

namespace scenecrdt::server {

class SnapshotShare {
 public:
  enum class Form : uint8_t { kEnvelope, kZstd, kRaw };

  // The frames of `form` handed out at store sequence `seq` when every one of them is still
  // alive; empty otherwise.
  std::vector<SharedFrame> Alive(uint64_t seq, Form form);
  // `frames` were handed out at `seq` as `form`.
  void Keep(uint64_t seq, Form form, const std::vector<SharedFrame>& frames);

 private:
  void At(uint64_t seq);

  uint64_t sequence_ = ~uint64_t{0};
  std::array<std::vector<std::weak_ptr<const std::vector<uint8_t>>>, 3> sets_;
};

}  // namespace scenecrdt::server
