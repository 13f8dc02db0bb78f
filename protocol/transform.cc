// SPDX-License-Identifier: Apache-2.0
// Owns the byte-level (de)serialisation of Transform.
#include "scenecrdt/protocol/transform.h"

#include <bit>
#include <cmath>

#include "scenecrdt/protocol/byte_order.h"

namespace scenecrdt::protocol {
namespace {
constexpr std::size_t kPositionOffset = 0;
constexpr std::size_t kRotationOffset = 12;
constexpr std::size_t kScaleOffset = 28;
constexpr std::size_t kParentOffset = 40;
}  // namespace

Transform LoadTransformPortable(std::span<const uint8_t, Transform::kSize> bytes) {
  const uint8_t* p = bytes.data();
  Transform t;
  t.position = {LoadF32Le(p + kPositionOffset), LoadF32Le(p + kPositionOffset + 4),
                LoadF32Le(p + kPositionOffset + 8)};
  t.rotation = {LoadF32Le(p + kRotationOffset), LoadF32Le(p + kRotationOffset + 4),
                LoadF32Le(p + kRotationOffset + 8), LoadF32Le(p + kRotationOffset + 12)};
  t.scale = {LoadF32Le(p + kScaleOffset), LoadF32Le(p + kScaleOffset + 4),
             LoadF32Le(p + kScaleOffset + 8)};
  t.parent = LoadU32Le(p + kParentOffset);
  return t;
}

void StoreTransform(const Transform& t, std::span<uint8_t, Transform::kSize> out) {
  uint8_t* p = out.data();
  StoreF32Le(p + kPositionOffset, t.position.x);
  StoreF32Le(p + kPositionOffset + 4, t.position.y);
  StoreF32Le(p + kPositionOffset + 8, t.position.z);
  StoreF32Le(p + kRotationOffset, t.rotation.x);
  StoreF32Le(p + kRotationOffset + 4, t.rotation.y);
  StoreF32Le(p + kRotationOffset + 8, t.rotation.z);
  StoreF32Le(p + kRotationOffset + 12, t.rotation.w);
  StoreF32Le(p + kScaleOffset, t.scale.x);
  StoreF32Le(p + kScaleOffset + 4, t.scale.y);
  StoreF32Le(p + kScaleOffset + 8, t.scale.z);
  StoreU32Le(p + kParentOffset, t.parent);
}

TransformBytes StoreTransform(const Transform& t) {
  TransformBytes bytes;
  StoreTransform(t, bytes);
  return bytes;
}

bool BitwiseEqual(const Transform& a, const Transform& b) {
  return StoreTransform(a) == StoreTransform(b);
}

bool IsFinite(const Transform& t) {
  const float fs[] = {t.position.x, t.position.y, t.position.z, t.rotation.x, t.rotation.y,
                      t.rotation.z, t.rotation.w, t.scale.x,    t.scale.y,    t.scale.z};
  for (float f : fs) {
    if (!std::isfinite(f)) return false;
  }
  return true;
}

}  // namespace scenecrdt::protocol
