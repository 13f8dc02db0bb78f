// SPDX-License-Identifier: Apache-2.0
// Owns the hand-over from the CRDT store's Transform change feed to the TransformSystem.
#include "scenecrdt/runtime/runtime.h"

namespace scenecrdt::runtime {

Runtime::Runtime(StoreLimits limits) : store_(limits) { store_.set_track_transform_changes(true); }

Result<MergeStats> Runtime::ApplyCrdt(std::span<const uint8_t> bytes,
                                      const protocol::DecodeOptions& options) {
  return store_.MergeStream(bytes, options);
}

void Runtime::Update(const UpdateOptions& options) {
  // The feed may name an entity several times; its current register is what counts.
  for (EntityId e : store_.transform_changes()) {
    if (const protocol::Transform* t = store_.FindTransform(e)) {
      transforms_.SetTransform(e, *t);
    } else {
      transforms_.RemoveTransform(e);
    }
  }
  store_.ClearTransformChanges();
  transforms_.Update(options);
}

}  // namespace scenecrdt::runtime
