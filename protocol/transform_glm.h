// SPDX-License-Identifier: Apache-2.0
// Owns conversions between the wire Transform types and GLM. Quaternions are copied member by
// member because glm::quat's constructor takes w first while the wire order is x, y, z, w.
#pragma once

#include <glm/gtc/quaternion.hpp>
#include <glm/vec3.hpp>

#include "scenecrdt/protocol/transform.h"

namespace scenecrdt::protocol {

inline glm::vec3 ToGlm(const Vec3f& v) { return glm::vec3(v.x, v.y, v.z); }
inline glm::quat ToGlm(const Quatf& q) {
  glm::quat r;
  r.x = q.x;
  r.y = q.y;
  r.z = q.z;
  r.w = q.w;
  return r;
}
inline Vec3f FromGlm(const glm::vec3& v) { return Vec3f{v.x, v.y, v.z}; }
inline Quatf FromGlm(const glm::quat& q) { return Quatf{q.x, q.y, q.z, q.w}; }

}  // namespace scenecrdt::protocol
