// SPDX-License-Identifier: Apache-2.0
// Owns CrdtStore: the merged CRDT state of one scene, with exactly the @dcl/ecs 7.28 rules
// (docs/CRDT.md): one last-write-wins register per (component, entity), DELETE_ENTITY as a
// per-number max-version grow-only set, newer versions retiring older ones, APPEND_VALUE
// bounded grow-only sets. CrdtStore applies the merge rules and composes one-job parts
// (runtime/crdt/README.md): the Transform registers (decoded, dense, for the scene graph), the
// opaque registers (every other component, as bytes: a scene server relays every component),
// the append sets, the entity versions, and the change log behind snapshot / delta export.
// Admission (crdt_admission.h), local Lamport writes and the canonical state hash are
// functions of their own that the methods below forward to. Single-threaded.
#pragma once

#include <algorithm>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "scenecrdt/protocol/crdt_codec.h"
#include "scenecrdt/protocol/crdt_message.h"
#include "scenecrdt/protocol/entity_id.h"
#include "scenecrdt/protocol/result.h"
#include "scenecrdt/protocol/transform.h"
#include "scenecrdt/runtime/crdt/append_sets.h"
#include "scenecrdt/runtime/crdt/change_log.h"
#include "scenecrdt/runtime/crdt/entity_component_index.h"
#include "scenecrdt/runtime/crdt/entity_versions.h"
#include "scenecrdt/runtime/crdt/opaque_registers.h"
#include "scenecrdt/runtime/crdt/transform_registers.h"
#include "scenecrdt/runtime/crdt_admission.h"
#include "scenecrdt/runtime/crdt_types.h"
#include "scenecrdt/runtime/internal/prefetch.h"
#include "scenecrdt/runtime/sha256.h"

namespace scenecrdt::runtime {

class CrdtStore {
 public:
  explicit CrdtStore(StoreLimits limits = {});

  // ---- Remote messages ----
  // Network variants (types 5-7) merge as their plain forms, keyed by the entity they carry.
  // Unknown types are refused with kUnknownMessageType (and change nothing).
  MergeResult Merge(const protocol::CrdtMessage& m);
  // Decodes `bytes` and merges every message; on_result(message, result) sees each one.
  // A malformed stream stops at the fault (earlier messages stay merged) with its error.
  template <class OnResult>
  Result<void> MergeStream(std::span<const uint8_t> bytes, const protocol::DecodeOptions& options,
                           OnResult&& on_result);
  Result<MergeStats> MergeStream(std::span<const uint8_t> bytes,
                                 const protocol::DecodeOptions& options = {});

  // ---- Admission (docs/CRDT.md "Admission"): every rule deciding what may merge ----
  // CheckStatelessRules and AdmitChunk (crdt_admission.h), under the names callers use.
  static ErrorCode CheckMessage(const protocol::CrdtMessage& m, const StoreLimits& limits) {
    return CheckStatelessRules(m, limits);
  }
  static Admission Admit(std::span<const uint8_t> chunk, const StoreLimits& limits,
                         const AdmitOptions& options) {
    return AdmitChunk(chunk, limits, options);
  }
  // The state-dependent limits for a whole batch before any of it merges: the entities and
  // tombstones it could add (upper bounds) against max_entities / max_tombstones. kOk,
  // kTooManyEntities or kTooManyTombstones.
  ErrorCode CheckBatchLimits(std::span<const protocol::CrdtMessage> messages) const;
  // CheckBatchLimits, then (if kOk) each message merged in order without CheckMessage again;
  // on_result(message, result) sees each. Returns the batch refusal (nothing merged) or kOk.
  template <class OnResult>
  ErrorCode MergeAdmitted(const AdmittedBatch& batch, OnResult&& on_result);

  // ---- Local writes (a client, or a server-side script) ----
  // Lamport rule per key: timestamp = stored + 1 (1 for a new key; runtime/crdt/local_writes.h).
  // The merged message is appended to `out` (nothing is appended when the write changes
  // nothing, as @dcl/ecs does not echo unchanged data). Errors: kReservedEntity (delete of a number
  // < 512), kInvalidArgument (entity already deleted, timestamp exhausted), and the Merge refusals.
  Result<MergeOutcome> WriteTransform(EntityId entity, const protocol::Transform& t,
                                      std::vector<uint8_t>& out);
  Result<MergeOutcome> WriteComponent(EntityId entity, ComponentId component,
                                      std::span<const uint8_t> data, std::vector<uint8_t>& out);
  Result<MergeOutcome> WriteDeleteComponent(EntityId entity, ComponentId component,
                                            std::vector<uint8_t>& out);
  Result<MergeOutcome> WriteDeleteEntity(EntityId entity, std::vector<uint8_t>& out);
  Result<MergeOutcome> WriteAppend(EntityId entity, ComponentId component,
                                   std::span<const uint8_t> data, std::vector<uint8_t>& out);

  // ---- Reads ----
  using TransformRegister = runtime::TransformRegister;  // crdt_types.h
  // Every Transform register, densely packed, in no particular order.
  std::span<const TransformRegister> transform_registers() const { return transforms_.all(); }
  // The live Transform of `entity`, or nullptr (never set, deleted, or purged).
  const protocol::Transform* FindTransform(EntityId entity) const;
  // Any register (Transform included); nullopt when the key has none.
  std::optional<RegisterView> FindRegister(ComponentId component, EntityId entity) const;
  // Elements of an APPEND_VALUE set in ascending (timestamp, bytes) order; empty if none.
  std::span<const AppendElement> FindAppendSet(ComponentId component, EntityId entity) const;
  EntityState GetEntityState(EntityId entity) const;
  // True when (component, entity) has a value: a register with data (DELETE_COMPONENT did not
  // win) or an APPEND_VALUE set (docs/COMPONENTS.md).
  bool HasComponentValue(ComponentId component, EntityId entity) const;
  // Highest deleted version of `number`, or nullopt.
  std::optional<uint32_t> DeletedVersion(uint32_t number) const;

  // Every register / append set / tombstone, sorted by (component, entity) / number.
  std::vector<RegisterView> SortedRegisters() const;
  struct AppendSetView {
    ComponentId component;
    EntityId entity;
    std::span<const AppendElement> elements;
  };
  std::vector<AppendSetView> SortedAppendSets() const;
  struct Tombstone {
    uint32_t number;
    uint32_t version;
  };
  std::vector<Tombstone> SortedTombstones() const;

  std::size_t num_registers() const { return transforms_.size() + opaque_.size(); }
  std::size_t num_entities() const { return versions_.num_live(); }
  std::size_t num_tombstones() const { return versions_.num_deleted(); }

  // ---- Sequence, snapshot, delta ----
  // Store-local sequence: incremented by every state change. Not part of the CRDT state.
  uint64_t sequence() const { return log_.sequence(); }
  // Appends a DCL stream that rebuilds this state in an empty store: DELETE_ENTITYs for the
  // tombstones, PUTs, DELETE_COMPONENTs for the remove-set, APPEND_VALUEs. Returns the number
  // of messages.
  std::size_t ExportSnapshot(std::vector<uint8_t>& out) const { return ExportChangesSince(0, out); }
  // Appends what changed after sequence `since` (each changed register's current value, in
  // change order): applied on top of the state at `since` it yields the current state.
  std::size_t ExportChangesSince(uint64_t since, std::vector<uint8_t>& out) const;

  // ---- One entity (interest management: docs/INTEREST.md) ----
  // Appends every register (the Transform's included, deleted ones as DELETE_COMPONENT) and
  // append set of `entity` as a DCL stream: applied to any replica it yields this entity's
  // state. Returns the number of messages (0: the entity holds nothing).
  std::size_t ExportEntity(EntityId entity, std::vector<uint8_t>& out) const;
  // Drops every register and append set of `entity` without a tombstone (the entity left a
  // partial replica's view; it may come back). The change feeds note it like a purge. Returns
  // true when it held anything. Not a CRDT operation: only for replicas, never for a server.
  bool ForgetEntity(EntityId entity);
  // True when `entity` holds a register (the Transform's included) or an append set.
  bool HoldsEntity(EntityId entity) const { return HoldsAny(entity); }

  // ---- Canonical state hash (runtime/crdt/state_hash.h) ----
  // SHA-256 over a canonical serialisation (docs/CRDT.md): equal iff the states are equal,
  // whatever the arrival order or memory layout.
  Sha256::Digest StateHash() const;
  std::string StateHashHex() const { return Sha256::ToHex(StateHash()); }
  // The same content as readable text, one line per register ("R component entity timestamp
  // hex|deleted"), tombstone ("T number version") and append set ("A component entity
  // ts:hex..."), in canonical order: for diffs between diverging states.
  std::string CanonicalText() const;

  // ---- Transform change feed (for the Runtime) ----
  // When on, every entity whose Transform register changed (put, delete, purge) is appended
  // to transform_changes() (duplicates possible) until ClearTransformChanges().
  void set_track_transform_changes(bool on) { track_transform_changes_ = on; }
  std::span<const EntityId> transform_changes() const { return transform_changes_; }
  void ClearTransformChanges() { transform_changes_.clear(); }

  // ---- Component change feed (for the Runtime; docs/COMPONENTS.md) ----
  // When on, every state change of a component other than the Transform (a register put or
  // deleted, an APPEND_VALUE set grown, a purge by DELETE_ENTITY or a newer version) appends
  // one ComponentChange, with whether the key had a value just before, until
  // ClearComponentChanges(). Bound: one entry per state-changing merge between two clears.
  void set_track_component_changes(bool on) { track_component_changes_ = on; }
  std::span<const ComponentChange> component_changes() const { return component_changes_; }
  void ClearComponentChanges() { component_changes_.clear(); }

  const StoreLimits& limits() const { return limits_; }

 private:
  static constexpr uint32_t kNone = internal::TransformRegisters::kNone;

  // Merge after CheckMessage passed (against limits_ or stricter ones).
  MergeResult MergeChecked(const protocol::CrdtMessage& m);
  // The state-dependent limits of one component message; kOk when acceptable.
  ErrorCode CheckStateLimits(const protocol::CrdtMessage& m) const;
  // Tombstone filter and version retirement shared by every component message. Returns
  // false when the message must be dropped (entity deleted).
  bool AdmitEntity(EntityId entity);
  // True when `entity` holds a register or an append set.
  bool HoldsAny(EntityId entity) const {
    return transforms_.Find(entity) != kNone || components_.Contains(entity);
  }
  MergeResult MergeTransform(const protocol::CrdtMessage& m, bool is_delete);
  MergeResult MergeOpaque(const protocol::CrdtMessage& m, bool is_delete);
  MergeResult MergeAppend(const protocol::CrdtMessage& m);
  MergeResult MergeDeleteEntity(EntityId entity);
  void RaiseTombstone(uint32_t number, uint32_t version);
  void PurgeEntity(EntityId entity);
  RegisterView TransformView(uint32_t slot) const;
  // True when `c` is the log entry of its object's latest change (not stale).
  bool IsLatestChange(const internal::Change& c) const;
  void NoteTransformChange(EntityId entity) {
    if (track_transform_changes_) transform_changes_.push_back(entity);
  }
  // Call before the change: records whether the key has a value now. The Transform's changes
  // go to the Transform feed instead.
  void NoteComponentChange(ComponentId component, EntityId entity) {
    if (track_component_changes_ && component != protocol::kTransformComponentId) {
      component_changes_.push_back({entity, component, HasComponentValue(component, entity)});
    }
  }
  // Merges a stamped local write and appends it to `out` when it changed the state.
  Result<MergeOutcome> WriteLocal(const protocol::CrdtMessage& m, std::vector<uint8_t>& out);

  StoreLimits limits_;
  internal::TransformRegisters transforms_;
  internal::OpaqueRegisters opaque_;
  internal::AppendSets appends_;
  internal::EntityComponentIndex components_;  // entity -> its opaque registers, append sets
  internal::EntityVersions versions_;          // tombstones, live versions, live count
  internal::ChangeLog log_;                    // store sequence + ExportChangesSince's log
  bool track_transform_changes_ = false;
  std::vector<EntityId> transform_changes_;
  bool track_component_changes_ = false;
  std::vector<ComponentChange> component_changes_;
};

template <class OnResult>
ErrorCode CrdtStore::MergeAdmitted(const AdmittedBatch& batch, OnResult&& on_result) {
  if (const ErrorCode e = CheckBatchLimits(batch.messages()); e != ErrorCode::kOk) return e;
  // A batch checked under looser stateless limits than this store's goes through Merge.
  const bool checked = batch.CheckedAgainst(limits_);
  for (const protocol::CrdtMessage& m : batch.messages()) {
    on_result(m, checked ? MergeChecked(m) : Merge(m));
  }
  return ErrorCode::kOk;
}

template <class OnResult>
Result<void> CrdtStore::MergeStream(std::span<const uint8_t> bytes,
                                    const protocol::DecodeOptions& options, OnResult&& on_result) {
  // Software pipelining: a message is decoded and the slot index entry of its register
  // prefetched kWindow messages before it is merged, its register's cache line kRegisterAhead
  // messages before, so the random accesses of a large scene (its registers do not fit in L2)
  // overlap instead of stalling one after the other. Messages are decoded in place into the
  // window (no copies through the stack). Merge order is the stream order; the messages
  // before a fault are merged before the error returns, as DecodeStream would deliver them.
  constexpr std::size_t kWindow = 16;
  constexpr std::size_t kRegisterAhead = kWindow / 2;
  protocol::CrdtMessage window[kWindow];
  std::size_t head = 0, count = 0;
  auto merge_oldest = [&] {
    const protocol::CrdtMessage& m = window[head];
    on_result(m, Merge(m));
    head = (head + 1) % kWindow;
    --count;
  };
  Result<void> decoded;
  std::size_t pos = 0;
  constexpr std::size_t kInputAhead = 1024;  // bytes: ~15 Transform PUTs
  while (pos < bytes.size()) {
    if (count == kWindow) merge_oldest();
    // A stream read from memory (replay, bench) is sequential: ask for it ahead as well,
    // since the register prefetches compete with the hardware streamer.
    if (pos + kInputAhead < bytes.size())
      internal::PrefetchForRead(bytes.data() + pos + kInputAhead);
    protocol::CrdtMessage& m = window[(head + count) % kWindow];
    const std::span<const uint8_t> rest = bytes.subspan(pos);
    if (const std::size_t size = protocol::detail::TryDecodeCompletePut(rest, options, m)) {
      pos += size;
    } else {
      auto step = protocol::DecodeMessage(rest, options, pos);
      if (!step.has_value()) {
        decoded = step.error();
        break;
      }
      if (step->kind == protocol::DecodeStep::Kind::kNeedMore) {
        decoded = MakeError(ErrorCode::kTruncated, "the input ends inside a message", pos);
        break;
      }
      m = step->message;
      pos += step->size;
    }
    if (m.component == protocol::kTransformComponentId) transforms_.PrefetchSlot(m.entity);
    if (count >= kRegisterAhead) {
      const protocol::CrdtMessage& ahead = window[(head + count - kRegisterAhead) % kWindow];
      if (ahead.component == protocol::kTransformComponentId) {
        transforms_.PrefetchRegister(ahead.entity);
      }
    }
    ++count;
  }
  while (count > 0) merge_oldest();
  return decoded;
}

}  // namespace scenecrdt::runtime
