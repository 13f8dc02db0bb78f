// SPDX-License-Identifier: Apache-2.0
// Owns the records of the "zstd frames" mode: compressing one frame into a self-contained
// record (libzstd's one-shot API) and the bounded record reader.
#include "scenecrdt/protocol/session/zstd_records.h"

#include <zstd.h>

#include <cstring>

#include "scenecrdt/protocol/check.h"
#include "scenecrdt/protocol/session/envelope.h"

namespace scenecrdt::session {

namespace {

uint32_t ReadU32(const uint8_t* p) {
  return uint32_t{p[0]} | (uint32_t{p[1]} << 8) | (uint32_t{p[2]} << 16) | (uint32_t{p[3]} << 24);
}

void WriteU32(uint32_t v, uint8_t* p) {
  p[0] = static_cast<uint8_t>(v);
  p[1] = static_cast<uint8_t>(v >> 8);
  p[2] = static_cast<uint8_t>(v >> 16);
  p[3] = static_cast<uint8_t>(v >> 24);
}

// Buffer capacity kept between inputs; a larger record's buffer is released once handled.
constexpr std::size_t kKeptCapacity = 1u << 20;

}  // namespace

struct ZstdRecordEncoder::Impl {
  ZSTD_CCtx* cctx = nullptr;
  ~Impl() { ZSTD_freeCCtx(cctx); }
};

ZstdRecordEncoder::ZstdRecordEncoder() : impl_(std::make_unique<Impl>()) {
  impl_->cctx = ZSTD_createCCtx();
  SCENECRDT_CHECK(impl_->cctx != nullptr, "ZSTD_createCCtx failed (out of memory)");
  ZSTD_CCtx* c = impl_->cctx;
  SCENECRDT_CHECK(
      !ZSTD_isError(ZSTD_CCtx_setParameter(c, ZSTD_c_compressionLevel, kZstdRecordLevel)),
      "zstd compression level");
  SCENECRDT_CHECK(!ZSTD_isError(ZSTD_CCtx_setParameter(c, ZSTD_c_windowLog, kZstdRecordWindowLog)),
                  "zstd window log");
  SCENECRDT_CHECK(!ZSTD_isError(ZSTD_CCtx_setParameter(c, ZSTD_c_hashLog, kZstdRecordHashLog)),
                  "zstd hash log");
  // The reader refuses a frame without its content size: it bounds the output up front.
  SCENECRDT_CHECK(!ZSTD_isError(ZSTD_CCtx_setParameter(c, ZSTD_c_contentSizeFlag, 1)),
                  "zstd content size flag");
  // A content checksum (4 bytes a record): bytes damaged on the way fail the record instead
  // of decoding to other values.
  SCENECRDT_CHECK(!ZSTD_isError(ZSTD_CCtx_setParameter(c, ZSTD_c_checksumFlag, 1)),
                  "zstd checksum flag");
}

ZstdRecordEncoder::~ZstdRecordEncoder() = default;

std::vector<uint8_t> ZstdRecordEncoder::Encode(std::span<const uint8_t> frame) {
  std::vector<uint8_t> out(kSizePrefixBytes + ZSTD_compressBound(frame.size()));
  const std::size_t n = ZSTD_compress2(impl_->cctx, out.data() + kSizePrefixBytes,
                                       out.size() - kSizePrefixBytes, frame.data(), frame.size());
  // Our own bytes, a valid context and room for the bound: an error is a bug or no memory.
  SCENECRDT_CHECK(!ZSTD_isError(n), "ZSTD_compress2 failed");
  if (kSizePrefixBytes + n >= frame.size() || n >= kCompressedRecordBit) {
    return std::vector<uint8_t>(frame.begin(), frame.end());  // a plain frame is a record too
  }
  WriteU32(kCompressedRecordBit | static_cast<uint32_t>(n), out.data());
  out.resize(kSizePrefixBytes + n);
  return out;
}

std::size_t ZstdRecordEncoder::memory_bytes() const { return ZSTD_sizeof_CCtx(impl_->cctx); }

struct ZstdRecordReader::Impl {
  ZSTD_DCtx* dctx = nullptr;
  uint32_t max_frame_bytes = 0;
  std::size_t max_compressed = 0;  // the largest zstd frame a max_frame_bytes frame needs
  std::vector<uint8_t> buffer;     // bytes received, not yet cut: at most one partial record
  std::size_t used = 0;
  std::vector<uint8_t> frame;  // the frame being handed over (8-byte aligned storage)
  bool failed = false;
  bool stopped = false;
  ~Impl() { ZSTD_freeDCtx(dctx); }

  // The frame a complete record holds, in `frame` (aligned), or why it holds none.
  Result<void> Open(std::span<const uint8_t> record, bool compressed) {
    if (!compressed) {
      frame.assign(record.begin(), record.end());
      return {};
    }
    const std::span<const uint8_t> z = record.subspan(kSizePrefixBytes);
    const unsigned long long content = ZSTD_getFrameContentSize(z.data(), z.size());
    if (content == ZSTD_CONTENTSIZE_ERROR || content == ZSTD_CONTENTSIZE_UNKNOWN) {
      return MakeError(ErrorCode::kCorruptData,
                       "compressed record: not a zstd frame with its content size");
    }
    if (content > max_frame_bytes) {
      return MakeError(ErrorCode::kFrameTooLarge, "compressed record: frame above the limit");
    }
    if (content <= kSizePrefixBytes) {
      return MakeError(ErrorCode::kEnvelopeInvalid, "compressed record: empty frame");
    }
    const std::size_t whole = ZSTD_findFrameCompressedSize(z.data(), z.size());
    if (ZSTD_isError(whole) || whole != z.size()) {
      return MakeError(ErrorCode::kCorruptData, "compressed record: not exactly one zstd frame");
    }
    frame.resize(static_cast<std::size_t>(content));
    const std::size_t n = ZSTD_decompressDCtx(dctx, frame.data(), frame.size(), z.data(), z.size());
    if (ZSTD_isError(n) || n != frame.size()) {
      return MakeError(ErrorCode::kCorruptData, "compressed record: not a valid zstd frame");
    }
    if (PeekFrameSize(frame) != frame.size()) {
      return MakeError(ErrorCode::kEnvelopeInvalid,
                       "compressed record: content is not exactly one frame");
    }
    return {};
  }

  // Hands every complete record's frame to `sink`, then moves the rest to the front.
  Result<void> Cut(const FrameSink& sink) {
    std::size_t pos = 0;
    Result<void> status;
    while (!stopped && used - pos >= kSizePrefixBytes) {
      const uint32_t word = ReadU32(buffer.data() + pos);
      const bool compressed = (word & kCompressedRecordBit) != 0;
      const uint64_t size = uint64_t{word & ~kCompressedRecordBit} + kSizePrefixBytes;
      if (size > (compressed ? max_compressed : uint64_t{max_frame_bytes})) {
        status = MakeError(ErrorCode::kFrameTooLarge,
                           compressed ? "compressed record above what the frame limit needs"
                                      : "frame above the limit");
        break;
      }
      if (size <= kSizePrefixBytes) {
        status = MakeError(ErrorCode::kEnvelopeInvalid, "empty record");
        break;
      }
      if (size > used - pos) break;
      status = Open(std::span<const uint8_t>(buffer.data() + pos, size), compressed);
      if (!status.has_value()) break;
      pos += size;
      if (!sink(frame)) stopped = true;
    }
    if (pos > 0) {
      std::memmove(buffer.data(), buffer.data() + pos, used - pos);
      used -= pos;
    }
    if (frame.capacity() > kKeptCapacity) std::vector<uint8_t>().swap(frame);
    return status;
  }
};

ZstdRecordReader::ZstdRecordReader(uint32_t max_frame_bytes) : impl_(std::make_unique<Impl>()) {
  impl_->dctx = ZSTD_createDCtx();
  SCENECRDT_CHECK(impl_->dctx != nullptr, "ZSTD_createDCtx failed (out of memory)");
  impl_->max_frame_bytes = max_frame_bytes;
  impl_->max_compressed = kSizePrefixBytes + ZSTD_compressBound(max_frame_bytes);
}

ZstdRecordReader::~ZstdRecordReader() = default;

Result<void> ZstdRecordReader::Feed(std::span<const uint8_t> bytes, const FrameSink& sink) {
  Impl& s = *impl_;
  if (s.failed) return MakeError(ErrorCode::kCorruptData, "record stream already failed");
  if (s.stopped || bytes.empty()) return {};
  if (s.buffer.size() < s.used + bytes.size()) s.buffer.resize(s.used + bytes.size());
  std::memcpy(s.buffer.data() + s.used, bytes.data(), bytes.size());
  s.used += bytes.size();
  Result<void> cut = s.Cut(sink);
  if (!cut.has_value()) {
    s.failed = true;
    return cut;
  }
  if (s.used == 0 && s.buffer.capacity() > kKeptCapacity) std::vector<uint8_t>().swap(s.buffer);
  return {};
}

std::size_t ZstdRecordReader::memory_bytes() const {
  return ZSTD_sizeof_DCtx(impl_->dctx) + impl_->buffer.capacity() + impl_->frame.capacity();
}

}  // namespace scenecrdt::session
