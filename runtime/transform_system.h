// SPDX-License-Identifier: Apache-2.0
// Owns TransformSystem: the transform side of the runtime in one class. It takes the
// replicated state ("entity E now has this Transform" / "has none"), the local components a
// renderer attaches, and once per frame (Update) produces world matrices:
//   SceneGraph (effective parents, loops parked at root, placeholders)
//   -> Pipeline (DOTS local components -> LocalToParent)
//   -> Propagation (preorder flat arrays, dirty subtrees, any number of threads; internal,
//      behind a pointer: runtime/transform/propagation.h).
// Identical inputs give bit-identical world matrices whatever the call order or thread count
// (Static entities excepted: freezing is history by definition). Single-threaded API: call it
// from one thread; Update may use persistent helper threads internally (UpdateOptions).
//
// Entity ids are the full u32 DCL ids (number | version << 16), opaque keys here: 600v1 is
// not 600v0. Entity 0 is the root: its Transform is stored and ignored (ADR-219).
// Reads reflect the last Update() and stay valid until the next Update().
#pragma once

#include <cstdint>
#include <glm/gtc/quaternion.hpp>
#include <glm/mat4x4.hpp>
#include <glm/vec3.hpp>
#include <memory>
#include <optional>
#include <span>
#include <vector>

#include "scenecrdt/protocol/entity_id.h"
#include "scenecrdt/protocol/transform.h"
#include "scenecrdt/runtime/pipeline.h"
#include "scenecrdt/runtime/propagation_policy.h"
#include "scenecrdt/runtime/scene_graph.h"

namespace scenecrdt::runtime {

namespace internal {
class Propagation;
struct ComponentRecord;
}  // namespace internal

struct UpdateOptions {
  // Threads for large updates (the caller's plus persistent helpers, started on first use);
  // 0 or less: one per hardware thread. At most 64. Results are bit-identical for any value.
  int threads = 0;
};

// One node of the effective tree (tools, inspect, replay --world).
struct NodeInfo {
  protocol::EntityId entity = 0;
  protocol::EntityId effective_parent = 0;  // 0 = root
  protocol::EntityId declared_parent = 0;   // the Transform's parent (0 for placeholders)
  bool parked = false;                      // loop member parked at root
  bool placeholder = false;                 // parent without a Transform: identity at root
  uint32_t index = 0;                       // into world_matrices()
};

class TransformSystem {
 public:
  // A moved-from TransformSystem may only be destroyed or assigned to.
  TransformSystem();
  ~TransformSystem();
  TransformSystem(TransformSystem&&) noexcept;
  TransformSystem& operator=(TransformSystem&&) noexcept;
  TransformSystem(const TransformSystem&) = delete;
  TransformSystem& operator=(const TransformSystem&) = delete;

  // ---- Replicated state (from CRDT changes) ----
  void SetTransform(protocol::EntityId entity, const protocol::Transform& t);
  // Transform deleted, or entity deleted. The entity becomes a placeholder if it still has
  // children, and disappears otherwise. No-op when it has no Transform.
  void RemoveTransform(protocol::EntityId entity);

  // ---- Local, non-replicated components (DOTS rules: docs/PIPELINE.md) ----
  // Angles in radians. They apply to any node (entities with a Transform and placeholders);
  // attached to an entity that is not a node they wait until it becomes one. To drop one
  // component without a Remove* below, ClearLocalComponents and set the others again.
  void SetRotationEuler(protocol::EntityId e, EulerOrder order, const glm::vec3& radians);
  void RemoveRotationEuler(protocol::EntityId e, EulerOrder order);
  void SetPostRotation(protocol::EntityId e, const glm::quat& q);
  void SetPostRotationEuler(protocol::EntityId e, EulerOrder order, const glm::vec3& radians);
  void SetRotationPivot(protocol::EntityId e, const glm::vec3& pivot);
  void SetRotationPivotTranslation(protocol::EntityId e, const glm::vec3& t);
  void SetScalePivot(protocol::EntityId e, const glm::vec3& pivot);
  void SetScalePivotTranslation(protocol::EntityId e, const glm::vec3& t);
  // A user-written CompositeScale (replaces the built one).
  void SetCompositeScale(protocol::EntityId e, const glm::mat4& m);
  // Scale compensation: LocalToParent gets ParentScaleInverse = (scale of the effective
  // parent)^-1 after Translation.
  void SetParentScaleInverse(protocol::EntityId e, bool enabled);
  // Write-group overrides: a user LocalToParent replaces the TRS pipeline; a user
  // LocalToWorld replaces everything (parent ignored). LocalToWorld wins over LocalToParent.
  // Matrices are made affine (last row 0 0 0 1).
  void SetLocalToParentOverride(protocol::EntityId e, const glm::mat4& m);
  void RemoveLocalToParentOverride(protocol::EntityId e);
  void SetLocalToWorldOverride(protocol::EntityId e, const glm::mat4& m);
  void RemoveLocalToWorldOverride(protocol::EntityId e);
  // Static: the world matrix is computed once, then frozen until the entity's own inputs
  // change (its Transform, parent, local components). Parent motion does not move it.
  void SetStatic(protocol::EntityId e, bool is_static);
  void ClearLocalComponents(protocol::EntityId e);
  // The entity's local components, or nullptr.
  const LocalComponents* GetLocalComponents(protocol::EntityId e) const;

  // Every world matrix is recomputed by the next Update (e.g. after a device reset).
  void MarkAllDirty();

  // ---- Once per frame ----
  void Update(const UpdateOptions& options = {});

  // ---- Renderer reads (valid until the next Update) ----
  // Contiguous column-major 4x4 world matrices. Index 0 is the root (identity); indices of
  // removed entities hold stale matrices until the layout is next rebuilt.
  std::span<const glm::mat4> world_matrices() const;
  // Index into world_matrices(); nullopt when the entity is not a node. IndexOf(0) == 0.
  // Indices are stable except for new nodes and after a layout rebuild (layout_version()).
  std::optional<uint32_t> IndexOf(protocol::EntityId e) const;
  // The world matrix of a node, or nullopt.
  std::optional<glm::mat4> WorldMatrix(protocol::EntityId e) const;
  protocol::EntityId EffectiveParent(protocol::EntityId e) const;  // 0 = root (or unknown)
  bool IsParked(protocol::EntityId e) const;
  bool IsPlaceholder(protocol::EntityId e) const;
  bool IsNode(protocol::EntityId e) const;
  // The replicated Transform (as set, even before Update), or nullptr.
  const protocol::Transform* GetTransform(protocol::EntityId e) const;
  // Entities whose world matrix was recomputed by the last Update (or whose index changed),
  // each once, in layout order. Frozen Static entities are not listed.
  std::span<const protocol::EntityId> changed_entities() const;
  // Every node (entities with a Transform + placeholders), sorted by entity id.
  std::vector<NodeInfo> Nodes() const;
  std::size_t num_nodes() const { return graph_.num_nodes(); }
  // Bumped whenever existing indices move (layout rebuild): re-upload everything.
  uint64_t layout_version() const;

  // ---- Tuning and introspection (tests, benchmarks) ----
  void SetLayoutPolicy(const LayoutPolicy& policy);
  PropagationStats stats() const;
  // Checks every invariant of the preorder layout against the graph (tests).
  bool CheckLayout() const;
  const SceneGraph& graph() const { return graph_; }

 private:
  LocalComponents* MutableLocal(protocol::EntityId e);
  // The record id of `e`'s local components, or kNoSlot.
  uint32_t RecordOf(protocol::EntityId e) const;
  void LocalChanged(protocol::EntityId e);
  void Unfreeze(uint32_t slot);
  void InvalidateRecord(uint32_t slot);
  void EnsureRecordSlots();

  SceneGraph graph_;
  std::unique_ptr<internal::Propagation> propagation_;
  std::vector<internal::ComponentRecord> records_;  // by record id
  std::vector<uint32_t> free_records_;
  std::vector<uint32_t> record_of_slot_;  // kNoSlot: no local components
  protocol::Transform root_transform_;
  uint64_t update_number_ = 0;
  mutable std::vector<protocol::EntityId> changed_;
  mutable bool changed_valid_ = true;
};

// Decomposition of a world matrix for UIs. Gram-Schmidt on the basis columns: scale is the
// length along each orthogonalised axis (negative x scale for mirrored worlds), rotation the
// orthonormal basis. `shear` is the largest |cos| of the angle between two basis columns (0
// for a pure T R S); a sheared world has no exact TRS and `has_shear` says so.
struct Decomposed {
  glm::vec3 translation{0.0f};
  glm::quat rotation{1.0f, 0.0f, 0.0f, 0.0f};
  glm::vec3 scale{1.0f};
  float shear = 0.0f;
  bool has_shear = false;
};
Decomposed DecomposeWorld(const glm::mat4& m);

}  // namespace scenecrdt::runtime
