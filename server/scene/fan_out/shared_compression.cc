// SPDX-License-Identifier: Apache-2.0
// Owns the once-per-scene compression of shared frames into zstd records.
#include "scenecrdt/server/scene/fan_out/shared_compression.h"

namespace scenecrdt::server {

std::vector<SharedFrame> SharedCompression::Records(const std::vector<SharedFrame>& frames) {
  if (!encoder_) encoder_ = std::make_unique<session::ZstdRecordEncoder>();
  std::vector<SharedFrame> records;
  records.reserve(frames.size());
  for (const SharedFrame& f : frames) records.push_back(MakeShared(encoder_->Encode(*f)));
  Metrics::Add(metrics_.compression_shared_frames, frames.size());
  return records;
}

void SharedCompression::CountDelivery(const std::vector<SharedFrame>& frames,
                                      const std::vector<SharedFrame>& records) {
  std::size_t plain = 0;
  std::size_t wire = 0;
  for (const SharedFrame& f : frames) plain += f->size();
  for (const SharedFrame& r : records) wire += r->size();
  Metrics::Add(metrics_.compression_plain_bytes, plain);
  Metrics::Add(metrics_.compression_wire_bytes, wire);
}

}  // namespace scenecrdt::server
