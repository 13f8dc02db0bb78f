// SPDX-License-Identifier: Apache-2.0
// Tests that what a renderer includes compiles alone and keeps propagation's internals out of
// its build: this translation unit includes only scenecrdt/runtime/runtime.h, and fails to
// compile when x86 intrinsics, the aligned allocator or the definition of the internal
// Propagation come with it (public_header_check.cmake checks the whole include list).
#include "scenecrdt/runtime/runtime.h"

#if defined(_XMMINTRIN_H_INCLUDED) || defined(__XMMINTRIN_H) || defined(_EMMINTRIN_H_INCLUDED) || \
    defined(__EMMINTRIN_H) || defined(_IMMINTRIN_H_INCLUDED) || defined(__IMMINTRIN_H)
#error "scenecrdt/runtime/runtime.h includes x86 intrinsics (propagation internals leak)"
#endif

#include <gtest/gtest.h>

#include <vector>

// Redeclaring the class template as a plain class compiles only while
// runtime/internal/aligned_allocator.h is not included.
namespace scenecrdt::runtime::internal {
struct AlignedAllocator;
}  // namespace scenecrdt::runtime::internal

namespace scenecrdt::runtime {
namespace {

template <class T>
constexpr bool kIsComplete = requires {
  sizeof(T);
};
static_assert(!kIsComplete<internal::Propagation>,
              "TransformSystem must hold Propagation behind a pointer");

// The facade works through the public header alone.
TEST(PublicHeaderTest, RuntimeHeaderAloneDrivesTheRuntime) {
  Runtime runtime;
  protocol::Transform t;
  t.position = {1.0f, 2.0f, 3.0f};
  std::vector<uint8_t> out;
  ASSERT_TRUE(runtime.WriteTransform(600, t, out).has_value());
  runtime.Update();
  const std::optional<uint32_t> index = runtime.IndexOf(600);
  ASSERT_TRUE(index.has_value());
  const glm::mat4& world = runtime.world_matrices()[*index];
  EXPECT_EQ(world[3][0], 1.0f);
  EXPECT_EQ(world[3][1], 2.0f);
  EXPECT_EQ(world[3][2], 3.0f);
  EXPECT_EQ(runtime.transforms().stats().live, 1u);
}

}  // namespace
}  // namespace scenecrdt::runtime
