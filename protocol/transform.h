// SPDX-License-Identifier: Apache-2.0
// Owns the replicated Transform (DCL core::Transform, component 1): its 44-byte little-endian
// wire layout, the identity value, and bit-exact load/store.
//
// Layout (docs/PROTOCOL.md): position xyz f32 @0, rotation xyzw f32 @12, scale xyz f32 @28,
// parent u32 @40. Quaternions are stored x, y, z, w (GLM's constructor takes w first: use
// transform_glm.h, never construct glm::quat from these fields by position).
#pragma once

#include <array>
#include <cstdint>
#include <span>

#include "protocol/entity_id.h"

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

// Reads the 44 bytes at `bytes` (little-endian, any host). Floats keep their exact bits.
Transform LoadTransform(std::span<const uint8_t, Transform::kSize> bytes);
// Writes the 44-byte little-endian form of `t` into `out`.
void StoreTransform(const Transform& t, std::span<uint8_t, Transform::kSize> out);
TransformBytes StoreTransform(const Transform& t);

// True when every field has the same bits (NaN payloads and -0 included).
bool BitwiseEqual(const Transform& a, const Transform& b);
// True when no float is NaN or infinite.
bool IsFinite(const Transform& t);

}  // namespace scenecrdt::protocol
