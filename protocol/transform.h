// SPDX-License-Identifier: Apache-2.0
// Owns the replicated Transform (DCL core::Transform, component 1): its 44-byte little-endian
// wire layout, the identity value, and bit-exact load/store.
//
// Layout (docs/PROTOCOL.md): position xyz f32 @0, rotation xyzw f32 @12, scale xyz f32 @28,
// parent u32 @40. Quaternions are stored x, y, z, w (GLM's constructor takes w first: use
// transform_glm.h, never construct glm::quat from these fields by position).
#pragma once

#include <array>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <type_traits>

#include "scenecrdt/protocol/entity_id.h"

namespace scenecrdt::protocol {

struct Vec3f {
  float x = 0.0f, y = 0.0f, z = 0.0f;
};
struct Quatf {
  float x = 0.0f, y = 0.0f, z = 0.0f, w = 1.0f;
};

struct Transform {
  static constexpr std::size_t kSize = 44;

  Vec3f position{0.0f, 0.0f, 0.0f};
  Quatf rotation{0.0f, 0.0f, 0.0f, 1.0f};
  Vec3f scale{1.0f, 1.0f, 1.0f};
  EntityId parent = kRootEntity;
};

// Transform.Identity of ADR-153: position 0, rotation (0,0,0,1), scale 1, parent root.
inline constexpr Transform kIdentityTransform{};

using TransformBytes = std::array<uint8_t, Transform::kSize>;

// The portable field-by-field reader behind LoadTransform (any host byte order).
Transform LoadTransformPortable(std::span<const uint8_t, Transform::kSize> bytes);

// On a little-endian host the struct has the wire layout exactly, so loading is one copy
// (inline: it sits on the merge hot path).
inline constexpr bool kTransformHasWireLayout =
    std::endian::native == std::endian::little && sizeof(Transform) == Transform::kSize &&
    std::is_standard_layout_v<Transform> && std::is_trivially_copyable_v<Transform> &&
    offsetof(Transform, position) == 0 && offsetof(Transform, rotation) == 12 &&
    offsetof(Transform, scale) == 28 && offsetof(Transform, parent) == 40;

// LoadTransform straight into `out` (no temporary: on the merge path a returned copy costs a
// store-forwarding stall).
inline void LoadTransformInto(std::span<const uint8_t, Transform::kSize> bytes, Transform& out) {
  if constexpr (kTransformHasWireLayout) {
    std::memcpy(&out, bytes.data(), Transform::kSize);
  } else {
    out = LoadTransformPortable(bytes);
  }
}

// Reads the 44 bytes at `bytes` (little-endian, any host). Floats keep their exact bits.
inline Transform LoadTransform(std::span<const uint8_t, Transform::kSize> bytes) {
  Transform t;
  LoadTransformInto(bytes, t);
  return t;
}

// Writes the 44-byte little-endian form of `t` into `out`.
void StoreTransform(const Transform& t, std::span<uint8_t, Transform::kSize> out);
TransformBytes StoreTransform(const Transform& t);

// True when every field has the same bits (NaN payloads and -0 included).
bool BitwiseEqual(const Transform& a, const Transform& b);
// True when no float is NaN or infinite.
bool IsFinite(const Transform& t);

}  // namespace scenecrdt::protocol
