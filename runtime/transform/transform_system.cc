// SPDX-License-Identifier: Apache-2.0
// Owns the glue between SceneGraph, the local components and Propagation, the per-frame
// Update order, and world-matrix decomposition.
#include "scenecrdt/runtime/transform_system.h"

#include <algorithm>
#include <cmath>

#include "scenecrdt/runtime/transform/component_records.h"
#include "scenecrdt/runtime/transform/propagation.h"

namespace scenecrdt::runtime {

using internal::ComponentRecord;

TransformSystem::TransformSystem() : propagation_(std::make_unique<internal::Propagation>()) {}
TransformSystem::~TransformSystem() = default;
TransformSystem::TransformSystem(TransformSystem&&) noexcept = default;
TransformSystem& TransformSystem::operator=(TransformSystem&&) noexcept = default;

void TransformSystem::EnsureRecordSlots() {
  if (record_of_slot_.size() < graph_.num_slots()) {
    record_of_slot_.resize(graph_.num_slots(), kNoSlot);
  }
}

void TransformSystem::Unfreeze(uint32_t slot) {
  if (slot < record_of_slot_.size() && record_of_slot_[slot] != kNoSlot) {
    records_[record_of_slot_[slot]].frozen = false;
  }
}

void TransformSystem::InvalidateRecord(uint32_t slot) {
  if (slot < record_of_slot_.size() && record_of_slot_[slot] != kNoSlot) {
    propagation_->InvalidateRecord(record_of_slot_[slot]);
  }
}

void TransformSystem::SetTransform(protocol::EntityId entity, const protocol::Transform& t) {
  if (entity == protocol::kRootEntity) {
    root_transform_ = t;  // stored, ignored by the graph (ADR-219)
    return;
  }
  const uint32_t slot = graph_.FindOrCreate(entity);
  if (graph_.SetTransform(slot, t)) {
    propagation_->SetLocal(slot, internal::ToLocalTrs(t));
    Unfreeze(slot);
    InvalidateRecord(slot);
  }
}

void TransformSystem::RemoveTransform(protocol::EntityId entity) {
  const uint32_t slot = graph_.Find(entity);
  if (slot == kNoSlot) return;
  if (graph_.RemoveTransform(slot)) {
    propagation_->SetLocal(slot, internal::kIdentityTrs);
    Unfreeze(slot);
    InvalidateRecord(slot);
  }
}

// ---- Local components ----

LocalComponents* TransformSystem::MutableLocal(protocol::EntityId e) {
  if (e == protocol::kRootEntity) return nullptr;
  const uint32_t slot = graph_.FindOrCreate(e);
  EnsureRecordSlots();
  uint32_t id = record_of_slot_[slot];
  if (id == kNoSlot) {
    if (!free_records_.empty()) {
      id = free_records_.back();
      free_records_.pop_back();
    } else {
      id = static_cast<uint32_t>(records_.size());
      records_.emplace_back();
    }
    records_[id] = ComponentRecord{};
    records_[id].slot = slot;
    record_of_slot_[slot] = id;
  }
  return &records_[id].components;
}

uint32_t TransformSystem::RecordOf(protocol::EntityId e) const {
  const uint32_t slot = graph_.Find(e);
  return slot == kNoSlot || slot >= record_of_slot_.size() ? kNoSlot : record_of_slot_[slot];
}

void TransformSystem::LocalChanged(protocol::EntityId e) {
  const uint32_t slot = graph_.Find(e);
  if (slot == kNoSlot) return;
  EnsureRecordSlots();
  uint32_t id = record_of_slot_[slot];
  if (id != kNoSlot && records_[id].components.present == 0) {
    records_[id].slot = kNoSlot;
    free_records_.push_back(id);
    record_of_slot_[slot] = kNoSlot;
    id = kNoSlot;
  }
  if (id != kNoSlot) {
    records_[id].frozen = false;
    propagation_->InvalidateRecord(id);
  }
  propagation_->SetRecord(slot, id);
}

#define SCENECRDT_LOCAL_SETTER(BODY)      \
  do {                                    \
    LocalComponents* c = MutableLocal(e); \
    if (c == nullptr) return;             \
    BODY;                                 \
    LocalChanged(e);                      \
  } while (false)

#define SCENECRDT_LOCAL_REMOVER(BITS)             \
  do {                                            \
    const uint32_t id = RecordOf(e);              \
    if (id == kNoSlot) return;                    \
    LocalComponents& c = records_[id].components; \
    if ((c.present & (BITS)) == 0) return;        \
    c.present &= ~static_cast<uint32_t>(BITS);    \
    LocalChanged(e);                              \
  } while (false)

void TransformSystem::SetRotationEuler(protocol::EntityId e, EulerOrder order,
                                       const glm::vec3& radians) {
  const int i = static_cast<int>(order);
  SCENECRDT_LOCAL_SETTER({
    c->rotation_euler[i] = radians;
    c->present |= LocalComponents::kRotationEuler0 << i;
  });
}
void TransformSystem::RemoveRotationEuler(protocol::EntityId e, EulerOrder order) {
  SCENECRDT_LOCAL_REMOVER(LocalComponents::kRotationEuler0 << static_cast<int>(order));
}
void TransformSystem::SetPostRotation(protocol::EntityId e, const glm::quat& q) {
  SCENECRDT_LOCAL_SETTER({
    c->post_rotation = q;
    c->present |= LocalComponents::kPostRotation;
  });
}
void TransformSystem::SetPostRotationEuler(protocol::EntityId e, EulerOrder order,
                                           const glm::vec3& radians) {
  const int i = static_cast<int>(order);
  SCENECRDT_LOCAL_SETTER({
    c->post_rotation_euler[i] = radians;
    c->present |= LocalComponents::kPostRotationEuler0 << i;
  });
}
void TransformSystem::SetRotationPivot(protocol::EntityId e, const glm::vec3& pivot) {
  SCENECRDT_LOCAL_SETTER({
    c->rotation_pivot = pivot;
    c->present |= LocalComponents::kRotationPivot;
  });
}
void TransformSystem::SetRotationPivotTranslation(protocol::EntityId e, const glm::vec3& t) {
  SCENECRDT_LOCAL_SETTER({
    c->rotation_pivot_translation = t;
    c->present |= LocalComponents::kRotationPivotTranslation;
  });
}
void TransformSystem::SetScalePivot(protocol::EntityId e, const glm::vec3& pivot) {
  SCENECRDT_LOCAL_SETTER({
    c->scale_pivot = pivot;
    c->present |= LocalComponents::kScalePivot;
  });
}
void TransformSystem::SetScalePivotTranslation(protocol::EntityId e, const glm::vec3& t) {
  SCENECRDT_LOCAL_SETTER({
    c->scale_pivot_translation = t;
    c->present |= LocalComponents::kScalePivotTranslation;
  });
}
void TransformSystem::SetCompositeScale(protocol::EntityId e, const glm::mat4& m) {
  SCENECRDT_LOCAL_SETTER({
    c->composite_scale = MakeAffine(m);
    c->present |= LocalComponents::kCompositeScale;
  });
}
void TransformSystem::SetParentScaleInverse(protocol::EntityId e, bool enabled) {
  if (!enabled) {
    SCENECRDT_LOCAL_REMOVER(LocalComponents::kParentScaleInverse);
    return;
  }
  SCENECRDT_LOCAL_SETTER({ c->present |= LocalComponents::kParentScaleInverse; });
}
void TransformSystem::SetLocalToParentOverride(protocol::EntityId e, const glm::mat4& m) {
  SCENECRDT_LOCAL_SETTER({
    c->local_to_parent = MakeAffine(m);
    c->present |= LocalComponents::kLocalToParent;
  });
}
void TransformSystem::RemoveLocalToParentOverride(protocol::EntityId e) {
  SCENECRDT_LOCAL_REMOVER(LocalComponents::kLocalToParent);
}
void TransformSystem::SetLocalToWorldOverride(protocol::EntityId e, const glm::mat4& m) {
  SCENECRDT_LOCAL_SETTER({
    c->local_to_world = MakeAffine(m);
    c->present |= LocalComponents::kLocalToWorld;
  });
}
void TransformSystem::RemoveLocalToWorldOverride(protocol::EntityId e) {
  SCENECRDT_LOCAL_REMOVER(LocalComponents::kLocalToWorld);
}
void TransformSystem::SetStatic(protocol::EntityId e, bool is_static) {
  if (!is_static) {
    SCENECRDT_LOCAL_REMOVER(LocalComponents::kStatic);
    return;
  }
  SCENECRDT_LOCAL_SETTER({ c->present |= LocalComponents::kStatic; });
}
void TransformSystem::ClearLocalComponents(protocol::EntityId e) { SCENECRDT_LOCAL_REMOVER(~0u); }

#undef SCENECRDT_LOCAL_SETTER
#undef SCENECRDT_LOCAL_REMOVER

const LocalComponents* TransformSystem::GetLocalComponents(protocol::EntityId e) const {
  const uint32_t id = RecordOf(e);
  return id == kNoSlot ? nullptr : &records_[id].components;
}

void TransformSystem::MarkAllDirty() { propagation_->MarkAllDirty(); }

// ---- Update ----

void TransformSystem::Update(const UpdateOptions& options) {
  graph_.ApplyPending();
  EnsureRecordSlots();
  const std::span<const uint32_t> changes = graph_.structure_changes();
  for (uint32_t s : changes) Unfreeze(s);  // a moved Static entity is recomputed once
  propagation_->ApplyStructure(graph_, changes, record_of_slot_);
  graph_.ClearStructureChanges();
  ++update_number_;
  internal::ComputeInputs in;
  in.graph = &graph_;
  in.records = records_;
  in.record_of_slot = record_of_slot_;
  in.update_number = update_number_;
  propagation_->Compute(in, options.threads);
  graph_.ReleaseUnused(
      [this](uint32_t s) { return s < record_of_slot_.size() && record_of_slot_[s] != kNoSlot; });
  changed_valid_ = false;
}

// ---- Reads ----

std::span<const glm::mat4> TransformSystem::world_matrices() const { return propagation_->world(); }

uint64_t TransformSystem::layout_version() const { return propagation_->layout_version(); }

std::optional<uint32_t> TransformSystem::IndexOf(protocol::EntityId e) const {
  if (e == protocol::kRootEntity) return 0u;
  const uint32_t slot = graph_.Find(e);
  if (slot == kNoSlot) return std::nullopt;
  const uint32_t pos = propagation_->pos_of_slot(slot);
  if (pos == internal::kNoPos) return std::nullopt;
  return pos;
}

std::optional<glm::mat4> TransformSystem::WorldMatrix(protocol::EntityId e) const {
  const std::optional<uint32_t> index = IndexOf(e);
  if (!index.has_value()) return std::nullopt;
  return world_matrices()[*index];
}

protocol::EntityId TransformSystem::EffectiveParent(protocol::EntityId e) const {
  const uint32_t slot = graph_.Find(e);
  if (slot == kNoSlot) return protocol::kRootEntity;
  const uint32_t p = graph_.effective_parent(slot);
  return p == kNoSlot ? protocol::kRootEntity : graph_.entity(p);
}

bool TransformSystem::IsParked(protocol::EntityId e) const {
  const uint32_t slot = graph_.Find(e);
  return slot != kNoSlot && graph_.is_parked(slot);
}

bool TransformSystem::IsPlaceholder(protocol::EntityId e) const {
  const uint32_t slot = graph_.Find(e);
  return slot != kNoSlot && graph_.is_placeholder(slot);
}

bool TransformSystem::IsNode(protocol::EntityId e) const {
  const uint32_t slot = graph_.Find(e);
  return slot != kNoSlot && graph_.is_node(slot);
}

const protocol::Transform* TransformSystem::GetTransform(protocol::EntityId e) const {
  if (e == protocol::kRootEntity) return &root_transform_;
  const uint32_t slot = graph_.Find(e);
  if (slot == kNoSlot || !graph_.has_transform(slot)) return nullptr;
  return &graph_.transform(slot);
}

std::span<const protocol::EntityId> TransformSystem::changed_entities() const {
  if (changed_valid_) return changed_;
  changed_.clear();
  if (propagation_->all_changed()) {
    changed_.reserve(graph_.num_nodes());
    propagation_->ForEachInSequence(
        [&](uint32_t pos) { changed_.push_back(graph_.entity(propagation_->slot_of_pos(pos))); });
  } else {
    for (const auto& [begin, end] : propagation_->computed_intervals()) {
      for (uint32_t pos = begin; pos < end; ++pos) {
        const uint32_t slot = propagation_->slot_of_pos(pos);
        const uint32_t id = record_of_slot_.size() > slot ? record_of_slot_[slot] : kNoSlot;
        if (id != kNoSlot && records_[id].components.Has(LocalComponents::kStatic) &&
            records_[id].computed_update != update_number_) {
          continue;  // frozen, not recomputed
        }
        changed_.push_back(graph_.entity(slot));
      }
    }
  }
  changed_valid_ = true;
  return changed_;
}

std::vector<NodeInfo> TransformSystem::Nodes() const {
  std::vector<NodeInfo> nodes;
  nodes.reserve(graph_.num_nodes());
  for (uint32_t s = 0; s < graph_.num_slots(); ++s) {
    if (!graph_.is_node(s)) continue;
    NodeInfo n;
    n.entity = graph_.entity(s);
    const uint32_t eff = graph_.effective_parent(s);
    n.effective_parent = eff == kNoSlot ? protocol::kRootEntity : graph_.entity(eff);
    n.declared_parent =
        graph_.is_placeholder(s) ? protocol::kRootEntity : graph_.transform(s).parent;
    n.parked = graph_.is_parked(s);
    n.placeholder = graph_.is_placeholder(s);
    n.index = propagation_->pos_of_slot(s);
    nodes.push_back(n);
  }
  std::sort(nodes.begin(), nodes.end(),
            [](const NodeInfo& a, const NodeInfo& b) { return a.entity < b.entity; });
  return nodes;
}

// ---- Tuning and introspection ----

void TransformSystem::SetLayoutPolicy(const LayoutPolicy& policy) {
  propagation_->SetPolicy(policy);
  graph_.set_min_bulk_changes(policy.min_bulk_graph_changes);
}

PropagationStats TransformSystem::stats() const { return propagation_->stats(); }

bool TransformSystem::CheckLayout() const { return propagation_->CheckLayout(graph_); }

// ---- Decomposition ----

Decomposed DecomposeWorld(const glm::mat4& m) {
  Decomposed d;
  d.translation = glm::vec3(m[3]);
  const glm::vec3 c0(m[0]), c1(m[1]), c2(m[2]);
  const float l0 = glm::length(c0), l1 = glm::length(c1), l2 = glm::length(c2);
  auto cosine = [](const glm::vec3& a, const glm::vec3& b, float la, float lb) {
    return la > 0.0f && lb > 0.0f ? std::fabs(glm::dot(a, b)) / (la * lb) : 0.0f;
  };
  d.shear = std::max({cosine(c0, c1, l0, l1), cosine(c0, c2, l0, l2), cosine(c1, c2, l1, l2)});
  d.has_shear = d.shear > 1e-4f;
  // Gram-Schmidt: x axis first, then y orthogonalised against x, then z against both.
  const glm::vec3 kAxes[3] = {{1, 0, 0}, {0, 1, 0}, {0, 0, 1}};
  glm::vec3 n0 = l0 > 0.0f ? c0 / l0 : kAxes[0];
  glm::vec3 u1 = c1 - glm::dot(c1, n0) * n0;
  const float s1 = glm::length(u1);
  glm::vec3 n1 = s1 > 0.0f ? u1 / s1 : glm::normalize(glm::cross(kAxes[2], n0));
  const glm::vec3 u2 = c2 - glm::dot(c2, n0) * n0 - glm::dot(c2, n1) * n1;
  glm::vec3 n2 = glm::cross(n0, n1);
  float sz = glm::dot(u2, n2);  // signed: negative for a mirrored basis
  float sx = l0;
  if (sz < 0.0f) {
    // Put the mirror on x (UE convention) so the rotation is proper.
    sx = -sx;
    sz = -sz;
    n0 = -n0;
    n2 = glm::cross(n0, n1);
  }
  d.scale = glm::vec3(sx, s1, sz);
  d.rotation = glm::quat_cast(glm::mat3(n0, n1, n2));
  return d;
}

}  // namespace scenecrdt::runtime
