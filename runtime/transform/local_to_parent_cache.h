// SPDX-License-Identifier: Apache-2.0
// Owns LocalToParentCaches: for every entity with local components, what the block kernels
// need of its LocalToParent, computed once with the pipeline's formulas (pipeline.h) when its
// inputs change and reused by every update in between (docs/PROPAGATION.md, "Pipeline").
#pragma once

#include <cstdint>
#include <vector>

#include "scenecrdt/runtime/transform/affine.h"
#include "scenecrdt/runtime/transform/component_records.h"

namespace scenecrdt::runtime::internal {

// One entity's cached LocalToParent (read by every compute; the components themselves stay in
// ComponentRecord).
struct LocalToParentCache {
  enum Kind : uint8_t {
    kTrs,          // nothing changes LocalToParent (e.g. Static only): the plain kernel
    kMatrix,       // LocalToParent = local
    kCompensated,  // LocalToParent = Translation(position) * ParentScaleInverse * local
    kWorld,        // LocalToWorld override: world = local
  };
  Affine local = kIdentityAffine;
  float position[3] = {0.0f, 0.0f, 0.0f};
  // Inverse of this entity's CompositeScale, for children with ParentScaleInverse.
  Affine scale_inverse = kIdentityAffine;
  Kind kind = kTrs;
  bool is_static = false;
  bool has_scale_inverse = false;
  bool stale = false;  // listed for the next Refresh
};

// ParentScaleInverse of a child of the entity at a non-root position whose cache (nullptr for
// a plain entity) and local TRS are given: the inverse of its CompositeScale if it has one,
// else 1 / its scale per axis, a zero scale inverting to zero so that a collapsed parent does
// not poison the subtree with NaN. A child of the root takes identity.
inline Affine ParentScaleInverse(const LocalToParentCache* parent, const LocalTrs& parent_local) {
  if (parent != nullptr && parent->has_scale_inverse) return parent->scale_inverse;
  Affine psi = kIdentityAffine;
  for (int k = 0; k < 3; ++k) {
    const float s = parent_local.s[k];
    psi.rs.c[k][k] = s == 0.0f ? 0.0f : 1.0f / s;
  }
  return psi;
}

class LocalToParentCaches {
 public:
  // The inputs of record `record_id` changed (its components or its entity's Transform).
  void Invalidate(uint32_t record_id);
  // Recomputes every invalidated cache.
  void Refresh(const ComputeInputs& in);
  const LocalToParentCache& operator[](uint32_t record_id) const { return caches_[record_id]; }

 private:
  void Compute(const ComputeInputs& in, uint32_t record_id);

  std::vector<LocalToParentCache> caches_;  // by record id
  std::vector<uint32_t> stale_;
};

}  // namespace scenecrdt::runtime::internal
