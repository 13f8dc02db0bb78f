// SPDX-License-Identifier: Apache-2.0
// Owns CrdtStore: the merge rules over its parts (docs/CRDT.md), the state-dependent limits,
// entity retirement and purge, reads, and the snapshot / delta export from the change log.
#include "scenecrdt/runtime/crdt_store.h"

#include <algorithm>

#include "scenecrdt/runtime/crdt/local_writes.h"
#include "scenecrdt/runtime/crdt/lww_rule.h"
#include "scenecrdt/runtime/crdt/state_hash.h"

namespace scenecrdt::runtime {

using internal::ChangeKind;
using protocol::CrdtMessage;
using protocol::MessageType;
using protocol::Transform;

namespace {

bool IsDeleteType(MessageType t) {
  return t == MessageType::kDeleteComponent || t == MessageType::kDeleteComponentNetwork;
}

}  // namespace

CrdtStore::CrdtStore(StoreLimits limits) : limits_(limits) {}

// ---------------------------------------------------------------------------------------------
// Merge

MergeResult CrdtStore::Merge(const CrdtMessage& m) {
  if (const ErrorCode e = CheckMessage(m, limits_); e != ErrorCode::kOk) {
    return {MergeOutcome::kRefused, e};
  }
  return MergeChecked(m);
}

MergeResult CrdtStore::MergeChecked(const CrdtMessage& m) {
  if (log_.NeedsCompaction()) {
    log_.Compact([this](const internal::Change& c) { return IsLatestChange(c); });
  }
  switch (m.type) {
    case MessageType::kPutComponent:
    case MessageType::kPutComponentNetwork:
    case MessageType::kDeleteComponent:
    case MessageType::kDeleteComponentNetwork: {
      if (const ErrorCode e = CheckStateLimits(m); e != ErrorCode::kOk) {
        return {MergeOutcome::kRefused, e};
      }
      const bool is_delete = IsDeleteType(m.type);
      if (m.component == protocol::kTransformComponentId) return MergeTransform(m, is_delete);
      return MergeOpaque(m, is_delete);
    }
    case MessageType::kAppendValue: {
      if (const ErrorCode e = CheckStateLimits(m); e != ErrorCode::kOk) {
        return {MergeOutcome::kRefused, e};
      }
      return MergeAppend(m);
    }
    case MessageType::kDeleteEntity:
    case MessageType::kDeleteEntityNetwork:
      return MergeDeleteEntity(m.entity);
    default:
      return {MergeOutcome::kRefused, ErrorCode::kUnknownMessageType};
  }
}

Result<MergeStats> CrdtStore::MergeStream(std::span<const uint8_t> bytes,
                                          const protocol::DecodeOptions& options) {
  MergeStats stats;
  auto r = MergeStream(bytes, options, [&](const CrdtMessage&, const MergeResult& result) {
    ++stats.messages;
    ++stats.by_outcome[static_cast<int>(result.outcome)];
  });
  if (!r.has_value()) return r.error();
  return stats;
}

ErrorCode CrdtStore::CheckStateLimits(const CrdtMessage& m) const {
  // A new entity, or a new tombstone from version retirement.
  const uint32_t number = protocol::EntityNumber(m.entity);
  const uint32_t version = protocol::EntityVersion(m.entity);
  if (!protocol::IsReservedEntityNumber(number) && (version > 0 || !versions_.no_deleted())) {
    const internal::EntityVersions::Deleted* tomb = versions_.FindDeleted(number);
    if (tomb && tomb->version >= version) return ErrorCode::kOk;  // will be dropped anyway
    if (version > 0 && !tomb && versions_.num_deleted() >= limits_.max_tombstones) {
      return ErrorCode::kTooManyTombstones;
    }
  }
  if (versions_.num_live() >= limits_.max_entities && !HoldsAny(m.entity)) {
    // A newer version retiring the live one keeps the count unchanged.
    const uint32_t* live =
        protocol::IsReservedEntityNumber(number) ? nullptr : versions_.LiveVersion(number);
    if (!live || *live >= version) return ErrorCode::kTooManyEntities;
  }
  return ErrorCode::kOk;
}

ErrorCode CrdtStore::CheckBatchLimits(std::span<const CrdtMessage> messages) const {
  // Counted for the whole batch before anything merges, so that a refused batch leaves the
  // store untouched. The counts are upper bounds: a newer version retiring a live one does
  // not really add an entity, and duplicates within the batch count once.
  std::vector<uint32_t> new_entities;
  std::vector<uint32_t> new_tombstones;
  for (const CrdtMessage& m : messages) {
    const uint32_t number = protocol::EntityNumber(m.entity);
    const uint32_t version = protocol::EntityVersion(m.entity);
    const bool reserved = protocol::IsReservedEntityNumber(number);
    if (!reserved && (m.type == MessageType::kDeleteEntity ||
                      m.type == MessageType::kDeleteEntityNetwork || version > 0)) {
      if (!versions_.FindDeleted(number)) new_tombstones.push_back(number);
    }
    if (protocol::HasComponent(m.type)) {
      const EntityState state = GetEntityState(m.entity);
      if (state == EntityState::kUnknown ||
          (state == EntityState::kReserved && !FindTransform(m.entity))) {
        new_entities.push_back(m.entity);
      }
    }
  }
  const auto distinct = [](std::vector<uint32_t>& v) {
    std::sort(v.begin(), v.end());
    return static_cast<std::size_t>(std::unique(v.begin(), v.end()) - v.begin());
  };
  if (!new_entities.empty() && num_entities() + distinct(new_entities) > limits_.max_entities) {
    return ErrorCode::kTooManyEntities;
  }
  if (!new_tombstones.empty() &&
      num_tombstones() + distinct(new_tombstones) > limits_.max_tombstones) {
    return ErrorCode::kTooManyTombstones;
  }
  return ErrorCode::kOk;
}

bool CrdtStore::AdmitEntity(EntityId entity) {
  const uint32_t number = protocol::EntityNumber(entity);
  if (protocol::IsReservedEntityNumber(number)) return true;  // never tombstoned
  const uint32_t version = protocol::EntityVersion(entity);
  if (version == 0 && versions_.no_deleted()) return true;  // the common case: nothing to check
  const internal::EntityVersions::Deleted* tomb = versions_.FindDeleted(number);
  if (tomb && tomb->version >= version) return false;
  // A message for (n, v > 0) means every older version of n is gone (@dcl/ecs
  // updateUsedEntity). Unlike @dcl/ecs, their data is purged too (docs/CRDT.md).
  if (version > 0 && (!tomb || tomb->version < version - 1)) RaiseTombstone(number, version - 1);
  return true;
}

void CrdtStore::RaiseTombstone(uint32_t number, uint32_t version) {
  versions_.SetDeleted(number, version, log_.Next(ChangeKind::kTombstone, 0, number));
  if (const uint32_t* live = versions_.LiveVersion(number); live && *live <= version) {
    PurgeEntity(protocol::MakeEntityId(number, *live));
  }
}

MergeResult CrdtStore::MergeTransform(const CrdtMessage& m, bool is_delete) {
  if (!AdmitEntity(m.entity)) return {MergeOutcome::kEntityWasDeleted, ErrorCode::kOk};
  MergeOutcome outcome = MergeOutcome::kUpdatedTimestamp;
  uint32_t slot = transforms_.Find(m.entity);
  if (slot != kNone) {
    const TransformRegister& r = transforms_[slot];
    if (r.timestamp > m.timestamp) return {MergeOutcome::kOutdatedTimestamp, ErrorCode::kOk};
    if (r.timestamp == m.timestamp) {
      // Ties compare the serialized bytes, as @dcl/ecs does (only computed on ties).
      const protocol::TransformBytes cur = protocol::StoreTransform(r.value);
      outcome =
          internal::LwwRule(r.timestamp, r.has_data != 0, cur, m.timestamp, is_delete, m.data);
      if (!ChangedState(outcome)) return {outcome, ErrorCode::kOk};
    }
  } else {
    versions_.NoteGained(m.entity);
    slot = transforms_.Add(m.entity);
  }
  TransformRegister& r = transforms_[slot];
  r.timestamp = m.timestamp;
  r.has_data = is_delete ? 0 : 1;
  if (is_delete) {
    r.value = protocol::kIdentityTransform;
  } else {
    protocol::LoadTransformInto(m.data.first<Transform::kSize>(), r.value);
  }
  r.sequence = log_.Next(ChangeKind::kTransform, protocol::kTransformComponentId, m.entity);
  NoteTransformChange(m.entity);
  return {outcome, ErrorCode::kOk};
}

MergeResult CrdtStore::MergeOpaque(const CrdtMessage& m, bool is_delete) {
  if (!AdmitEntity(m.entity)) return {MergeOutcome::kEntityWasDeleted, ErrorCode::kOk};
  MergeOutcome outcome = MergeOutcome::kUpdatedTimestamp;
  internal::OpaqueRegister* r = opaque_.Find(m.component, m.entity);
  if (r) {
    outcome = internal::LwwRule(r->timestamp, r->has_data, r->data, m.timestamp, is_delete, m.data);
    if (!ChangedState(outcome)) return {outcome, ErrorCode::kOk};
    NoteComponentChange(m.component, m.entity);
  } else {
    NoteComponentChange(m.component, m.entity);
    if (!HoldsAny(m.entity)) versions_.NoteGained(m.entity);
    components_.AddRegister(m.entity, m.component);
    r = &opaque_.Add(m.component, m.entity);
  }
  r->timestamp = m.timestamp;
  r->has_data = !is_delete;
  if (is_delete) {
    r->data.clear();
  } else {
    r->data.assign(m.data.begin(), m.data.end());
  }
  r->sequence = log_.Next(ChangeKind::kOpaque, m.component, m.entity);
  return {outcome, ErrorCode::kOk};
}

MergeResult CrdtStore::MergeAppend(const CrdtMessage& m) {
  if (!AdmitEntity(m.entity)) return {MergeOutcome::kEntityWasDeleted, ErrorCode::kOk};
  internal::AppendSet* set = appends_.Find(m.component, m.entity);
  const bool created = set == nullptr;
  // Whether the key had a value before the insertion (the feed needs it only if it changes).
  const bool had_value = track_component_changes_ && HasComponentValue(m.component, m.entity);
  if (created) {
    if (limits_.max_append_values == 0) return {MergeOutcome::kOutdatedData, ErrorCode::kOk};
    if (!HoldsAny(m.entity)) versions_.NoteGained(m.entity);
    components_.AddAppendSet(m.entity, m.component);
    set = &appends_.Add(m.component, m.entity);
  }
  const MergeOutcome outcome = internal::InsertBounded(
      set->elements, AppendElement{m.timestamp, {m.data.begin(), m.data.end()}},
      limits_.max_append_values);
  if (!ChangedState(outcome)) return {outcome, ErrorCode::kOk};
  if (track_component_changes_ && m.component != protocol::kTransformComponentId) {
    component_changes_.push_back({m.entity, m.component, had_value});
  }
  set->sequence = log_.Next(ChangeKind::kAppend, m.component, m.entity);
  // The first element of a new set is a new key: a newer "timestamp" than nothing.
  return {created ? MergeOutcome::kUpdatedTimestamp : outcome, ErrorCode::kOk};
}

MergeResult CrdtStore::MergeDeleteEntity(EntityId entity) {
  const uint32_t number = protocol::EntityNumber(entity);
  const uint32_t version = protocol::EntityVersion(entity);
  // CheckMessage refuses reserved numbers before any merge; this guard only keeps a reserved
  // number from ever being tombstoned, whatever the path.
  if (protocol::IsReservedEntityNumber(number)) {
    return {MergeOutcome::kRefused, ErrorCode::kReservedEntity};
  }
  const internal::EntityVersions::Deleted* tomb = versions_.FindDeleted(number);
  if (tomb && tomb->version >= version) return {MergeOutcome::kNoChange, ErrorCode::kOk};
  if (!tomb && versions_.num_deleted() >= limits_.max_tombstones) {
    return {MergeOutcome::kRefused, ErrorCode::kTooManyTombstones};
  }
  RaiseTombstone(number, version);
  return {MergeOutcome::kEntityDeleted, ErrorCode::kOk};
}

void CrdtStore::PurgeEntity(EntityId entity) {
  bool had_any = false;
  if (transforms_.Erase(entity)) {
    had_any = true;
    NoteTransformChange(entity);
  }
  if (std::optional<internal::EntityComponentIndex::Components> held = components_.Take(entity)) {
    had_any = true;
    // Noted before any erase: each key's value as it stood.
    for (ComponentId c : held->registers) NoteComponentChange(c, entity);
    for (ComponentId c : held->append_sets) NoteComponentChange(c, entity);
    for (ComponentId c : held->registers) opaque_.Erase(c, entity);
    for (ComponentId c : held->append_sets) appends_.Erase(c, entity);
  }
  if (had_any) versions_.NoteLost(entity);
}

// ---------------------------------------------------------------------------------------------
// Local writes: stamped by runtime/crdt/local_writes.cc, merged here.

Result<MergeOutcome> CrdtStore::WriteLocal(const CrdtMessage& m, std::vector<uint8_t>& out) {
  const MergeResult result = Merge(m);
  if (result.outcome == MergeOutcome::kRefused) {
    return MakeError(result.reason, "the local write was refused by the store limits");
  }
  if (result.outcome == MergeOutcome::kEntityWasDeleted) {
    return MakeError(ErrorCode::kInvalidArgument, "the entity is deleted");
  }
  if (ChangedState(result.outcome)) protocol::AppendMessage(m, out);
  return result.outcome;
}

namespace {

// Merges a stamped write through `write_local`, or reports kNoChange when there is none.
template <class WriteLocal>
Result<MergeOutcome> MergeStamped(const Result<internal::Stamped>& stamped,
                                  WriteLocal&& write_local) {
  if (!stamped.has_value()) return stamped.error();
  if (!stamped.value().has_value()) return MergeOutcome::kNoChange;
  return write_local(*stamped.value());
}

}  // namespace

Result<MergeOutcome> CrdtStore::WriteComponent(EntityId entity, ComponentId component,
                                               std::span<const uint8_t> data,
                                               std::vector<uint8_t>& out) {
  return MergeStamped(internal::StampPut(*this, entity, component, data),
                      [&](const CrdtMessage& m) { return WriteLocal(m, out); });
}

Result<MergeOutcome> CrdtStore::WriteTransform(EntityId entity, const Transform& t,
                                               std::vector<uint8_t>& out) {
  const protocol::TransformBytes bytes = protocol::StoreTransform(t);
  return WriteComponent(entity, protocol::kTransformComponentId, bytes, out);
}

Result<MergeOutcome> CrdtStore::WriteDeleteComponent(EntityId entity, ComponentId component,
                                                     std::vector<uint8_t>& out) {
  return MergeStamped(internal::StampDeleteComponent(*this, entity, component),
                      [&](const CrdtMessage& m) { return WriteLocal(m, out); });
}

Result<MergeOutcome> CrdtStore::WriteDeleteEntity(EntityId entity, std::vector<uint8_t>& out) {
  const Result<CrdtMessage> m = internal::StampDeleteEntity(entity);
  if (!m.has_value()) return m.error();
  return WriteLocal(m.value(), out);
}

Result<MergeOutcome> CrdtStore::WriteAppend(EntityId entity, ComponentId component,
                                            std::span<const uint8_t> data,
                                            std::vector<uint8_t>& out) {
  const Result<CrdtMessage> m = internal::StampAppend(*this, entity, component, data);
  if (!m.has_value()) return m.error();
  return WriteLocal(m.value(), out);
}

// ---------------------------------------------------------------------------------------------
// Reads

RegisterView CrdtStore::TransformView(uint32_t slot) const {
  const TransformRegister& r = transforms_[slot];
  RegisterView v{protocol::kTransformComponentId,
                 r.entity,
                 r.timestamp,
                 r.has_data != 0,
                 r.sequence,
                 {},
                 nullptr};
  if (v.has_data) v.transform = &r.value;
  return v;
}

const Transform* CrdtStore::FindTransform(EntityId entity) const {
  const uint32_t slot = transforms_.Find(entity);
  if (slot == kNone || !transforms_[slot].has_data) return nullptr;
  return &transforms_[slot].value;
}

std::optional<RegisterView> CrdtStore::FindRegister(ComponentId component, EntityId entity) const {
  if (component == protocol::kTransformComponentId) {
    const uint32_t slot = transforms_.Find(entity);
    if (slot == kNone) return std::nullopt;
    return TransformView(slot);
  }
  const internal::OpaqueRegister* r = opaque_.Find(component, entity);
  if (!r) return std::nullopt;
  return r->View();
}

std::span<const AppendElement> CrdtStore::FindAppendSet(ComponentId component,
                                                        EntityId entity) const {
  const internal::AppendSet* set = appends_.Find(component, entity);
  if (!set) return {};
  return set->elements;
}

EntityState CrdtStore::GetEntityState(EntityId entity) const {
  const uint32_t number = protocol::EntityNumber(entity);
  if (protocol::IsReservedEntityNumber(number)) return EntityState::kReserved;
  const internal::EntityVersions::Deleted* tomb = versions_.FindDeleted(number);
  if (tomb && tomb->version >= protocol::EntityVersion(entity)) return EntityState::kRemoved;
  return HoldsAny(entity) ? EntityState::kUsedEntity : EntityState::kUnknown;
}

bool CrdtStore::HasComponentValue(ComponentId component, EntityId entity) const {
  if (component == protocol::kTransformComponentId) {
    if (FindTransform(entity) != nullptr) return true;
  } else if (const internal::OpaqueRegister* r = opaque_.Find(component, entity);
             r != nullptr && r->has_data) {
    return true;
  }
  return appends_.Find(component, entity) != nullptr;
}

std::optional<uint32_t> CrdtStore::DeletedVersion(uint32_t number) const {
  const internal::EntityVersions::Deleted* tomb = versions_.FindDeleted(number);
  if (!tomb) return std::nullopt;
  return tomb->version;
}

std::vector<RegisterView> CrdtStore::SortedRegisters() const {
  std::vector<RegisterView> out;
  out.reserve(num_registers());
  for (std::size_t i = 0; i < transforms_.size(); ++i) {
    out.push_back(TransformView(static_cast<uint32_t>(i)));
  }
  for (const internal::OpaqueRegister& r : opaque_.all()) out.push_back(r.View());
  std::sort(out.begin(), out.end(), [](const RegisterView& a, const RegisterView& b) {
    return internal::ComponentKey(a.component, a.entity) <
           internal::ComponentKey(b.component, b.entity);
  });
  return out;
}

std::vector<CrdtStore::AppendSetView> CrdtStore::SortedAppendSets() const {
  std::vector<AppendSetView> out;
  out.reserve(appends_.size());
  for (const internal::AppendSet& s : appends_.all()) {
    out.push_back({s.component, s.entity, s.elements});
  }
  std::sort(out.begin(), out.end(), [](const AppendSetView& a, const AppendSetView& b) {
    return internal::ComponentKey(a.component, a.entity) <
           internal::ComponentKey(b.component, b.entity);
  });
  return out;
}

std::vector<CrdtStore::Tombstone> CrdtStore::SortedTombstones() const {
  std::vector<Tombstone> out;
  out.reserve(versions_.num_deleted());
  versions_.ForEachDeleted([&](uint32_t number, const internal::EntityVersions::Deleted& d) {
    out.push_back(Tombstone{number, d.version});
  });
  std::sort(out.begin(), out.end(),
            [](const Tombstone& a, const Tombstone& b) { return a.number < b.number; });
  return out;
}

Sha256::Digest CrdtStore::StateHash() const { return internal::StateHash(*this); }

std::string CrdtStore::CanonicalText() const { return internal::CanonicalText(*this); }

// ---------------------------------------------------------------------------------------------
// Change log, snapshot and delta

bool CrdtStore::IsLatestChange(const internal::Change& c) const {
  switch (c.kind) {
    case ChangeKind::kTransform: {
      const uint32_t slot = transforms_.Find(c.entity);
      return slot != kNone && transforms_[slot].sequence == c.sequence;
    }
    case ChangeKind::kOpaque: {
      const internal::OpaqueRegister* r = opaque_.Find(c.component, c.entity);
      return r && r->sequence == c.sequence;
    }
    case ChangeKind::kAppend: {
      const internal::AppendSet* s = appends_.Find(c.component, c.entity);
      return s && s->sequence == c.sequence;
    }
    case ChangeKind::kTombstone: {
      const internal::EntityVersions::Deleted* d = versions_.FindDeleted(c.entity);
      return d && d->sequence == c.sequence;
    }
    default:
      return false;
  }
}

std::size_t CrdtStore::ExportEntity(EntityId entity, std::vector<uint8_t>& out) const {
  std::size_t count = 0;
  if (const uint32_t slot = transforms_.Find(entity); slot != kNone) {
    const TransformRegister& r = transforms_[slot];
    if (r.has_data) {
      protocol::AppendTransformPut(entity, r.timestamp, r.value, out);
    } else {
      protocol::AppendMessage({MessageType::kDeleteComponent,
                               entity,
                               protocol::kTransformComponentId,
                               r.timestamp,
                               0,
                               {}},
                              out);
    }
    ++count;
  }
  const internal::EntityComponentIndex::Components* held = components_.Find(entity);
  if (held == nullptr) return count;
  for (ComponentId c : held->registers) {
    const internal::OpaqueRegister* r = opaque_.Find(c, entity);
    if (r == nullptr) continue;
    protocol::AppendMessage(
        {r->has_data ? MessageType::kPutComponent : MessageType::kDeleteComponent, r->entity,
         r->component, r->timestamp, 0, r->data},
        out);
    ++count;
  }
  for (ComponentId c : held->append_sets) {
    const internal::AppendSet* s = appends_.Find(c, entity);
    if (s == nullptr) continue;
    for (const AppendElement& e : s->elements) {
      protocol::AppendMessage(
          {MessageType::kAppendValue, s->entity, s->component, e.timestamp, 0, e.data}, out);
      ++count;
    }
  }
  return count;
}

bool CrdtStore::ForgetEntity(EntityId entity) {
  if (!HoldsAny(entity)) return false;
  PurgeEntity(entity);
  return true;
}

std::size_t CrdtStore::ExportChangesSince(uint64_t since, std::vector<uint8_t>& out) const {
  const std::span<const internal::Change> changes = log_.After(since);
  std::size_t count = 0;
  // Tombstones first: receivers then drop stale messages for deleted entities at once.
  for (const internal::Change& c : changes) {
    if (c.kind != ChangeKind::kTombstone || !IsLatestChange(c)) continue;
    CrdtMessage m;
    m.type = MessageType::kDeleteEntity;
    m.entity = protocol::MakeEntityId(c.entity, versions_.FindDeleted(c.entity)->version);
    protocol::AppendMessage(m, out);
    ++count;
  }
  // Then every other change that is its object's latest, in change order (each lookup also
  // answers IsLatestChange).
  for (const internal::Change& c : changes) {
    switch (c.kind) {
      case ChangeKind::kTransform: {
        const uint32_t slot = transforms_.Find(c.entity);
        if (slot == kNone || transforms_[slot].sequence != c.sequence) continue;
        const TransformRegister& r = transforms_[slot];
        if (r.has_data) {
          protocol::AppendTransformPut(c.entity, r.timestamp, r.value, out);
        } else {
          protocol::AppendMessage({MessageType::kDeleteComponent,
                                   c.entity,
                                   protocol::kTransformComponentId,
                                   r.timestamp,
                                   0,
                                   {}},
                                  out);
        }
        ++count;
        continue;
      }
      case ChangeKind::kOpaque: {
        const internal::OpaqueRegister* r = opaque_.Find(c.component, c.entity);
        if (!r || r->sequence != c.sequence) continue;
        protocol::AppendMessage(
            {r->has_data ? MessageType::kPutComponent : MessageType::kDeleteComponent, r->entity,
             r->component, r->timestamp, 0, r->data},
            out);
        ++count;
        continue;
      }
      case ChangeKind::kAppend: {
        const internal::AppendSet* s = appends_.Find(c.component, c.entity);
        if (!s || s->sequence != c.sequence) continue;
        for (const AppendElement& e : s->elements) {
          protocol::AppendMessage(
              {MessageType::kAppendValue, s->entity, s->component, e.timestamp, 0, e.data}, out);
          ++count;
        }
        continue;
      }
      default:
        continue;  // tombstones were written first
    }
  }
  return count;
}

}  // namespace scenecrdt::runtime
