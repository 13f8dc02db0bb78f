// SPDX-License-Identifier: Apache-2.0
// Owns FrameBuilder: how a scene's changes become what its members receive (docs/SERVER.md
// "Fan-out"): the changes after a store sequence, exported once from the store as one plain
// DCL chunk (what raw-DCL members receive as it is, what a commit writes), and envelope Crdt
// frames around such an export, cut at message boundaries into chunks of at most
// state_chunk_bytes (the boundaries read from the messages' length headers: the export is
// this server's own encoding, never decoded again). Used on the scene's strand only; the
// buffer of Envelope's own export is reused and dropped when a large export left it above
// 4 x state_chunk_bytes.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "scenecrdt/runtime/crdt_store.h"
#include "scenecrdt/server/context.h"

namespace scenecrdt::server {

class FrameBuilder {
 public:
  FrameBuilder(Metrics& metrics, uint32_t chunk_bytes)
      : metrics_(metrics), chunk_bytes_(chunk_bytes) {}

  // The changes of `store` after store sequence `from` as envelope frames. Every frame but the
  // last advertises scene sequence `from_wire` (a client cut off mid-way resumes from there),
  // the last `to_wire`. State frames (`is_state`: a snapshot or resume delta) count down the
  // frames still to come in frame_sequence (0: the last one).
  std::vector<SharedFrame> Envelope(const runtime::CrdtStore& store, uint64_t from,
                                    uint64_t from_wire, uint64_t to_wire, bool is_state);
  // The same for a DCL stream the caller holds: an Export, or an interest member's filtered
  // changes (member_view.h). It must be this server's encoding (well-formed: the cuts follow
  // the length headers). An empty stream gives one empty frame.
  std::vector<SharedFrame> FromStream(std::span<const uint8_t> dcl, uint64_t from_wire,
                                      uint64_t to_wire, bool is_state) const;
  // The changes after `from` as one plain DCL chunk: what raw-DCL members receive as it is,
  // what FromStream wraps for envelope members and what a commit writes (Scene shares one
  // per cursor and store sequence through FanOutCache).
  // `messages`: how many it holds (the caller counts them out once, when members get them).
  SharedFrame Export(const runtime::CrdtStore& store, uint64_t from, std::size_t& messages) const;
  // Counts `messages` handed to sessions (scenecrdt_messages_out_total).
  void CountOut(std::size_t messages) { Metrics::Add(metrics_.messages_out, messages); }

 private:
  Metrics& metrics_;
  const uint32_t chunk_bytes_;
  std::vector<uint8_t> scratch_;
};

}  // namespace scenecrdt::server
