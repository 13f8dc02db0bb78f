// SPDX-License-Identifier: Apache-2.0
// Owns the choice of LocalToParent kind per entity and its cached matrices (see
// local_to_parent_cache.h). The formulas themselves are the pipeline's (pipeline.h).
#include "scenecrdt/runtime/transform/local_to_parent_cache.h"

namespace scenecrdt::runtime::internal {
namespace {

// Components that change LocalToParent (besides the overrides and ParentScaleInverse).
constexpr uint32_t kLocalToParentInputs = LocalComponents::kRotationEulerMask |
                                          LocalComponents::kCompositeRotationInputs |
                                          LocalComponents::kCompositeScaleInputs;

}  // namespace

void LocalToParentCaches::Invalidate(uint32_t record_id) {
  if (record_id >= caches_.size()) caches_.resize(record_id + 1);
  if (caches_[record_id].stale) return;
  caches_[record_id].stale = true;
  stale_.push_back(record_id);
}

void LocalToParentCaches::Refresh(const ComputeInputs& in) {
  for (uint32_t id : stale_) {
    if (id < caches_.size() && caches_[id].stale) Compute(in, id);
  }
  stale_.clear();
}

void LocalToParentCaches::Compute(const ComputeInputs& in, uint32_t record_id) {
  LocalToParentCache& c = caches_[record_id];
  c = LocalToParentCache{};
  if (record_id >= in.records.size() || in.records[record_id].slot == kNoSlot) return;
  const LocalComponents& comp = in.records[record_id].components;
  const protocol::Transform& t = in.graph->transform(in.records[record_id].slot);
  c.is_static = comp.Has(LocalComponents::kStatic);
  c.has_scale_inverse = HasCompositeScale(&comp);
  if (c.has_scale_inverse) c.scale_inverse = AffineFromMat4(CompositeScaleInverseMatrix(t, comp));
  if (comp.Has(LocalComponents::kLocalToWorld)) {
    c.kind = LocalToParentCache::kWorld;
    c.local = AffineFromMat4(comp.local_to_world);  // made affine when set
  } else if (comp.Has(LocalComponents::kLocalToParent)) {
    c.kind = LocalToParentCache::kMatrix;
    c.local = AffineFromMat4(comp.local_to_parent);
  } else if (comp.Has(LocalComponents::kParentScaleInverse)) {
    // The parent's scale is read at compute time; everything after it is cached.
    c.kind = LocalToParentCache::kCompensated;
    c.local = AffineFromMat4(RotationScaleMatrix(t, comp));
    c.position[0] = t.position.x;
    c.position[1] = t.position.y;
    c.position[2] = t.position.z;
  } else if (comp.Has(kLocalToParentInputs)) {
    c.kind = LocalToParentCache::kMatrix;
    c.local = AffineFromMat4(LocalToParentMatrix(t, &comp));
  } else {
    c.kind = LocalToParentCache::kTrs;  // e.g. Static only: the plain TRS path
  }
}

}  // namespace scenecrdt::runtime::internal
