// SPDX-License-Identifier: Apache-2.0
// Owns building a scene's envelope frames and raw-DCL chunks from one export.
#include "scenecrdt/server/scene/fan_out/frame_builder.h"

#include <span>

#include "scenecrdt/protocol/crdt_codec.h"
#include "scenecrdt/protocol/session/envelope.h"

namespace scenecrdt::server {

namespace {

// The bytes the message at `p` takes: its declared length, except the legacy
// DELETE_ENTITY_NETWORK form, which declares 12 and takes its fixed 16 (crdt_message.h).
std::size_t WireSize(const uint8_t* p) {
  const uint32_t declared = protocol::LoadU32Le(p + protocol::kLengthOffset);
  const auto type =
      static_cast<protocol::MessageType>(protocol::LoadU32Le(p + protocol::kTypeOffset));
  if (type == protocol::MessageType::kDeleteEntityNetwork &&
      declared == protocol::kLegacyDeleteEntityNetworkDeclaredSize) {
    return protocol::BaseSize(type);
  }
  return declared;
}

}  // namespace

SharedFrame FrameBuilder::Export(const runtime::CrdtStore& store, uint64_t from,
                                 std::size_t& messages) const {
  std::vector<uint8_t> dcl;
  messages = store.ExportChangesSince(from, dcl);
  return MakeShared(std::move(dcl));
}

std::vector<SharedFrame> FrameBuilder::Envelope(const runtime::CrdtStore& store, uint64_t from,
                                                uint64_t from_wire, uint64_t to_wire,
                                                bool is_state) {
  scratch_.clear();
  const std::size_t messages = store.ExportChangesSince(from, scratch_);
  Metrics::Add(metrics_.messages_out, messages);
  std::vector<SharedFrame> frames = FromStream(scratch_, from_wire, to_wire, is_state);
  // A large export's buffer is not kept for the scene's lifetime.
  if (scratch_.capacity() > 4 * std::size_t{chunk_bytes_}) std::vector<uint8_t>().swap(scratch_);
  return frames;
}

std::vector<SharedFrame> FrameBuilder::FromStream(std::span<const uint8_t> dcl, uint64_t from_wire,
                                                  uint64_t to_wire, bool is_state) const {
  // Cut at message boundaries into chunks of at most chunk_bytes_ (one chunk unless big).
  const std::size_t chunk_bytes = chunk_bytes_;
  std::vector<std::span<const uint8_t>> chunks;
  if (dcl.size() <= chunk_bytes) {
    chunks.emplace_back(dcl);
  } else {
    std::size_t start = 0;
    std::size_t pos = 0;
    while (pos + protocol::kHeaderSize <= dcl.size()) {
      const std::size_t size = WireSize(dcl.data() + pos);
      if (size < protocol::kHeaderSize || size > dcl.size() - pos) break;  // not ours: no cut
      if (pos + size - start > chunk_bytes && pos > start) {
        chunks.emplace_back(dcl.data() + start, pos - start);
        start = pos;
      }
      pos += size;
    }
    chunks.emplace_back(dcl.data() + start, dcl.size() - start);
  }
  std::vector<SharedFrame> frames;
  frames.reserve(chunks.size());
  for (std::size_t i = 0; i < chunks.size(); ++i) {
    const bool last = i + 1 == chunks.size();
    session::Crdt crdt;
    crdt.frame_sequence = is_state ? chunks.size() - 1 - i : 0;
    // Only the last chunk reaches the end: a client cut off mid-way resumes from `from`.
    crdt.scene_sequence = last ? to_wire : from_wire;
    crdt.is_state = is_state;
    crdt.data = chunks[i];
    frames.push_back(MakeShared(session::BuildFrame(crdt)));
  }
  return frames;
}

}  // namespace scenecrdt::server
