// SPDX-License-Identifier: Apache-2.0
// Owns CrdtStore: the merged CRDT state of one scene, with exactly the @dcl/ecs 7.28 rules
// (docs/CRDT.md): one last-write-wins register per (component, entity), DELETE_ENTITY as a
// per-number max-version grow-only set, newer versions retiring older ones, APPEND_VALUE
// bounded grow-only sets. Also the admission rules (what may merge: one place for every
// caller), local Lamport writes, snapshot / delta export by store sequence, and a canonical
// state hash.
//
// Transforms (component 1, 44 bytes) live decoded in dense columns for the scene graph; other
// components are opaque bytes (a scene server relays every component). Single-threaded.
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
#include "scenecrdt/runtime/crdt_admission.h"
#include "scenecrdt/runtime/internal/flat_map.h"
#include "scenecrdt/runtime/internal/prefetch.h"
#include "scenecrdt/runtime/sha256.h"

namespace scenecrdt::runtime {

using protocol::ComponentId;
using protocol::EntityId;

// What a merge did. Values 1..7 are @dcl/ecs's ProcessMessageResultType.
enum class MergeOutcome : uint8_t {
  kUpdatedTimestamp = 1,   // newer timestamp (or first message for the key): state changed
  kOutdatedTimestamp = 2,  // older timestamp: state unchanged
  kNoChange = 3,           // equal timestamp and equal data (or DELETE over DELETE)
  kOutdatedData = 4,       // equal timestamp, current data wins the tie
  kUpdatedData = 5,        // equal timestamp, incoming data wins the tie: state changed
  kEntityWasDeleted = 6,   // dropped: the entity (number, <= version) is deleted
  kEntityDeleted = 7,      // DELETE_ENTITY applied: a new tombstone, components purged
  kRefused = 8,            // refused (MergeResult::reason says why): state unchanged
};
inline constexpr int kMergeOutcomeCount = 9;  // index = value
const char* MergeOutcomeName(MergeOutcome outcome);
// True when the merge changed the state (the message should be forwarded to other peers).
constexpr bool ChangedState(MergeOutcome o) {
  return o == MergeOutcome::kUpdatedTimestamp || o == MergeOutcome::kUpdatedData ||
         o == MergeOutcome::kEntityDeleted;
}

struct MergeResult {
  MergeOutcome outcome = MergeOutcome::kNoChange;
  ErrorCode reason = ErrorCode::kOk;  // set when outcome == kRefused
};

// @dcl/ecs EntityState, as getEntityState reports it.
enum class EntityState : uint8_t { kUnknown = 0, kUsedEntity = 1, kRemoved = 2, kReserved = 3 };
const char* EntityStateName(EntityState state);  // "Unknown", "UsedEntity", ...

// A read-only view of one register.
struct RegisterView {
  ComponentId component = 0;
  EntityId entity = 0;
  uint32_t timestamp = 0;
  bool has_data = false;                           // false: the remove-set (DELETE_COMPONENT won)
  uint64_t sequence = 0;                           // store sequence of the last change
  std::span<const uint8_t> data;                   // opaque components (empty for Transforms)
  const protocol::Transform* transform = nullptr;  // Transforms with data (decoded)
};

struct AppendElement {
  uint32_t timestamp = 0;
  std::vector<uint8_t> data;
  // Ordered by (timestamp, data bytes). Spelled out instead of a defaulted <=>: the libc++ 13
  // of the WebAssembly build (docs/WEB.md) has no <=> for std::vector.
  friend bool operator==(const AppendElement&, const AppendElement&) = default;
  friend bool operator<(const AppendElement& a, const AppendElement& b) {
    if (a.timestamp != b.timestamp) return a.timestamp < b.timestamp;
    return std::lexicographical_compare(a.data.begin(), a.data.end(), b.data.begin(), b.data.end());
  }
};

struct MergeStats {
  uint64_t messages = 0;
  uint64_t by_outcome[kMergeOutcomeCount] = {};
  uint64_t changed() const {
    return by_outcome[static_cast<int>(MergeOutcome::kUpdatedTimestamp)] +
           by_outcome[static_cast<int>(MergeOutcome::kUpdatedData)] +
           by_outcome[static_cast<int>(MergeOutcome::kEntityDeleted)];
  }
};

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
  // The stateless rules, which Merge also applies first: payload size, Transform size,
  // non-finite Transforms (when `limits` asks), DELETE_ENTITY of a reserved number, unknown
  // types. kOk when acceptable. Pure: any thread.
  static ErrorCode CheckMessage(const protocol::CrdtMessage& m, const StoreLimits& limits);
  // Decodes `chunk` once, strictly (unknown types rejected, options.max_message_bytes), into
  // a batch that owns a copy of it, and applies CheckMessage to every message as
  // options.mode says. Pure: any thread (a server calls it on the session's strand).
  static Admission Admit(std::span<const uint8_t> chunk, const StoreLimits& limits,
                         const AdmitOptions& options);
  // The state-dependent limits for a whole batch before any of it merges: the entities and
  // tombstones it could add (upper bounds) against max_entities / max_tombstones. kOk,
  // kTooManyEntities or kTooManyTombstones.
  ErrorCode CheckBatchLimits(std::span<const protocol::CrdtMessage> messages) const;
  // CheckBatchLimits, then (if kOk) each message merged in order without CheckMessage again;
  // on_result(message, result) sees each. Returns the batch refusal (nothing merged) or kOk.
  template <class OnResult>
  ErrorCode MergeAdmitted(const AdmittedBatch& batch, OnResult&& on_result);

  // ---- Local writes (a client, or a server-side script) ----
  // Lamport rule per key: timestamp = stored + 1 (1 for a new key). The merged message is
  // appended to `out` (nothing is appended when the write changes nothing, as @dcl/ecs does
  // not echo unchanged data). Errors: kReservedEntity (delete of a number < 512), kInvalidArgument
  // (entity already deleted, timestamp exhausted), and the Merge refusals.
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
  // One Transform register, decoded: exactly one cache line, so a merge touches one line.
  struct alignas(64) TransformRegister {
    protocol::Transform value;  // identity while has_data == 0
    EntityId entity;
    uint32_t timestamp;
    uint32_t has_data;  // 0: the remove-set (DELETE_COMPONENT won)
    uint64_t sequence;  // store sequence of the last change
  };
  static_assert(sizeof(TransformRegister) == 64, "one cache line per Transform register");
  // Every Transform register, densely packed, in no particular order.
  std::span<const TransformRegister> transform_registers() const { return tr_; }
  // The live Transform of `entity`, or nullptr (never set, deleted, or purged).
  const protocol::Transform* FindTransform(EntityId entity) const;
  // Any register (Transform included); nullopt when the key has none.
  std::optional<RegisterView> FindRegister(ComponentId component, EntityId entity) const;
  // Elements of an APPEND_VALUE set in ascending (timestamp, bytes) order; empty if none.
  std::span<const AppendElement> FindAppendSet(ComponentId component, EntityId entity) const;
  EntityState GetEntityState(EntityId entity) const;
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

  std::size_t num_registers() const { return tr_.size() + regs_.size(); }
  std::size_t num_entities() const { return live_entity_count_; }
  std::size_t num_tombstones() const { return tombstones_.size(); }

  // ---- Sequence, snapshot, delta ----
  // Store-local sequence: incremented by every state change. Not part of the CRDT state.
  uint64_t sequence() const { return sequence_; }
  // Appends a DCL stream that rebuilds this state in an empty store: DELETE_ENTITYs for the
  // tombstones, PUTs, DELETE_COMPONENTs for the remove-set, APPEND_VALUEs. Returns the number
  // of messages.
  std::size_t ExportSnapshot(std::vector<uint8_t>& out) const { return ExportChangesSince(0, out); }
  // Appends what changed after sequence `since` (each changed register's current value, in
  // change order): applied on top of the state at `since` it yields the current state.
  std::size_t ExportChangesSince(uint64_t since, std::vector<uint8_t>& out) const;

  // ---- Canonical state hash ----
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

  const StoreLimits& limits() const { return limits_; }

 private:
  struct OpaqueRegister {
    ComponentId component;
    EntityId entity;
    uint32_t timestamp;
    bool has_data;
    uint64_t sequence;
    std::vector<uint8_t> data;
  };
  struct AppendSet {
    ComponentId component;
    EntityId entity;
    uint64_t sequence;
    std::vector<AppendElement> elements;  // ascending
  };
  struct EntityExtras {
    EntityId entity;
    std::vector<ComponentId> components;  // opaque registers
    std::vector<ComponentId> appends;     // append sets
  };
  struct TombstoneValue {
    uint32_t version;
    uint64_t sequence;
  };
  enum class LogKind : uint8_t { kTransform, kOpaque, kAppend, kTombstone };
  struct LogEntry {
    uint64_t sequence;
    ComponentId component;  // kOpaque, kAppend
    EntityId entity;        // kTransform, kOpaque, kAppend; the number for kTombstone
    LogKind kind;
  };
  static constexpr uint32_t kNone = 0xFFFFFFFFu;

  static uint64_t Key(ComponentId c, EntityId e) { return (uint64_t{c} << 32) | e; }

  // Merge after CheckMessage passed (against limits_ or stricter ones).
  MergeResult MergeChecked(const protocol::CrdtMessage& m);
  // The state-dependent limits of one component message; kOk when acceptable.
  ErrorCode CheckStateLimits(const protocol::CrdtMessage& m) const;
  // Tombstone filter and version retirement shared by every component message. Returns
  // false when the message must be dropped (entity deleted).
  bool AdmitEntity(EntityId entity);
  bool WouldCreateEntity(EntityId entity) const;
  RegisterView TransformView(uint32_t slot) const;
  uint32_t FindTransformSlot(EntityId entity) const;
  void SetTransformSlot(EntityId entity, uint32_t slot);
  void EraseTransformSlot(EntityId entity);
  MergeResult MergeTransform(const protocol::CrdtMessage& m, bool is_delete);
  MergeResult MergeOpaque(const protocol::CrdtMessage& m, bool is_delete);
  MergeResult MergeAppend(const protocol::CrdtMessage& m);
  MergeResult MergeDeleteEntity(EntityId entity);
  void RaiseTombstone(uint32_t number, uint32_t version);
  void PurgeEntity(EntityId entity);
  void NoteEntityGained(EntityId entity);
  void NoteEntityLost(EntityId entity);
  EntityExtras& ExtrasFor(EntityId entity);
  void RemoveExtrasIfEmpty(EntityId entity);
  uint64_t NextSequence(LogKind kind, ComponentId component, EntityId entity);
  // True when `e` is the change log entry of its object's latest change (not stale).
  bool IsLatestChange(const LogEntry& e) const;
  // Drops stale log entries (one entry per live object remains).
  void CompactLog();
  // Hints for MergeStream's pipeline: first the slot index entry of the register `m` will
  // touch, some messages later (when that entry has arrived) the register's cache line.
  void PrefetchSlotIndex(const protocol::CrdtMessage& m) const {
    const uint32_t number = protocol::EntityNumber(m.entity);
    if (m.component == protocol::kTransformComponentId && number < tr_slot_by_number_.size()) {
      internal::PrefetchForRead(&tr_slot_by_number_[number]);
    }
  }
  void PrefetchRegister(const protocol::CrdtMessage& m) const {
    const uint32_t number = protocol::EntityNumber(m.entity);
    if (m.component != protocol::kTransformComponentId || number >= tr_slot_by_number_.size() ||
        protocol::IsReservedEntityNumber(number)) {
      return;
    }
    const uint32_t slot = tr_slot_by_number_[number];
    if (slot < tr_.size()) internal::PrefetchForWrite(&tr_[slot]);
  }
  void NoteTransformChange(EntityId entity) {
    if (track_transform_changes_) transform_changes_.push_back(entity);
  }
  Result<MergeOutcome> WriteLocal(const protocol::CrdtMessage& m, std::vector<uint8_t>& out);
  uint32_t StoredTimestamp(ComponentId component, EntityId entity, bool* exists) const;

  StoreLimits limits_;

  // Transform registers (swap-remove keeps them dense). Slot lookup: numbers >= 512 have at
  // most one live version (newer versions retire older ones), so a 64 Ki array indexed by
  // number finds the slot in one access; reserved numbers may hold several versions and use
  // a hash map keyed by the full id.
  std::vector<TransformRegister> tr_;
  std::vector<uint32_t> tr_slot_by_number_;                 // number -> slot (numbers >= 512)
  internal::FlatMap<uint32_t, uint32_t> tr_slot_reserved_;  // entity -> slot (numbers < 512)

  // Other components.
  std::vector<OpaqueRegister> regs_;
  internal::FlatMap<uint64_t, uint32_t> reg_slot_;  // (component, entity) -> index
  std::vector<AppendSet> appends_;
  internal::FlatMap<uint64_t, uint32_t> append_slot_;
  std::vector<EntityExtras> extras_;
  internal::FlatMap<uint32_t, uint32_t> extras_slot_;  // entity -> index

  // Entity bookkeeping.
  internal::FlatMap<uint32_t, TombstoneValue> tombstones_;  // number -> max deleted version
  internal::FlatMap<uint32_t, uint32_t> live_version_;      // number (>= 512) -> live version
  std::size_t live_entity_count_ = 0;

  // Change log for ExportChangesSince: entries in sequence order; stale entries (whose object
  // changed again or vanished) are skipped on export and dropped by compaction.
  static constexpr std::size_t kMinCompactLog = 1024;
  uint64_t sequence_ = 0;
  std::vector<LogEntry> log_;
  std::size_t compact_at_ = kMinCompactLog;  // compact when the log reaches this size

  bool track_transform_changes_ = false;
  std::vector<EntityId> transform_changes_;
};

inline ErrorCode CrdtStore::CheckMessage(const protocol::CrdtMessage& m,
                                         const StoreLimits& limits) {
  using protocol::MessageType;
  switch (m.type) {
    case MessageType::kPutComponent:
    case MessageType::kPutComponentNetwork:
      if (m.data.size() > limits.max_payload_bytes) return ErrorCode::kPayloadTooLarge;
      if (m.component == protocol::kTransformComponentId) {
        if (m.data.size() != protocol::Transform::kSize) return ErrorCode::kBadTransformSize;
        if (limits.refuse_non_finite_transforms &&
            !protocol::IsFinite(
                protocol::LoadTransform(m.data.first<protocol::Transform::kSize>()))) {
          return ErrorCode::kNonFiniteTransform;
        }
      }
      return ErrorCode::kOk;
    case MessageType::kAppendValue:
      return m.data.size() > limits.max_payload_bytes ? ErrorCode::kPayloadTooLarge
                                                      : ErrorCode::kOk;
    case MessageType::kDeleteComponent:
    case MessageType::kDeleteComponentNetwork:
      return ErrorCode::kOk;
    case MessageType::kDeleteEntity:
    case MessageType::kDeleteEntityNetwork:
      // @dcl/ecs wipes a reserved entity's data without tombstoning it, which does not
      // commute with later messages for it: refused instead (docs/CRDT.md).
      return protocol::IsReservedEntity(m.entity) ? ErrorCode::kReservedEntity : ErrorCode::kOk;
    default:
      return ErrorCode::kUnknownMessageType;
  }
}

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
    PrefetchSlotIndex(m);
    if (count >= kRegisterAhead) {
      PrefetchRegister(window[(head + count - kRegisterAhead) % kWindow]);
    }
    ++count;
  }
  while (count > 0) merge_oldest();
  return decoded;
}

}  // namespace scenecrdt::runtime
