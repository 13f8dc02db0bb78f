// SPDX-License-Identifier: Apache-2.0
// Fuzz target for runtime::CrdtStore fed from the DCL decoder: the messages decoded before any
// fault are merged (some as local writes), then the CRDT laws must hold for any input:
// snapshot and ExportChangesSince(0) rebuild the same state hash in an empty store, a delta
// since a midpoint rebuilds it on top of the midpoint state, merging everything again changes
// nothing, and the reverse merge order reaches the same state.
//
// Capacity refusals (entity / tombstone limits) depend on arrival order, so the laws that
// compare two orders are checked only when no such refusal happened.
//
// Input: byte 0 picks the store limits (bit 0 small payload / append limits, bit 1 refuse
// non-finite Transforms, bit 2 small entity / tombstone limits, bit 3 reject unknown types,
// bit 4 odd-numbered messages become local writes, bit 5 six rounds of the messages with
// timestamps raised by the round); byte 1 picks the midpoint; the rest is a DCL CRDT stream.
#include <cstdint>
#include <cstdlib>
#include <span>
#include <vector>

#include "scenecrdt/protocol/crdt_codec.h"
#include "scenecrdt/protocol/crdt_message.h"
#include "scenecrdt/protocol/transform.h"
#include "scenecrdt/runtime/crdt_store.h"

using scenecrdt::protocol::AppendMessage;
using scenecrdt::protocol::CrdtMessage;
using scenecrdt::protocol::DecodeOptions;
using scenecrdt::protocol::DecodeStream;
using scenecrdt::protocol::MessageType;
using scenecrdt::runtime::CrdtStore;
using scenecrdt::runtime::MergeOutcome;
using scenecrdt::runtime::MergeResult;
using scenecrdt::runtime::StoreLimits;

namespace {

constexpr std::size_t kMaxInput = 1u << 14;

// One message with its own copy of the payload (decoded views point into the input).
struct OwnedMessage {
  CrdtMessage message;
  std::vector<uint8_t> data;
};

// Entity and tombstone limits make refusals depend on arrival order, so order-dependent
// checks only apply when neither order hit one.
bool IsCapacityRefusal(const MergeResult& r) {
  return r.outcome == MergeOutcome::kRefused &&
         (r.reason == scenecrdt::ErrorCode::kTooManyEntities ||
          r.reason == scenecrdt::ErrorCode::kTooManyTombstones);
}

// Merges a whole stream into `store`; it must decode completely (the store wrote it).
bool MergeAll(CrdtStore& store, std::span<const uint8_t> bytes, const DecodeOptions& options) {
  bool capacity = false;
  auto r = DecodeStream(
      bytes, options, [&](const CrdtMessage& m) { capacity |= IsCapacityRefusal(store.Merge(m)); });
  if (!r.has_value()) std::abort();
  return capacity;
}

// Performs `m` through the local write API; appends what the store emitted (the messages
// other replicas need) to `emitted`. Returns true on a capacity refusal.
bool WriteLocal(CrdtStore& store, const CrdtMessage& m, std::vector<uint8_t>& emitted) {
  scenecrdt::Result<MergeOutcome> r = MergeOutcome::kNoChange;
  switch (m.type) {
    case MessageType::kPutComponent:
    case MessageType::kPutComponentNetwork:
      r = store.WriteComponent(m.entity, m.component, m.data, emitted);
      break;
    case MessageType::kDeleteComponent:
    case MessageType::kDeleteComponentNetwork:
      r = store.WriteDeleteComponent(m.entity, m.component, emitted);
      break;
    case MessageType::kDeleteEntity:
    case MessageType::kDeleteEntityNetwork:
      r = store.WriteDeleteEntity(m.entity, emitted);
      break;
    case MessageType::kAppendValue:
      r = store.WriteAppend(m.entity, m.component, m.data, emitted);
      break;
    default:
      return IsCapacityRefusal(store.Merge(m));  // refused: unknown type
  }
  return !r.has_value() && (r.error().code == scenecrdt::ErrorCode::kTooManyEntities ||
                            r.error().code == scenecrdt::ErrorCode::kTooManyTombstones);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 2 || size > kMaxInput) return 0;
  const uint8_t control = data[0];
  StoreLimits limits;
  if (control & 1) {
    limits.max_payload_bytes = 48;
    limits.max_append_values = 3;
  }
  limits.refuse_non_finite_transforms = (control & 2) != 0;
  if (control & 4) {
    limits.max_entities = 3;
    limits.max_tombstones = 2;
  }
  DecodeOptions options;
  options.max_message_bytes = 4096;
  options.reject_unknown_types = (control & 8) != 0;
  const bool local_writes = (control & 16) != 0;
  const std::span<const uint8_t> input(data + 2, size - 2);

  // Tolerant decode: keep every message delivered before a fault.
  std::vector<OwnedMessage> messages;
  (void)DecodeStream(input, options, [&](const CrdtMessage& m) {
    OwnedMessage owned{m, std::vector<uint8_t>(m.data.begin(), m.data.end())};
    messages.push_back(std::move(owned));
  });
  for (OwnedMessage& o : messages) o.message.data = o.data;
  // Several rounds (timestamps raised by the round) give the change log enough entries to be
  // compacted, which happens from 1024 entries on.
  const std::size_t rounds = (control & 32) != 0 ? 6 : 1;
  const std::size_t total = messages.size() * rounds;
  const std::size_t midpoint = total * data[1] / 255;

  // The store under test. `effective` collects, in order, the messages that define its state:
  // the merged ones as they are, and for local writes the messages the store emitted.
  CrdtStore store(limits);
  std::vector<uint8_t> effective;
  std::vector<uint8_t> effective_before_midpoint;
  uint64_t midpoint_sequence = 0;
  bool capacity = false;
  for (std::size_t k = 0; k <= total; ++k) {
    if (k == midpoint) {
      midpoint_sequence = store.sequence();
      effective_before_midpoint = effective;
    }
    if (k == total) break;
    CrdtMessage m = messages[k % messages.size()].message;
    m.timestamp += static_cast<uint32_t>(k / messages.size());
    if (local_writes && (k & 1) != 0) {
      capacity |= WriteLocal(store, m, effective);
    } else {
      capacity |= IsCapacityRefusal(store.Merge(m));
      AppendMessage(m, effective);
    }
  }
  const auto hash = store.StateHash();

  // Snapshot and full delta rebuild the state in an empty store.
  std::vector<uint8_t> snapshot;
  store.ExportSnapshot(snapshot);
  CrdtStore from_snapshot(limits);
  (void)MergeAll(from_snapshot, snapshot, options);
  if (from_snapshot.StateHash() != hash) std::abort();
  std::vector<uint8_t> changes;
  store.ExportChangesSince(0, changes);
  if (changes != snapshot) {
    CrdtStore from_changes(limits);
    (void)MergeAll(from_changes, changes, options);
    if (from_changes.StateHash() != hash) std::abort();
  }

  // A delta since the midpoint, applied on top of the midpoint state, rebuilds the state.
  {
    std::vector<uint8_t> delta;
    store.ExportChangesSince(midpoint_sequence, delta);
    CrdtStore at_midpoint(limits);
    bool mid_capacity = MergeAll(at_midpoint, effective_before_midpoint, options);
    mid_capacity |= MergeAll(at_midpoint, delta, options);
    if (!capacity && !mid_capacity && at_midpoint.StateHash() != hash) std::abort();
  }

  // Idempotence: everything merged again changes nothing (a message refused for capacity may
  // fit now, so only without such refusals).
  const bool again_capacity = MergeAll(store, effective, options);
  if (!capacity && !again_capacity && store.StateHash() != hash) std::abort();

  // Commutativity: the reverse order reaches the same state (unless capacity refusals, which
  // depend on order, happened in either order).
  std::vector<OwnedMessage> effective_owned;
  if (!DecodeStream(std::span<const uint8_t>(effective), options, [&](const CrdtMessage& m) {
         effective_owned.push_back({m, std::vector<uint8_t>(m.data.begin(), m.data.end())});
       }).has_value()) {
    std::abort();
  }
  for (OwnedMessage& o : effective_owned) o.message.data = o.data;
  CrdtStore reversed(limits);
  bool reverse_capacity = false;
  for (auto it = effective_owned.rbegin(); it != effective_owned.rend(); ++it) {
    reverse_capacity |= IsCapacityRefusal(reversed.Merge(it->message));
  }
  if (!capacity && !reverse_capacity && reversed.StateHash() != hash) std::abort();
  return 0;
}
