// SPDX-License-Identifier: Apache-2.0
// Owns the owner-mode rule, the owner table's bookkeeping and the corrections
// (docs/AUTHORITY.md).
#include "scenecrdt/server/scene/authority/authority.h"

#include <algorithm>
#include <limits>

#include "scenecrdt/protocol/entity_id.h"
#include "scenecrdt/protocol/transform.h"

namespace scenecrdt::server {

namespace {

using protocol::MessageType;

bool IsPut(MessageType t) {
  return t == MessageType::kPutComponent || t == MessageType::kPutComponentNetwork;
}

bool IsDeleteEntity(MessageType t) {
  return t == MessageType::kDeleteEntity || t == MessageType::kDeleteEntityNetwork;
}

bool IsRegisterWrite(MessageType t) {
  return IsPut(t) || t == MessageType::kDeleteComponent ||
         t == MessageType::kDeleteComponentNetwork;
}

uint64_t Key(const protocol::CrdtMessage& m) { return (uint64_t{m.component} << 32) | m.entity; }

// A register's value as DCL bytes (Transforms are kept decoded).
void CopyValue(const runtime::RegisterView& r, std::vector<uint8_t>& out) {
  out.clear();
  if (r.transform) {
    const protocol::TransformBytes bytes = protocol::StoreTransform(*r.transform);
    out.assign(bytes.begin(), bytes.end());
  } else {
    out.assign(r.data.begin(), r.data.end());
  }
}

}  // namespace

uint32_t Authority::Intern(const std::string& principal) {
  const auto [it, added] = ids_.try_emplace(principal, static_cast<uint32_t>(names_.size()));
  if (added) names_.push_back(principal);
  return it->second;
}

void Authority::Grant(uint32_t principal,
                      const std::vector<std::pair<uint32_t, uint32_t>>& ranges) {
  for (const auto& [lo, hi] : ranges) {
    const Range r{lo, hi, principal};
    if (std::find(ranges_.begin(), ranges_.end(), r) == ranges_.end()) ranges_.push_back(r);
  }
}

ErrorCode Authority::Check(uint32_t principal, bool admin, bool ranged,
                           const protocol::CrdtMessage& m) const {
  if (mode_ == AuthorityMode::kOpen) return ErrorCode::kOk;
  const uint32_t number = protocol::EntityNumber(m.entity);
  if (mode_ == AuthorityMode::kRules) {
    // DELETE_ENTITY names no component: the owner rule (and the admin ranges) decide it.
    const Writer w = IsDeleteEntity(m.type) ? Writer::kOwner : rules_->For(m.component);
    if (w == Writer::kNone) return ErrorCode::kServerOnlyComponent;
    if (admin) return ErrorCode::kOk;
    if (w == Writer::kAdmin || rules_->AdminOnly(number)) return ErrorCode::kNotAdmin;
    if (w == Writer::kAny) return ErrorCode::kOk;
  } else if (admin) {
    return ErrorCode::kOk;
  }
  return CheckOwner(principal, ranged, number);
}

ErrorCode Authority::CheckOwner(uint32_t principal, bool ranged, uint32_t number) const {
  if (protocol::IsReservedEntityNumber(number)) return ErrorCode::kOk;
  const auto it = owner_of_.find(number);
  if (it != owner_of_.end()) return it->second == principal ? ErrorCode::kOk : ErrorCode::kNotOwner;
  // Nobody owns it yet: a range grant decides (its holder owns it from the start), else a
  // principal with range grants may not create it and any other may.
  for (const Range& r : ranges_) {
    if (number >= r.lo && number <= r.hi) {
      return r.principal == principal ? ErrorCode::kOk : ErrorCode::kNotOwner;
    }
  }
  return ranged ? ErrorCode::kNotOwner : ErrorCode::kOk;
}

void Authority::Note(uint32_t principal, const protocol::CrdtMessage& m,
                     runtime::MergeOutcome outcome) {
  if (mode_ == AuthorityMode::kOpen || !runtime::ChangedState(outcome)) return;
  if (track_admitted_) NoteAdmitted(m);
  if (!corrected_.empty()) {
    // A write of its own (timestamp above the server's stamp) ends the mark; a re-stamped one
    // keeps it: its writer's next writes may still be stamped below it (docs/AUTHORITY.md).
    const auto it = corrected_.find(Key(m));
    if (it != corrected_.end() && it->second != m.timestamp) corrected_.erase(it);
  }
  const uint32_t number = protocol::EntityNumber(m.entity);
  if (protocol::IsReservedEntityNumber(number)) return;
  if (IsDeleteEntity(m.type)) {
    if (owner_of_.erase(number) != 0) dirty_.insert(number);
  } else if (IsPut(m.type) && principal != 0 &&
             (mode_ != AuthorityMode::kRules || rules_->For(m.component) == Writer::kOwner)) {
    if (owner_of_.try_emplace(number, principal).second) dirty_.insert(number);
  }
}

bool Authority::IsClaim(const protocol::CrdtMessage& m) const {
  if (mode_ == AuthorityMode::kOpen || !IsPut(m.type)) return false;
  const uint32_t number = protocol::EntityNumber(m.entity);
  if (protocol::IsReservedEntityNumber(number) || owner_of_.count(number) != 0) return false;
  return mode_ != AuthorityMode::kRules || rules_->For(m.component) == Writer::kOwner;
}

void Authority::SetOwner(uint32_t number, const std::string& principal) {
  if (protocol::IsReservedEntityNumber(number)) return;
  if (principal.empty()) {
    owner_of_.erase(number);
  } else {
    owner_of_[number] = Intern(principal);
  }
}

std::size_t Authority::ReplaceOwners(const std::vector<OwnerRow>& rows,
                                     const std::vector<OwnerRow>& in_flight) {
  std::unordered_set<uint32_t> kept = dirty_;
  for (const OwnerRow& row : in_flight) kept.insert(row.first);
  std::unordered_map<uint32_t, uint32_t> next;
  next.reserve(rows.size() + kept.size());
  for (const auto& [number, principal] : rows) {
    if (principal.empty() || protocol::IsReservedEntityNumber(number)) continue;
    if (kept.count(number) == 0) next[number] = Intern(principal);
  }
  for (const uint32_t number : kept) {
    if (auto it = owner_of_.find(number); it != owner_of_.end()) next[number] = it->second;
  }
  std::size_t changed = 0;
  for (const auto& [number, principal] : next) {
    const auto it = owner_of_.find(number);
    changed += it == owner_of_.end() || it->second != principal ? 1 : 0;
  }
  for (const auto& [number, principal] : owner_of_) changed += next.count(number) == 0 ? 1 : 0;
  owner_of_.swap(next);
  return changed;
}

void Authority::NoteCorrection(const protocol::CrdtMessage& correction, uint64_t sequence,
                               std::optional<uint32_t> replaced) {
  corrected_[Key(correction)] = correction.timestamp;
  if (track_admitted_) {
    const auto it = admitted_.find(Key(correction));
    if (it != admitted_.end() && replaced && it->second == *replaced) {
      it->second = correction.timestamp;  // it re-stamps this node's admitted value
    }
    marks_.push_back(
        {{correction.component, correction.entity, correction.timestamp, 0}, sequence});
  }
}

bool Authority::RestampOverCorrection(const runtime::CrdtStore& store, protocol::CrdtMessage& m) {
  if (corrected_.empty() || !IsRegisterWrite(m.type)) return false;
  const auto it = corrected_.find(Key(m));
  if (it == corrected_.end()) return false;
  const auto current = store.FindRegister(m.component, m.entity);
  if (!current || current->timestamp != it->second || m.timestamp > current->timestamp ||
      current->timestamp == std::numeric_limits<uint32_t>::max()) {
    return false;
  }
  m.timestamp = current->timestamp + 1;
  it->second = m.timestamp;
  return true;
}

void Authority::NoteAdmitted(const protocol::CrdtMessage& m) {
  if (IsRegisterWrite(m.type)) admitted_[Key(m)] = m.timestamp;
}

void Authority::CaptureBeaten(const runtime::CrdtStore& store,
                              std::span<const CorrectionMark> marks,
                              std::vector<Beaten>& out) const {
  if (admitted_.empty()) return;
  for (const CorrectionMark& mark : marks) {
    const auto it = admitted_.find((uint64_t{mark.component} << 32) | mark.entity);
    if (it == admitted_.end()) continue;
    const auto current = store.FindRegister(mark.component, mark.entity);
    // Only a value this node admitted (its timestamp is the last one admitted here) that the
    // correction can beat; anything newer wins over the correction by itself.
    if (!current || current->timestamp != it->second || current->timestamp > mark.timestamp) {
      continue;
    }
    Beaten b;
    b.mark = mark;
    b.has_data = current->has_data;
    if (b.has_data) CopyValue(*current, b.value);
    out.push_back(std::move(b));
  }
}

std::optional<protocol::CrdtMessage> Authority::CounterCorrection(const runtime::CrdtStore& store,
                                                                  const Beaten& b) {
  const uint64_t key = (uint64_t{b.mark.component} << 32) | b.mark.entity;
  if (b.mark.timestamp == std::numeric_limits<uint32_t>::max()) return std::nullopt;
  const auto current = store.FindRegister(b.mark.component, b.mark.entity);
  // The correction lost (or something newer holds the register): nothing was undone.
  if (!current || current->timestamp != b.mark.timestamp) return std::nullopt;
  if (current->has_data == b.has_data) {
    std::vector<uint8_t> now;
    if (b.has_data) CopyValue(*current, now);
    if (now == b.value) {
      admitted_[key] = b.mark.timestamp;  // it carries the admitted value itself
      return std::nullopt;
    }
  }
  protocol::CrdtMessage m;
  m.entity = b.mark.entity;
  m.component = b.mark.component;
  m.timestamp = b.mark.timestamp + 1;
  m.type = b.has_data ? MessageType::kPutComponent : MessageType::kDeleteComponent;
  if (b.has_data) m.data = b.value;
  return m;
}

void Authority::NoteRemoteCorrection(const runtime::CrdtStore& store, const CorrectionMark& mark) {
  const auto current = store.FindRegister(mark.component, mark.entity);
  if (current && current->timestamp == mark.timestamp) {
    corrected_[(uint64_t{mark.component} << 32) | mark.entity] = mark.timestamp;
  }
}

void Authority::NoteCounter(const protocol::CrdtMessage& counter) {
  corrected_[Key(counter)] = counter.timestamp;
  admitted_[Key(counter)] = counter.timestamp;
}

const std::string* Authority::OwnerOf(uint32_t number) const {
  const auto it = owner_of_.find(number);
  return it == owner_of_.end() ? nullptr : &names_[it->second];
}

std::vector<OwnerRow> Authority::Owners() const {
  std::vector<OwnerRow> rows;
  rows.reserve(owner_of_.size());
  for (const auto& [number, id] : owner_of_) rows.emplace_back(number, names_[id]);
  std::sort(rows.begin(), rows.end());
  return rows;
}

std::vector<OwnerRow> Authority::TakeChanges(uint64_t durable,
                                             std::vector<CorrectionMark>& corrections) {
  std::erase_if(marks_, [&](const auto& mark) { return mark.second <= durable; });
  for (const auto& [mark, sequence] : marks_) corrections.push_back(mark);
  std::vector<OwnerRow> rows;
  rows.reserve(dirty_.size());
  for (const uint32_t number : dirty_) {
    const std::string* owner = OwnerOf(number);
    rows.emplace_back(number, owner ? *owner : std::string());
  }
  dirty_.clear();
  return rows;
}

void Authority::Transfer(uint32_t number, const std::string& principal) {
  if (principal.empty()) {
    owner_of_.erase(number);
  } else {
    owner_of_[number] = Intern(principal);
  }
  dirty_.insert(number);
}

void Authority::Failed(const std::vector<OwnerRow>& rows) {
  for (const OwnerRow& row : rows) dirty_.insert(row.first);
}

void Authority::Restore(const std::vector<OwnerRow>& rows) {
  for (const auto& [number, principal] : rows) {
    if (principal.empty() || protocol::IsReservedEntityNumber(number)) continue;
    owner_of_[number] = Intern(principal);
  }
}

std::optional<protocol::CrdtMessage> Authority::Correction(const runtime::CrdtStore& store,
                                                           const RefusedWrite& refused,
                                                           std::vector<uint8_t>& scratch) {
  if (!IsRegisterWrite(refused.type)) return std::nullopt;
  if (refused.timestamp == std::numeric_limits<uint32_t>::max()) return std::nullopt;
  const auto current = store.FindRegister(refused.component, refused.entity);
  // The scene's own value is newer: it wins in the writer's replica by itself.
  if (current && current->timestamp > refused.timestamp) return std::nullopt;
  protocol::CrdtMessage m;
  m.entity = refused.entity;
  m.component = refused.component;
  m.timestamp = refused.timestamp + 1;
  m.type = MessageType::kDeleteComponent;
  if (current && current->has_data) {
    m.type = MessageType::kPutComponent;
    CopyValue(*current, scratch);
    m.data = scratch;
  }
  return m;
}

}  // namespace scenecrdt::server
