// SPDX-License-Identifier: Apache-2.0
// Owns the compressed mode of the framed TCP transport (docs/PROTOCOL.md section 2,
// "Compression"): after a Welcome with compression = zstd, every server -> client byte is one
// zstd stream, flushed at the end of every write. ZstdEncoder is the sending side (one per
// connection); ZstdFrameReader the receiving side: it decompresses and cuts the plain bytes
// into size-prefixed envelope frames with bounded memory (window limited to kZstdWindowLog,
// decompressed bytes buffered only up to one frame of at most max_frame_bytes: a frame
// announcing more is refused before it is decompressed, the decompression-bomb guard).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <vector>

#include "scenecrdt/protocol/result.h"
#include "scenecrdt/protocol/session/envelope.h"

namespace scenecrdt::session {

// The sender's window (32 KiB) and the largest window a receiver accepts. A tick of 100
// moving Transforms is ~7 KB, so the window holds a few ticks of history; larger windows
// compress this stream no better and cost memory per connection (docs/SERVER.md,
// "Compression": ~260 KB per encoder with kZstdHashLog, ~950 KB at the defaults of 2^17).
inline constexpr int kZstdWindowLog = 15;
inline constexpr int kZstdHashLog = 12;
// zstd level -1 (fast mode): the moving-Transform stream still shrinks ~6x at it (measured in
// docs/SERVER.md); CPU per member is what this mode costs, so the cheapest useful level.
inline constexpr int kZstdLevel = -1;

class ZstdEncoder {
 public:
  explicit ZstdEncoder(int level = kZstdLevel);
  ~ZstdEncoder();
  ZstdEncoder(const ZstdEncoder&) = delete;
  ZstdEncoder& operator=(const ZstdEncoder&) = delete;

  // Appends the compressed form of `input` to `out`. With `flush`, everything given so far
  // is decodable by the peer from the bytes appended so far (end of a write).
  void Compress(std::span<const uint8_t> input, bool flush, std::vector<uint8_t>& out);
  // Bytes held by the compression context (the per-connection memory bound).
  std::size_t memory_bytes() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

class ZstdFrameReader {
 public:
  // `frame` is one complete size-prefixed frame in an 8-byte aligned buffer, valid during
  // the call. Returning false stops the reader (Feed returns kOk and takes no more input).
  using FrameSink = std::function<bool(std::span<const uint8_t> frame)>;

  explicit ZstdFrameReader(uint32_t max_frame_bytes);
  ~ZstdFrameReader();
  ZstdFrameReader(const ZstdFrameReader&) = delete;
  ZstdFrameReader& operator=(const ZstdFrameReader&) = delete;

  // Decompresses `compressed` and hands every frame it completes to `sink`. Errors:
  // kCorruptData (not a zstd stream, or a window above kZstdWindowLog), kFrameTooLarge (a
  // size prefix above max_frame_bytes), kEnvelopeInvalid (a size prefix of 4 or less). After
  // an error the reader is unusable.
  Result<void> Feed(std::span<const uint8_t> compressed, const FrameSink& sink);
  // Plain bytes buffered (at most one frame) plus the decompression context.
  std::size_t memory_bytes() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace scenecrdt::session
