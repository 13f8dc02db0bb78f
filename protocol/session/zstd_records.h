// SPDX-License-Identifier: Apache-2.0
// Owns the "zstd frames" mode of the framed TCP transport (docs/PROTOCOL.md section 2,
// "Compression"): after a Welcome with compression = zstd frames, the server -> client bytes
// are records, each either a plain size-prefixed envelope frame (u32 LE prefix below 2^31) or
// a compressed record: a u32 LE word 0x80000000 | the length of what follows, then one
// self-contained zstd frame (content size declared, content checksum) whose content is
// exactly one envelope frame. No record depends on another, so a server compresses a frame once and
// sends the same bytes to every member of a scene. ZstdRecordEncoder is the sending side,
// ZstdRecordReader the receiving side, with bounded memory: a record announcing more than
// the limits is refused before it is buffered, a compressed one announcing more than
// max_frame_bytes of content is refused before it is decompressed.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <vector>

#include "scenecrdt/protocol/result.h"

namespace scenecrdt::session {

// The bit of a record's first word that marks it compressed (never set in a frame's size
// prefix: frames are far below 2 GiB).
inline constexpr uint32_t kCompressedRecordBit = 0x80000000u;
// zstd level of the records: a batch of 50 moving Transforms shrinks ~5.3x at -1 (fast mode)
// as at 1, and ~4.9x at 3 (docs/SERVER.md "Compression"), so the cheapest.
inline constexpr int kZstdRecordLevel = -1;
// The encoder's window and hash table: a record is at most one state chunk (256 KiB by
// default); matches further back than 128 KiB are not worth the context's memory.
inline constexpr int kZstdRecordWindowLog = 17;
inline constexpr int kZstdRecordHashLog = 13;

class ZstdRecordEncoder {
 public:
  ZstdRecordEncoder();
  ~ZstdRecordEncoder();
  ZstdRecordEncoder(const ZstdRecordEncoder&) = delete;
  ZstdRecordEncoder& operator=(const ZstdRecordEncoder&) = delete;

  // The record of one complete size-prefixed `frame`: a compressed record, or the frame
  // itself when compressing it would not save bytes (small control frames).
  std::vector<uint8_t> Encode(std::span<const uint8_t> frame);
  // Bytes held by the compression context.
  std::size_t memory_bytes() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

class ZstdRecordReader {
 public:
  // `frame` is one complete size-prefixed frame in an 8-byte aligned buffer, valid during
  // the call. Returning false stops the reader (Feed returns kOk and takes no more input).
  using FrameSink = std::function<bool(std::span<const uint8_t> frame)>;

  explicit ZstdRecordReader(uint32_t max_frame_bytes);
  ~ZstdRecordReader();
  ZstdRecordReader(const ZstdRecordReader&) = delete;
  ZstdRecordReader& operator=(const ZstdRecordReader&) = delete;

  // Cuts `bytes` into records and hands every frame they hold to `sink`. Errors:
  // kFrameTooLarge (a plain frame or a compressed record's content above max_frame_bytes, or
  // a compressed record larger than such a frame can compress to), kEnvelopeInvalid (a size
  // of 4 or less, a record whose content is not exactly one frame), kCorruptData (not one
  // valid zstd frame with its content size). After an error the reader is unusable.
  Result<void> Feed(std::span<const uint8_t> bytes, const FrameSink& sink);
  // Bytes buffered (the start of at most one record plus the last input), the decompressed
  // frame and the decompression context.
  std::size_t memory_bytes() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace scenecrdt::session
