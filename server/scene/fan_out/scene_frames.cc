// SPDX-License-Identifier: Apache-2.0
// Owns SceneFrames' builds: each form of a snapshot or batch is built at most once per store
// sequence and shared (the zstd records from the envelope frames, the envelope frames from
// the export).
#include "scenecrdt/server/scene/fan_out/scene_frames.h"

namespace scenecrdt::server {

std::vector<SharedFrame> SceneFrames::Snapshot(bool raw, bool zstd) {
  using Form = SnapshotShare::Form;
  const uint64_t seq = store_.sequence();
  const Form form = raw ? Form::kRaw : (zstd ? Form::kZstd : Form::kEnvelope);
  std::vector<SharedFrame> frames = snapshots_.Alive(seq, form);
  if (!frames.empty()) {
    Metrics::Add(metrics_.snapshot_shares);
    return frames;
  }
  if (raw) {
    std::size_t messages = 0;
    frames = {builder_.Export(store_, 0, messages)};
    builder_.CountOut(messages);
    snapshots_.Keep(seq, Form::kRaw, frames);
    return frames;
  }
  if (zstd) frames = snapshots_.Alive(seq, Form::kEnvelope);
  if (frames.empty()) {
    frames = builder_.Envelope(store_, 0, sequences_.Wire(0), sequences_.Wire(seq),
                               /*is_state=*/true);
    snapshots_.Keep(seq, Form::kEnvelope, frames);
  }
  if (zstd) {
    frames = compression_.Records(frames);
    snapshots_.Keep(seq, Form::kZstd, frames);
  }
  return frames;
}

std::vector<SharedFrame> SceneFrames::Resume(uint64_t from, bool zstd) {
  const uint64_t seq = store_.sequence();
  std::vector<SharedFrame> frames = builder_.Envelope(store_, from, sequences_.Wire(from),
                                                      sequences_.Wire(seq), /*is_state=*/true);
  if (zstd) frames = compression_.Records(frames);
  return frames;
}

FanOutCache::Batch& SceneFrames::Export(uint64_t seq, uint64_t cursor) {
  bool created = false;
  FanOutCache::Batch& batch = cache_.At(seq, cursor, created);
  if (!batch.dcl) batch.dcl = builder_.Export(store_, cursor, batch.messages);
  return batch;
}

std::vector<SharedFrame> SceneFrames::Delivery(const MemberState& m, uint64_t seq, bool shared) {
  FanOutCache::Batch& batch = Export(seq, m.cursor);
  if (!batch.delivered) {
    batch.delivered = true;
    builder_.CountOut(batch.messages);
    Metrics::Add(shared ? metrics_.shared_frames : metrics_.catchups);
  }
  if (m.raw) return {batch.dcl};  // raw members get the export as it is
  if (batch.envelope.empty()) {
    batch.envelope = builder_.FromStream(*batch.dcl, sequences_.Wire(m.cursor),
                                         sequences_.Wire(seq), /*is_state=*/false);
  }
  if (!m.zstd) return batch.envelope;
  if (batch.zstd.empty()) batch.zstd = compression_.Records(batch.envelope);
  compression_.CountDelivery(batch.envelope, batch.zstd);
  return batch.zstd;
}

}  // namespace scenecrdt::server
