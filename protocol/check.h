// SPDX-License-Identifier: Apache-2.0
// Owns SCENECRDT_CHECK / SCENECRDT_DCHECK: invariants of our own code (programmer errors).
// Never use them on wire data or user input; those get a Result error instead.
#pragma once

#include <cstdio>
#include <cstdlib>

namespace scenecrdt::internal {
[[noreturn]] inline void CheckFailed(const char* file, int line, const char* cond,
                                     const char* msg) {
  std::fprintf(stderr, "%s:%d: CHECK failed: %s: %s\n", file, line, cond, msg);
  std::abort();
}
}  // namespace scenecrdt::internal

#define SCENECRDT_CHECK(cond, msg)                                        \
  do {                                                                    \
    if (!(cond)) [[unlikely]]                                             \
      ::scenecrdt::internal::CheckFailed(__FILE__, __LINE__, #cond, msg); \
  } while (false)

#ifdef NDEBUG
#define SCENECRDT_DCHECK(cond, msg) \
  do {                              \
  } while (false)
#else
#define SCENECRDT_DCHECK(cond, msg) SCENECRDT_CHECK(cond, msg)
#endif
