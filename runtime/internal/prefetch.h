// SPDX-License-Identifier: Apache-2.0
// Owns the software-prefetch hints of the runtime's hot loops (CRDT merge, propagation).
// g++ 12's dead code elimination drops __builtin_prefetch in some inlined contexts (it removed
// every hint of CrdtStore::MergeStream's pipeline at -O1..-O3), so on x86-64 the hint is an
// `asm volatile` the optimiser must keep. The operand is never dereferenced by the compiler,
// and a prefetch never faults: an address past the end is harmless.
#pragma once

namespace scenecrdt::runtime::internal {

inline void PrefetchForRead(const void* p) {
#if defined(__x86_64__)
  asm volatile("prefetcht0 %0" : : "m"(*static_cast<const char*>(p)));
#elif defined(__GNUC__) || defined(__clang__)
  __builtin_prefetch(p, 0, 3);
#else
  (void)p;
#endif
}

// Into the cache for a write. x86-64 uses prefetcht0 as well: PREFETCHW is not in the
// x86-64 baseline, and the line is in the cache either way.
inline void PrefetchForWrite(const void* p) {
#if defined(__x86_64__)
  asm volatile("prefetcht0 %0" : : "m"(*static_cast<const char*>(p)));
#elif defined(__GNUC__) || defined(__clang__)
  __builtin_prefetch(p, 1, 3);
#else
  (void)p;
#endif
}

}  // namespace scenecrdt::runtime::internal
