// SPDX-License-Identifier: Apache-2.0
// Owns the printf-style formatting of the client's log lines (internal: not installed).
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>

namespace scenecrdt::client::internal {

template <class... Args>
std::string Format(const char* fmt, Args... args) {
  char line[512];
  std::snprintf(line, sizeof line, fmt, args...);
  return line;
}

inline unsigned long long Ull(uint64_t v) { return static_cast<unsigned long long>(v); }

}  // namespace scenecrdt::client::internal
