// SPDX-License-Identifier: Apache-2.0
// Owns the replica client's outgoing writes (internal: not installed): the unsent buffer (the
// latest write per entity: a Transform, a Transform deletion or an entity deletion), held
// writes stamped on top of the first snapshot and offline writes re-stamped over newer state,
// Crdt frames kept until acknowledged with their frame sequences, frames cut under the
// server's frame limit (docs/PROTOCOL.md section 2, "Frame limit"), and frames refused as
// rate_limited going back into the buffer while Flush pauses. It stamps into the client's
// replica and decides what to send; the client's connection side transmits (a hook).
#pragma once

#include <chrono>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "scenecrdt/client/client.h"
#include "scenecrdt/protocol/result.h"
#include "scenecrdt/runtime/runtime.h"

namespace scenecrdt::client::internal {

class Outbox {
 public:
  using TimePoint = std::chrono::steady_clock::time_point;
  enum class WriteKind : uint8_t { kTransform, kDeleteTransform, kDeleteEntity };
  // The latest local write of one entity that is not in a frame yet.
  struct UnsentWrite {
    WriteKind kind = WriteKind::kTransform;
    protocol::Transform value;  // kTransform
    uint32_t timestamp = 0;     // the local stamp (when stamped; 0 for kDeleteEntity)
    bool stamped = false;       // false: held before the first snapshot
  };
  // A Crdt frame kept until a cumulative Ack covers it.
  struct PendingFrame {
    uint64_t frame_sequence = 0;
    std::vector<uint8_t> dcl;
    bool owned = false;    // built from the unsent buffer (not SendCrdt)
    uint64_t sent_on = 0;  // connection it was last handed to (0: never)
  };
  struct Hooks {
    // Hands one frame to the current connection; false when it cannot (no connection, or the
    // connection is ending: the next one sends every pending frame again, in order).
    std::function<bool(PendingFrame&)> transmit;
    std::function<void(const std::string&)> log;
    std::function<TimePoint()> now;
  };

  // `replica` and `stats` outlive the outbox (members of the same client, declared before it).
  Outbox(const ClientOptions& options, runtime::Runtime& replica, ClientStats& stats, Hooks hooks);

  // A local write. Before the first snapshot (`state_ready` false) it is held unstamped;
  // otherwise it is merged into the replica with a fresh stamp and buffered until Flush.
  // `synced` false counts it as an offline write.
  Result<void> Write(protocol::EntityId entity, const UnsentWrite& write, bool state_ready,
                     bool synced);
  // After a snapshot or resume: stamps the held writes, re-stamps the offline ones the state
  // overtook, drops the ones the replica refuses now.
  void StampUnsent();
  // Sends the unsent buffer in frames (when `synced`, not paused after a rate_limited refusal,
  // and under the unacked-bytes bound). Returns the last frame sequence sent (0: none).
  uint64_t Flush(bool synced);
  // Sends `dcl` as it is (cut at message boundaries under the server's frame limit), merged
  // into the replica too; transmitted now when `synced`. Returns its last frame sequence, or 0
  // when refused here (the unacked-bytes bound, or a stream that cannot be cut).
  uint64_t SendCrdt(std::span<const uint8_t> dcl, bool synced);

  // A cumulative Ack: frames at or below it are forgotten; the rate-limit pause count resets.
  void OnAck(uint64_t frame_sequence);
  // The server's frame limit, from its Welcome.
  void OnWelcome(uint32_t server_frame_bytes);
  // Joined: every pending frame is transmitted again, in order; false when the connection
  // ended meanwhile (the next one resends). Then the unsent writes are stamped and flushed.
  bool ResendPending();
  // Merges every pending frame into `replica` (a replica rebuilt from a new snapshot shows our
  // unacknowledged writes, as the old one did).
  void ReapplyPending(runtime::Runtime& replica) const;
  // A non-fatal refusal of frame `frame_sequence`: the frame is forgotten; a rate_limited one
  // of ours goes back into the unsent buffer (unless a newer write of an entity is there) and
  // Flush pauses. Returns true when it was requeued that way.
  bool OnFrameRefused(uint64_t frame_sequence, bool rate_limited);
  // One own write refused by the scene's authority: its entity's unsent write is dropped.
  void DropUnsent(protocol::EntityId entity) { unsent_.erase(entity); }
  void ResumeFlush() { flush_paused_until_.reset(); }

  uint64_t acked() const { return acked_; }
  uint64_t last_frame_sequence() const { return next_frame_sequence_ - 1; }
  std::size_t pending_frames() const { return pending_.size(); }
  std::size_t unsent_writes() const { return unsent_.size(); }
  uint32_t server_frame_bytes() const { return server_frame_bytes_; }

 private:
  // Merges `w` into the replica with a fresh stamp; the message goes to scratch_.
  Result<runtime::MergeOutcome> StampLocally(protocol::EntityId entity, const UnsentWrite& w);
  // True when the replica still holds exactly what the stamped write `w` wrote.
  bool StillOurs(protocol::EntityId entity, const UnsentWrite& w) const;
  void Requeue(const PendingFrame& frame);
  void AddPending(std::vector<uint8_t> dcl, bool owned);
  void Log(const std::string& line) const;

  const ClientOptions& options_;
  runtime::Runtime& replica_;
  ClientStats& stats_;
  Hooks hooks_;
  std::map<protocol::EntityId, UnsentWrite> unsent_;
  std::deque<PendingFrame> pending_;  // unacked, ascending frame sequence
  std::size_t pending_bytes_ = 0;
  uint64_t next_frame_sequence_ = 1;
  uint64_t acked_ = 0;
  // The server's frame limit (the latest Welcome's; the documented default before one).
  uint32_t server_frame_bytes_;
  bool frame_limit_logged_ = false;              // Flush said that no write fits it
  std::optional<TimePoint> flush_paused_until_;  // after a rate_limited refusal
  uint32_t rate_limit_pauses_ = 0;
  std::vector<uint8_t> scratch_;
};

}  // namespace scenecrdt::client::internal
