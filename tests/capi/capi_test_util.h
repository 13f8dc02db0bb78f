// SPDX-License-Identifier: Apache-2.0
// Shared helpers of the C ABI suites: seeded random DCL streams that exercise the merge and
// tree rules (reparents, loops, deletes, versions, timestamp ties, unknown types), the
// reference result `scenecrdt replay --world` computes for the same bytes (through the C++
// runtime), and RAII ownership of an sc_runtime.
#pragma once

#include <gtest/gtest.h>

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "scenecrdt/scenecrdt.h"

namespace scenecrdt::capi_test {

struct RuntimeDeleter {
  void operator()(sc_runtime* rt) const { sc_runtime_destroy(rt); }
};
using RuntimePtr = std::unique_ptr<sc_runtime, RuntimeDeleter>;
RuntimePtr MakeRuntime();

// A DCL stream of `messages` messages over a few dozen entities, from `seed`.
std::vector<uint8_t> RandomStream(uint64_t seed, int messages);

// A Transform PUT of entity `entity` at `timestamp` with local position `x`, parent `parent`.
std::vector<uint8_t> TransformPut(uint32_t entity, uint32_t timestamp, float x,
                                  uint32_t parent = 0);

// One node of the reference world, as `replay --world` prints it.
struct WorldNode {
  uint32_t entity = 0;
  uint32_t parent = 0;
  bool parked = false;
  bool placeholder = false;
  std::array<float, 16> matrix{};
};
struct Reference {
  std::vector<WorldNode> world;  // sorted by entity
  std::string state_hash;
};
// What `scenecrdt replay --world` reports for `stream` alone (cmd_replay.cc: a strict decode
// of the whole stream, then ApplyMessage for each message, then one Update).
Reference Replay(const std::vector<uint8_t>& stream);

// The C ABI's view of the same: copy_world, node_info and state_hash.
Reference ReadBack(const sc_runtime* rt);

// Bitwise equality of two float arrays (NaN payloads included).
bool SameBits(const float* a, const float* b, std::size_t n);

}  // namespace scenecrdt::capi_test

// Asserts SC_OK, printing the status name and sc_last_error() otherwise.
#define SC_ASSERT_OK(expr)                                                             \
  do {                                                                                 \
    const int sc_status_ = (expr);                                                     \
    ASSERT_EQ(sc_status_, SC_OK) << #expr << ": " << sc_error_name(sc_status_) << ": " \
                                 << sc_last_error();                                   \
  } while (false)
