// SPDX-License-Identifier: Apache-2.0
// Fuzz target for the framed TCP transport's decompressing path (ZstdFrameReader, what a
// client runs on every byte after a zstd Welcome): any bytes, cut anywhere, are refused or
// turned into whole frames without crashing, with the reader's memory below its bound.
//
// Input: byte 0 picks the mode and the cut. Bit 0 clear: the rest is a compressed stream,
// fed in pieces of (byte 0 >> 1) + 1 bytes. Bit 0 set: the rest is plain bytes that
// ZstdEncoder compresses (flushing every piece); the reader must then return exactly the
// whole frames that cutting the plain bytes by their size prefixes gives, or refuse them for
// the same reason.
#include <cstdint>
#include <cstdlib>
#include <span>
#include <vector>

#include "scenecrdt/protocol/session/envelope.h"
#include "scenecrdt/protocol/session/zstd_stream.h"

using namespace scenecrdt::session;

namespace {

constexpr uint32_t kMaxFrame = 1u << 16;
// One frame buffered plus a decompression step plus the context (window 2^15).
constexpr std::size_t kMemoryBound = kMaxFrame + (64u << 10) + (1u << 20);

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const uint8_t control = data[0];
  const std::span<const uint8_t> rest(data + 1, size - 1);
  const std::size_t piece = (control >> 1) + 1u;
  ZstdFrameReader reader(kMaxFrame);
  std::vector<std::vector<uint8_t>> frames;
  const auto sink = [&](std::span<const uint8_t> f) {
    if (reinterpret_cast<std::uintptr_t>(f.data()) % 8 != 0) std::abort();
    (void)ReadFrame(f, {kMaxFrame});  // must not crash on whatever the stream held
    frames.emplace_back(f.begin(), f.end());
    return true;
  };
  bool failed = false;
  if ((control & 1) == 0) {
    for (std::size_t pos = 0; pos < rest.size() && !failed; pos += piece) {
      failed =
          !reader.Feed(rest.subspan(pos, std::min(piece, rest.size() - pos)), sink).has_value();
      if (reader.memory_bytes() > kMemoryBound) std::abort();
    }
    return 0;
  }
  ZstdEncoder encoder;
  std::vector<uint8_t> wire;
  for (std::size_t pos = 0; pos < rest.size(); pos += piece) {
    wire.clear();
    encoder.Compress(rest.subspan(pos, std::min(piece, rest.size() - pos)), true, wire);
    if (!failed) failed = !reader.Feed(wire, sink).has_value();
    if (reader.memory_bytes() > kMemoryBound) std::abort();
  }
  // The plain cut: whole frames until the first bad prefix or the end.
  std::vector<std::vector<uint8_t>> expected;
  bool bad = false;
  std::size_t pos = 0;
  while (pos < rest.size()) {
    const auto n = PeekFrameSize(rest.subspan(pos));
    if (!n) break;
    if (*n > kMaxFrame || *n <= kSizePrefixBytes) {
      bad = true;
      break;
    }
    if (*n > rest.size() - pos) break;
    expected.emplace_back(rest.begin() + static_cast<std::ptrdiff_t>(pos),
                          rest.begin() + static_cast<std::ptrdiff_t>(pos + *n));
    pos += *n;
  }
  if (frames != expected || failed != bad) std::abort();
  return 0;
}
