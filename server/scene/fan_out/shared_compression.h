// SPDX-License-Identifier: Apache-2.0
// Owns SharedCompression: a scene's zstd-frames encoder (docs/SERVER.md "Compression"). The
// scene builds each frame once; for members that read zstd frames it is compressed once more
// into a self-contained record (protocol/session/zstd_records.h) and the same record bytes
// go to every such member: the cost is per scene and frame, not per member. Runs on the
// scene's strand; memory: one compression context per scene, created on first use.
#pragma once

#include <memory>
#include <vector>

#include "scenecrdt/protocol/session/zstd_records.h"
#include "scenecrdt/server/context.h"

namespace scenecrdt::server {

class SharedCompression {
 public:
  explicit SharedCompression(Metrics& metrics) : metrics_(metrics) {}

  // The records of `frames`, one per frame, in order.
  std::vector<SharedFrame> Records(const std::vector<SharedFrame>& frames);
  // Counts one member's delivery of `records` standing for `frames` (the compression
  // counters count what each member receives, as for the zstd stream).
  void CountDelivery(const std::vector<SharedFrame>& frames,
                     const std::vector<SharedFrame>& records);
  // Bytes held by the compression context (0 before the first record).
  std::size_t memory_bytes() const { return encoder_ ? encoder_->memory_bytes() : 0; }

 private:
  Metrics& metrics_;
  std::unique_ptr<session::ZstdRecordEncoder> encoder_;
};

}  // namespace scenecrdt::server
