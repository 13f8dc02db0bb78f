// SPDX-License-Identifier: Apache-2.0
// Fuzz target for the DCL CRDT decoder: whole-buffer decoding, chunked decoding at a split
// point chosen by the input, and the decode -> encode round trip must agree and never crash.
#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <vector>

#include "scenecrdt/protocol/crdt_codec.h"

using scenecrdt::protocol::AppendMessage;
using scenecrdt::protocol::CrdtMessage;
using scenecrdt::protocol::CrdtStreamDecoder;
using scenecrdt::protocol::DecodeOptions;
using scenecrdt::protocol::DecodeStream;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 2) return 0;
  DecodeOptions options;
  options.max_message_bytes = 4096;
  options.reject_unknown_types = (data[0] & 1) != 0;
  const std::size_t split = data[1] % (size - 1);
  std::span<const uint8_t> input(data + 2, size - 2);

  std::vector<uint8_t> whole_bytes;
  std::size_t whole_count = 0;
  auto whole = DecodeStream(input, options, [&](const CrdtMessage& m) {
    AppendMessage(m, whole_bytes);
    ++whole_count;
  });

  std::vector<uint8_t> chunked_bytes;
  CrdtStreamDecoder decoder(options);
  const std::size_t cut = split < input.size() ? split : input.size();
  auto emit = [&](const CrdtMessage& m) { AppendMessage(m, chunked_bytes); };
  auto first = decoder.Feed(input.first(cut), emit);
  scenecrdt::Result<void> second = first;
  if (first.has_value()) second = decoder.Feed(input.subspan(cut), emit);

  // Both decoders deliver the same messages, byte for byte, up to the first fault.
  if (whole_bytes.size() < chunked_bytes.size()) std::abort();
  if (!std::equal(chunked_bytes.begin(), chunked_bytes.end(), whole_bytes.begin())) std::abort();
  if (whole.has_value()) {
    // A valid stream re-encodes to exactly its input and the chunked decoder ends idle.
    if (whole_bytes.size() != input.size() ||
        !std::equal(whole_bytes.begin(), whole_bytes.end(), input.begin())) {
      std::abort();
    }
    if (!second.has_value() || decoder.pending_bytes() != 0) std::abort();
  }
  (void)whole_count;
  return 0;
}
