// SPDX-License-Identifier: Apache-2.0
// Owns AlignedAllocator: a std::allocator replacement that aligns vector storage to a cache line
// (64 bytes), so each 64-byte world matrix occupies exactly one line.
#pragma once

#include <cstddef>
#include <new>

namespace scenecrdt::runtime::internal {

template <class T, std::size_t kAlign = 64>
struct AlignedAllocator {
  using value_type = T;
  template <class U>
  struct rebind {
    using other = AlignedAllocator<U, kAlign>;
  };
  AlignedAllocator() = default;
  template <class U>
  AlignedAllocator(const AlignedAllocator<U, kAlign>&) {}  // NOLINT(google-explicit-constructor)

  T* allocate(std::size_t n) {
    return static_cast<T*>(::operator new (n * sizeof(T), std::align_val_t{kAlign}));
  }
  void deallocate(T* p, std::size_t) { ::operator delete (p, std::align_val_t{kAlign}); }

  template <class U>
  bool operator==(const AlignedAllocator<U, kAlign>&) const {
    return true;
  }
};

}  // namespace scenecrdt::runtime::internal
