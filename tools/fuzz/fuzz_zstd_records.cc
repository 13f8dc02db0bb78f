// SPDX-License-Identifier: Apache-2.0
// Fuzz target for the "zstd frames" records (ZstdRecordReader, what a client runs on every
// byte after a Welcome with compression = zstd frames): any bytes, cut anywhere, are refused
// or turned into whole frames without crashing, with the reader's memory below its bound.
//
// Input: byte 0 picks the mode and the cut. Bit 0 clear: the rest is a record stream, fed in
// pieces of (byte 0 >> 1) + 1 bytes. Bit 0 set: the rest is plain bytes, cut into frames by
// their size prefixes; ZstdRecordEncoder turns each into a record (what the server sends);
// the reader must return exactly those frames (first), and refuse nothing unless a bad
// prefix (whose bytes follow the records as they are) ended the cut.
#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <span>
#include <vector>

#include "scenecrdt/protocol/session/envelope.h"
#include "scenecrdt/protocol/session/zstd_records.h"

using namespace scenecrdt::session;

namespace {

constexpr uint32_t kMaxFrame = 1u << 16;
// The buffer (one record, a little above kMaxFrame when compressed, plus one piece), one
// decompressed frame and the decompression context.
constexpr std::size_t kMemoryBound = 2 * kMaxFrame + (1u << 20);

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const uint8_t control = data[0];
  const std::span<const uint8_t> rest(data + 1, size - 1);
  const std::size_t piece = (control >> 1) + 1u;
  ZstdRecordReader reader(kMaxFrame);
  std::vector<std::vector<uint8_t>> frames;
  const auto sink = [&](std::span<const uint8_t> f) {
    if (reinterpret_cast<std::uintptr_t>(f.data()) % 8 != 0) std::abort();
    if (PeekFrameSize(f) != f.size() || f.size() > kMaxFrame) std::abort();
    (void)ReadFrame(f, {kMaxFrame});  // must not crash on whatever the record held
    frames.emplace_back(f.begin(), f.end());
    return true;
  };
  const auto feed = [&](std::span<const uint8_t> wire) {
    bool failed = false;
    for (std::size_t pos = 0; pos < wire.size() && !failed; pos += piece) {
      failed =
          !reader.Feed(wire.subspan(pos, std::min(piece, wire.size() - pos)), sink).has_value();
      if (reader.memory_bytes() > kMemoryBound) std::abort();
    }
    return failed;
  };
  if ((control & 1) == 0) {
    (void)feed(rest);
    return 0;
  }
  // The plain cut: whole frames until the first bad prefix or the end.
  std::vector<std::vector<uint8_t>> expected;
  std::vector<uint8_t> wire;
  ZstdRecordEncoder encoder;
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
    const auto frame = rest.subspan(pos, static_cast<std::size_t>(*n));
    expected.emplace_back(frame.begin(), frame.end());
    const std::vector<uint8_t> record = encoder.Encode(frame);
    wire.insert(wire.end(), record.begin(), record.end());
    pos += static_cast<std::size_t>(*n);
  }
  if (bad) wire.insert(wire.end(), rest.begin() + static_cast<std::ptrdiff_t>(pos), rest.end());
  const bool failed = feed(wire);
  // The bytes after a bad prefix may still read as records (a compressed record's word has
  // its top bit set): only the frames before them are known.
  if (!bad && frames != expected) std::abort();
  if (frames.size() < expected.size() ||
      !std::equal(expected.begin(), expected.end(), frames.begin())) {
    std::abort();
  }
  if (failed && !bad) std::abort();
  return 0;
}
