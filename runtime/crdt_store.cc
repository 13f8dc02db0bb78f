// SPDX-License-Identifier: Apache-2.0
// Owns the merge rules, entity bookkeeping, reads and the change log / exports of CrdtStore
// (docs/CRDT.md).
#include "scenecrdt/runtime/crdt_store.h"

#include <algorithm>
#include <cstring>

namespace scenecrdt::runtime {

using protocol::CrdtMessage;
using protocol::MessageType;
using protocol::Transform;

const char* MergeOutcomeName(MergeOutcome outcome) {
  switch (outcome) {
    case MergeOutcome::kUpdatedTimestamp:
      return "updated_timestamp";
    case MergeOutcome::kOutdatedTimestamp:
      return "outdated_timestamp";
    case MergeOutcome::kNoChange:
      return "no_change";
    case MergeOutcome::kOutdatedData:
      return "outdated_data";
    case MergeOutcome::kUpdatedData:
      return "updated_data";
    case MergeOutcome::kEntityWasDeleted:
      return "entity_was_deleted";
    case MergeOutcome::kEntityDeleted:
      return "entity_deleted";
    case MergeOutcome::kRefused:
      return "refused";
    default:
      return "unknown";
  }
}

const char* EntityStateName(EntityState state) {
  switch (state) {
    case EntityState::kUnknown:
      return "Unknown";
    case EntityState::kUsedEntity:
      return "UsedEntity";
    case EntityState::kRemoved:
      return "Removed";
    case EntityState::kReserved:
      return "Reserved";
    default:
      return "Unknown";
  }
}

namespace {

// @dcl/ecs dataCompare for two present payloads: the longer one is greater, then the first
// differing byte compared unsigned.
int ComparePayloads(std::span<const uint8_t> a, std::span<const uint8_t> b) {
  if (a.size() != b.size()) return a.size() < b.size() ? -1 : 1;
  if (a.empty()) return 0;
  const int c = std::memcmp(a.data(), b.data(), a.size());
  return c < 0 ? -1 : (c > 0 ? 1 : 0);
}

// The LWW rule for a register {timestamp, has_data, data} that exists (crdtRuleForCurrentState).
MergeOutcome LwwRule(uint32_t cur_ts, bool cur_has_data, std::span<const uint8_t> cur_data,
                     uint32_t msg_ts, bool msg_is_delete, std::span<const uint8_t> msg_data) {
  if (cur_ts < msg_ts) return MergeOutcome::kUpdatedTimestamp;
  if (cur_ts > msg_ts) return MergeOutcome::kOutdatedTimestamp;
  if (msg_is_delete) {
    // DELETE over DELETE: no change. DELETE against data: dataCompare(data, null) > 0.
    return cur_has_data ? MergeOutcome::kOutdatedData : MergeOutcome::kNoChange;
  }
  if (!cur_has_data) return MergeOutcome::kUpdatedData;  // dataCompare(null, data) < 0
  const int cmp = ComparePayloads(cur_data, msg_data);
  if (cmp == 0) return MergeOutcome::kNoChange;
  return cmp > 0 ? MergeOutcome::kOutdatedData : MergeOutcome::kUpdatedData;
}

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
  if (log_.size() >= compact_at_) CompactLog();
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
  if (!protocol::IsReservedEntityNumber(number) && (version > 0 || !tombstones_.empty())) {
    const TombstoneValue* tomb = tombstones_.Find(number);
    if (tomb && tomb->version >= version) return ErrorCode::kOk;  // will be dropped anyway
    if (version > 0 && !tomb && tombstones_.size() >= limits_.max_tombstones) {
      return ErrorCode::kTooManyTombstones;
    }
  }
  if (live_entity_count_ >= limits_.max_entities && WouldCreateEntity(m.entity)) {
    // A newer version retiring the live one keeps the count unchanged.
    const uint32_t* live =
        protocol::IsReservedEntityNumber(number) ? nullptr : live_version_.Find(number);
    if (!live || *live >= version) return ErrorCode::kTooManyEntities;
  }
  return ErrorCode::kOk;
}

bool CrdtStore::WouldCreateEntity(EntityId entity) const {
  return FindTransformSlot(entity) == kNone && extras_slot_.Find(entity) == nullptr;
}

uint32_t CrdtStore::FindTransformSlot(EntityId entity) const {
  const uint32_t number = protocol::EntityNumber(entity);
  if (protocol::IsReservedEntityNumber(number)) {
    const uint32_t* slot = tr_slot_reserved_.Find(entity);
    return slot ? *slot : kNone;
  }
  if (number >= tr_slot_by_number_.size()) return kNone;
  const uint32_t slot = tr_slot_by_number_[number];
  return slot != kNone && tr_[slot].entity == entity ? slot : kNone;
}

void CrdtStore::SetTransformSlot(EntityId entity, uint32_t slot) {
  const uint32_t number = protocol::EntityNumber(entity);
  if (protocol::IsReservedEntityNumber(number)) {
    tr_slot_reserved_.Insert(entity, slot);
    return;
  }
  if (number >= tr_slot_by_number_.size()) {
    // Grows by powers of two up to the 64 Ki numbers, so small scenes stay small.
    std::size_t size = std::max<std::size_t>(tr_slot_by_number_.size(), 1024);
    while (size <= number) size *= 2;
    tr_slot_by_number_.resize(size, kNone);
  }
  tr_slot_by_number_[number] = slot;
}

void CrdtStore::EraseTransformSlot(EntityId entity) {
  const uint32_t number = protocol::EntityNumber(entity);
  if (protocol::IsReservedEntityNumber(number)) {
    tr_slot_reserved_.Erase(entity);
  } else {
    tr_slot_by_number_[number] = kNone;
  }
}

bool CrdtStore::AdmitEntity(EntityId entity) {
  const uint32_t number = protocol::EntityNumber(entity);
  if (protocol::IsReservedEntityNumber(number)) return true;  // never tombstoned
  const uint32_t version = protocol::EntityVersion(entity);
  if (version == 0 && tombstones_.empty()) return true;  // the common case: nothing to check
  const TombstoneValue* tomb = tombstones_.Find(number);
  if (tomb && tomb->version >= version) return false;
  // A message for (n, v > 0) means every older version of n is gone (@dcl/ecs
  // updateUsedEntity). Unlike @dcl/ecs, their data is purged too (docs/CRDT.md).
  if (version > 0 && (!tomb || tomb->version < version - 1)) RaiseTombstone(number, version - 1);
  return true;
}

void CrdtStore::RaiseTombstone(uint32_t number, uint32_t version) {
  const uint64_t seq = NextSequence(LogKind::kTombstone, 0, number);
  tombstones_.Insert(number, TombstoneValue{version, seq});
  if (const uint32_t* live = live_version_.Find(number); live && *live <= version) {
    PurgeEntity(protocol::MakeEntityId(number, *live));
  }
}

MergeResult CrdtStore::MergeTransform(const CrdtMessage& m, bool is_delete) {
  if (!AdmitEntity(m.entity)) return {MergeOutcome::kEntityWasDeleted, ErrorCode::kOk};
  MergeOutcome outcome = MergeOutcome::kUpdatedTimestamp;
  uint32_t slot = FindTransformSlot(m.entity);
  if (slot != kNone) {
    const TransformRegister& r = tr_[slot];
    if (r.timestamp > m.timestamp) return {MergeOutcome::kOutdatedTimestamp, ErrorCode::kOk};
    if (r.timestamp == m.timestamp) {
      // Ties compare the serialized bytes, as @dcl/ecs does (only computed on ties).
      const protocol::TransformBytes cur = protocol::StoreTransform(r.value);
      outcome = LwwRule(r.timestamp, r.has_data != 0, cur, m.timestamp, is_delete, m.data);
      if (!ChangedState(outcome)) return {outcome, ErrorCode::kOk};
    }
  } else {
    NoteEntityGained(m.entity);
    slot = static_cast<uint32_t>(tr_.size());
    SetTransformSlot(m.entity, slot);
    tr_.push_back(TransformRegister{protocol::kIdentityTransform, m.entity, 0, 0, 0});
  }
  TransformRegister& r = tr_[slot];
  r.timestamp = m.timestamp;
  r.has_data = is_delete ? 0 : 1;
  if (is_delete) {
    r.value = protocol::kIdentityTransform;
  } else {
    protocol::LoadTransformInto(m.data.first<Transform::kSize>(), r.value);
  }
  r.sequence = NextSequence(LogKind::kTransform, protocol::kTransformComponentId, m.entity);
  NoteTransformChange(m.entity);
  return {outcome, ErrorCode::kOk};
}

MergeResult CrdtStore::MergeOpaque(const CrdtMessage& m, bool is_delete) {
  if (!AdmitEntity(m.entity)) return {MergeOutcome::kEntityWasDeleted, ErrorCode::kOk};
  const uint64_t key = Key(m.component, m.entity);
  const uint32_t* index_ptr = reg_slot_.Find(key);
  MergeOutcome outcome = MergeOutcome::kUpdatedTimestamp;
  uint32_t index = index_ptr ? *index_ptr : kNone;
  if (index != kNone) {
    const OpaqueRegister& r = regs_[index];
    outcome = LwwRule(r.timestamp, r.has_data, r.data, m.timestamp, is_delete, m.data);
    if (!ChangedState(outcome)) return {outcome, ErrorCode::kOk};
  } else {
    if (WouldCreateEntity(m.entity)) NoteEntityGained(m.entity);
    ExtrasFor(m.entity).components.push_back(m.component);
    index = static_cast<uint32_t>(regs_.size());
    reg_slot_.Insert(key, index);
    regs_.push_back(OpaqueRegister{m.component, m.entity, 0, false, 0, {}});
  }
  OpaqueRegister& r = regs_[index];
  r.timestamp = m.timestamp;
  r.has_data = !is_delete;
  if (is_delete) {
    r.data.clear();
  } else {
    r.data.assign(m.data.begin(), m.data.end());
  }
  r.sequence = NextSequence(LogKind::kOpaque, m.component, m.entity);
  return {outcome, ErrorCode::kOk};
}

MergeResult CrdtStore::MergeAppend(const CrdtMessage& m) {
  if (!AdmitEntity(m.entity)) return {MergeOutcome::kEntityWasDeleted, ErrorCode::kOk};
  const uint64_t key = Key(m.component, m.entity);
  const uint32_t* index_ptr = append_slot_.Find(key);
  AppendElement element{m.timestamp, std::vector<uint8_t>(m.data.begin(), m.data.end())};
  if (index_ptr) {
    std::vector<AppendElement>& elements = appends_[*index_ptr].elements;
    auto it = std::lower_bound(elements.begin(), elements.end(), element);
    if (it != elements.end() && *it == element) return {MergeOutcome::kNoChange, ErrorCode::kOk};
    if (limits_.max_append_values == 0 ||
        (elements.size() >= limits_.max_append_values && it == elements.begin())) {
      // Smaller than every kept element of a full set: the bounded set keeps the greatest.
      return {MergeOutcome::kOutdatedData, ErrorCode::kOk};
    }
    elements.insert(it, std::move(element));
    if (elements.size() > limits_.max_append_values) elements.erase(elements.begin());
    appends_[*index_ptr].sequence = NextSequence(LogKind::kAppend, m.component, m.entity);
    return {MergeOutcome::kUpdatedData, ErrorCode::kOk};
  }
  if (limits_.max_append_values == 0) return {MergeOutcome::kOutdatedData, ErrorCode::kOk};
  if (WouldCreateEntity(m.entity)) NoteEntityGained(m.entity);
  ExtrasFor(m.entity).appends.push_back(m.component);
  append_slot_.Insert(key, static_cast<uint32_t>(appends_.size()));
  AppendSet set{m.component, m.entity, 0, {}};
  set.elements.push_back(std::move(element));
  set.sequence = NextSequence(LogKind::kAppend, m.component, m.entity);
  appends_.push_back(std::move(set));
  return {MergeOutcome::kUpdatedTimestamp, ErrorCode::kOk};
}

MergeResult CrdtStore::MergeDeleteEntity(EntityId entity) {
  const uint32_t number = protocol::EntityNumber(entity);
  const uint32_t version = protocol::EntityVersion(entity);
  // CheckMessage refuses reserved numbers before any merge; this guard only keeps a reserved
  // number from ever being tombstoned, whatever the path.
  if (protocol::IsReservedEntityNumber(number)) {
    return {MergeOutcome::kRefused, ErrorCode::kReservedEntity};
  }
  const TombstoneValue* tomb = tombstones_.Find(number);
  if (tomb && tomb->version >= version) return {MergeOutcome::kNoChange, ErrorCode::kOk};
  if (!tomb && tombstones_.size() >= limits_.max_tombstones) {
    return {MergeOutcome::kRefused, ErrorCode::kTooManyTombstones};
  }
  RaiseTombstone(number, version);
  return {MergeOutcome::kEntityDeleted, ErrorCode::kOk};
}

// ---------------------------------------------------------------------------------------------
// Entity bookkeeping

void CrdtStore::NoteEntityGained(EntityId entity) {
  ++live_entity_count_;
  const uint32_t number = protocol::EntityNumber(entity);
  if (!protocol::IsReservedEntityNumber(number)) {
    live_version_.Insert(number, protocol::EntityVersion(entity));
  }
}

void CrdtStore::NoteEntityLost(EntityId entity) {
  --live_entity_count_;
  const uint32_t number = protocol::EntityNumber(entity);
  if (!protocol::IsReservedEntityNumber(number)) live_version_.Erase(number);
}

CrdtStore::EntityExtras& CrdtStore::ExtrasFor(EntityId entity) {
  if (const uint32_t* index = extras_slot_.Find(entity)) return extras_[*index];
  extras_slot_.Insert(entity, static_cast<uint32_t>(extras_.size()));
  extras_.push_back(EntityExtras{entity, {}, {}});
  return extras_.back();
}

void CrdtStore::PurgeEntity(EntityId entity) {
  bool had_any = false;
  if (const uint32_t slot = FindTransformSlot(entity); slot != kNone) {
    had_any = true;
    const uint32_t last = static_cast<uint32_t>(tr_.size() - 1);
    EraseTransformSlot(entity);
    if (slot != last) {
      tr_[slot] = tr_[last];
      SetTransformSlot(tr_[slot].entity, slot);
    }
    tr_.pop_back();
    NoteTransformChange(entity);
  }
  if (const uint32_t* extras_index = extras_slot_.Find(entity)) {
    had_any = true;
    const uint32_t index = *extras_index;
    EntityExtras extras = std::move(extras_[index]);
    for (ComponentId c : extras.components) {
      const uint32_t at = *reg_slot_.Find(Key(c, entity));
      reg_slot_.Erase(Key(c, entity));
      const uint32_t last = static_cast<uint32_t>(regs_.size() - 1);
      if (at != last) {
        regs_[at] = std::move(regs_[last]);
        reg_slot_.Insert(Key(regs_[at].component, regs_[at].entity), at);
      }
      regs_.pop_back();
    }
    for (ComponentId c : extras.appends) {
      const uint32_t at = *append_slot_.Find(Key(c, entity));
      append_slot_.Erase(Key(c, entity));
      const uint32_t last = static_cast<uint32_t>(appends_.size() - 1);
      if (at != last) {
        appends_[at] = std::move(appends_[last]);
        append_slot_.Insert(Key(appends_[at].component, appends_[at].entity), at);
      }
      appends_.pop_back();
    }
    extras_slot_.Erase(entity);
    const uint32_t last = static_cast<uint32_t>(extras_.size() - 1);
    if (index != last) {
      extras_[index] = std::move(extras_[last]);
      extras_slot_.Insert(extras_[index].entity, index);
    }
    extras_.pop_back();
  }
  if (had_any) NoteEntityLost(entity);
}

// ---------------------------------------------------------------------------------------------
// Reads

RegisterView CrdtStore::TransformView(uint32_t slot) const {
  const TransformRegister& r = tr_[slot];
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
  const uint32_t slot = FindTransformSlot(entity);
  if (slot == kNone || !tr_[slot].has_data) return nullptr;
  return &tr_[slot].value;
}

std::optional<RegisterView> CrdtStore::FindRegister(ComponentId component, EntityId entity) const {
  if (component == protocol::kTransformComponentId) {
    const uint32_t slot = FindTransformSlot(entity);
    if (slot == kNone) return std::nullopt;
    return TransformView(slot);
  }
  const uint32_t* index = reg_slot_.Find(Key(component, entity));
  if (!index) return std::nullopt;
  const OpaqueRegister& r = regs_[*index];
  return RegisterView{r.component, r.entity, r.timestamp, r.has_data, r.sequence, r.data, nullptr};
}

std::span<const AppendElement> CrdtStore::FindAppendSet(ComponentId component,
                                                        EntityId entity) const {
  const uint32_t* index = append_slot_.Find(Key(component, entity));
  if (!index) return {};
  return appends_[*index].elements;
}

EntityState CrdtStore::GetEntityState(EntityId entity) const {
  const uint32_t number = protocol::EntityNumber(entity);
  if (protocol::IsReservedEntityNumber(number)) return EntityState::kReserved;
  const TombstoneValue* tomb = tombstones_.Find(number);
  if (tomb && tomb->version >= protocol::EntityVersion(entity)) return EntityState::kRemoved;
  return WouldCreateEntity(entity) ? EntityState::kUnknown : EntityState::kUsedEntity;
}

std::optional<uint32_t> CrdtStore::DeletedVersion(uint32_t number) const {
  const TombstoneValue* tomb = tombstones_.Find(number);
  if (!tomb) return std::nullopt;
  return tomb->version;
}

// ---------------------------------------------------------------------------------------------
// Sequence log, snapshot and delta

uint64_t CrdtStore::NextSequence(LogKind kind, ComponentId component, EntityId entity) {
  ++sequence_;
  log_.push_back(LogEntry{sequence_, component, entity, kind});
  return sequence_;
}

bool CrdtStore::IsLatestChange(const LogEntry& e) const {
  switch (e.kind) {
    case LogKind::kTransform: {
      const uint32_t slot = FindTransformSlot(e.entity);
      return slot != kNone && tr_[slot].sequence == e.sequence;
    }
    case LogKind::kOpaque: {
      const uint32_t* index = reg_slot_.Find(Key(e.component, e.entity));
      return index && regs_[*index].sequence == e.sequence;
    }
    case LogKind::kAppend: {
      const uint32_t* index = append_slot_.Find(Key(e.component, e.entity));
      return index && appends_[*index].sequence == e.sequence;
    }
    case LogKind::kTombstone: {
      const TombstoneValue* t = tombstones_.Find(e.entity);
      return t && t->sequence == e.sequence;
    }
    default:
      return false;
  }
}

void CrdtStore::CompactLog() {
  // Called between merges, when every live object carries its latest sequence. Filtering in
  // place keeps the sequence order (no sort) and the log's storage (no reallocation).
  std::size_t kept = 0;
  for (const LogEntry& e : log_) {
    if (IsLatestChange(e)) log_[kept++] = e;
  }
  log_.resize(kept);
  compact_at_ = std::max<std::size_t>(kMinCompactLog, 4 * (kept + 1));
}

std::size_t CrdtStore::ExportChangesSince(uint64_t since, std::vector<uint8_t>& out) const {
  auto first = std::upper_bound(log_.begin(), log_.end(), since,
                                [](uint64_t s, const LogEntry& e) { return s < e.sequence; });
  std::size_t count = 0;
  // Tombstones first: receivers then drop stale messages for deleted entities at once.
  for (auto it = first; it != log_.end(); ++it) {
    if (it->kind != LogKind::kTombstone || !IsLatestChange(*it)) continue;
    const TombstoneValue* t = tombstones_.Find(it->entity);
    CrdtMessage m;
    m.type = MessageType::kDeleteEntity;
    m.entity = protocol::MakeEntityId(it->entity, t->version);
    protocol::AppendMessage(m, out);
    ++count;
  }
  for (auto it = first; it != log_.end(); ++it) {
    CrdtMessage m;
    switch (it->kind) {
      case LogKind::kTransform: {
        const uint32_t slot = FindTransformSlot(it->entity);
        if (slot == kNone || tr_[slot].sequence != it->sequence) continue;
        const TransformRegister& r = tr_[slot];
        if (r.has_data) {
          protocol::AppendTransformPut(it->entity, r.timestamp, r.value, out);
          ++count;
          continue;
        }
        m = {MessageType::kDeleteComponent,
             it->entity,
             protocol::kTransformComponentId,
             r.timestamp,
             0,
             {}};
        break;
      }
      case LogKind::kOpaque: {
        const uint32_t* index = reg_slot_.Find(Key(it->component, it->entity));
        if (!index || regs_[*index].sequence != it->sequence) continue;
        const OpaqueRegister& r = regs_[*index];
        m = {r.has_data ? MessageType::kPutComponent : MessageType::kDeleteComponent,
             r.entity,
             r.component,
             r.timestamp,
             0,
             r.data};
        break;
      }
      case LogKind::kAppend: {
        const uint32_t* index = append_slot_.Find(Key(it->component, it->entity));
        if (!index || appends_[*index].sequence != it->sequence) continue;
        const AppendSet& s = appends_[*index];
        for (const AppendElement& e : s.elements) {
          protocol::AppendMessage(
              {MessageType::kAppendValue, s.entity, s.component, e.timestamp, 0, e.data}, out);
          ++count;
        }
        continue;
      }
      default:
        continue;  // tombstones were written first
    }
    protocol::AppendMessage(m, out);
    ++count;
  }
  return count;
}

}  // namespace scenecrdt::runtime
