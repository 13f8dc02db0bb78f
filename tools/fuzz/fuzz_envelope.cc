// SPDX-License-Identifier: Apache-2.0
// Fuzz target for the session envelope reader: verify-then-read must refuse or accept any
// bytes without crashing; an accepted frame rebuilds to a frame that reads back the same.
#include <cstdint>
#include <cstdlib>
#include <variant>

#include "scenecrdt/protocol/session/envelope.h"

using namespace scenecrdt::session;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  ReadOptions options;
  options.max_frame_bytes = 1u << 16;
  auto frame = ReadFrame(std::span<const uint8_t>(data, size), options);
  if (!frame.has_value()) return 0;
  const std::vector<uint8_t> rebuilt = BuildFrame(*frame);
  auto again = ReadFrame(rebuilt, options);
  if (!again.has_value() || again->index() != frame->index()) std::abort();
  if (BuildFrame(*again) != rebuilt) std::abort();
  return 0;
}
