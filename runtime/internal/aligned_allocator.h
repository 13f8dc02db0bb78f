// SPDX-License-Identifier: Apache-2.0
// Owns AlignedAllocator: a std::allocator replacement that aligns vector storage to a cache line
// (64 bytes), so each 64-byte world matrix occupies exactly one line, and backs large arrays
// with transparent huge pages where the kernel offers them (docs/PROPAGATION.md, "Huge pages").
#pragma once

#include <cstddef>
#include <new>
#include <vector>

#if defined(__linux__) && !defined(__EMSCRIPTEN__)
#include <sys/mman.h>
#endif

namespace scenecrdt::runtime::internal {

// Arrays of at least this many bytes start on a 2 MiB boundary and are advised as huge-page
// candidates (MADV_HUGEPAGE): the per-position arrays of a 1 M scene span ~130 MB, and a few
// random subtrees per update would otherwise miss the TLB on almost every line (a nested page
// walk under virtualisation). The advice is a hint: where transparent huge pages are off, or
// madvise fails, the memory keeps normal pages and nothing else changes.
inline constexpr std::size_t kHugePageBytes = std::size_t{2} << 20;

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
    const std::size_t bytes = n * sizeof(T);
    void* p = ::operator new (bytes, std::align_val_t{AlignmentFor(bytes)});
#if defined(__linux__) && !defined(__EMSCRIPTEN__) && defined(MADV_HUGEPAGE)
    if (bytes >= kHugePageBytes) {
      (void)madvise(p, bytes / kHugePageBytes * kHugePageBytes, MADV_HUGEPAGE);
    }
#endif
    return static_cast<T*>(p);
  }
  void deallocate(T* p, std::size_t n) {
    ::operator delete (p, std::align_val_t{AlignmentFor(n * sizeof(T))});
  }

  template <class U>
  bool operator==(const AlignedAllocator<U, kAlign>&) const {
    return true;
  }

 private:
  static constexpr std::size_t AlignmentFor(std::size_t bytes) {
    return bytes >= kHugePageBytes && kHugePageBytes > kAlign ? kHugePageBytes : kAlign;
  }
};

// A vector whose storage AlignedAllocator provides.
template <class T>
using AlignedVector = std::vector<T, AlignedAllocator<T>>;

}  // namespace scenecrdt::runtime::internal
