// SPDX-License-Identifier: Apache-2.0
// Owns the zstd stream of the framed TCP transport's compressed mode: the per-connection
// encoder and the bounded decompress-and-frame reader (libzstd's streaming API).
#include "scenecrdt/protocol/session/zstd_stream.h"

#include <zstd.h>
#include <zstd_errors.h>

#include <cstring>

#include "scenecrdt/protocol/check.h"
#include "scenecrdt/protocol/session/envelope.h"

namespace scenecrdt::session {

namespace {

// Plain bytes decompressed per step: the reader's buffer is at most one frame plus this.
constexpr std::size_t kPlainChunk = 64 * 1024;
// Output room beyond ZSTD_compressBound(input) per compression step.
constexpr std::size_t kOutMargin = 256;

}  // namespace

struct ZstdEncoder::Impl {
  ZSTD_CCtx* cctx = nullptr;
  ~Impl() { ZSTD_freeCCtx(cctx); }
};

ZstdEncoder::ZstdEncoder(int level) : impl_(std::make_unique<Impl>()) {
  impl_->cctx = ZSTD_createCCtx();
  SCENECRDT_CHECK(impl_->cctx != nullptr, "ZSTD_createCCtx failed (out of memory)");
  SCENECRDT_CHECK(
      !ZSTD_isError(ZSTD_CCtx_setParameter(impl_->cctx, ZSTD_c_compressionLevel, level)),
      "zstd compression level");
  SCENECRDT_CHECK(
      !ZSTD_isError(ZSTD_CCtx_setParameter(impl_->cctx, ZSTD_c_windowLog, kZstdWindowLog)),
      "zstd window log");
  SCENECRDT_CHECK(!ZSTD_isError(ZSTD_CCtx_setParameter(impl_->cctx, ZSTD_c_hashLog, kZstdHashLog)),
                  "zstd hash log");
}

ZstdEncoder::~ZstdEncoder() = default;

void ZstdEncoder::Compress(std::span<const uint8_t> input, bool flush, std::vector<uint8_t>& out) {
  ZSTD_inBuffer in{input.data(), input.size(), 0};
  const ZSTD_EndDirective mode = flush ? ZSTD_e_flush : ZSTD_e_continue;
  for (;;) {
    // Room for this input plus a block's header and the flush; the loop asks for more when
    // zstd still holds output (growing by a small margin: resize zero-fills what it adds,
    // and ZSTD_CStreamOutSize()'s 128 KiB per call cost more than the compression itself).
    const std::size_t start = out.size();
    out.resize(start + ZSTD_compressBound(input.size() - in.pos) + kOutMargin);
    ZSTD_outBuffer o{out.data() + start, out.size() - start, 0};
    const std::size_t left = ZSTD_compressStream2(impl_->cctx, &o, &in, mode);
    // Our own bytes and a valid context: an error here is a bug or an allocation failure.
    SCENECRDT_CHECK(!ZSTD_isError(left), "ZSTD_compressStream2 failed");
    out.resize(start + o.pos);
    const bool input_done = in.pos == in.size;
    if (input_done && (!flush || left == 0)) return;
  }
}

std::size_t ZstdEncoder::memory_bytes() const { return ZSTD_sizeof_CCtx(impl_->cctx); }

struct ZstdFrameReader::Impl {
  ZSTD_DCtx* dctx = nullptr;
  uint32_t max_frame_bytes = 0;
  std::vector<uint8_t> plain;    // decompressed bytes: the start of at most one frame
  std::size_t used = 0;          // bytes of `plain` holding data
  std::vector<uint8_t> aligned;  // an 8-byte aligned copy of a frame that is not
  bool failed = false;
  bool stopped = false;
  ~Impl() { ZSTD_freeDCtx(dctx); }

  // Hands every complete frame in `plain` to `sink`, then moves the rest to the front.
  Result<void> CutFrames(const FrameSink& sink) {
    std::size_t pos = 0;
    Result<void> status;
    while (!stopped) {
      const std::span<const uint8_t> rest(plain.data() + pos, used - pos);
      const auto size = PeekFrameSize(rest);
      if (!size) break;
      if (*size > max_frame_bytes) {
        status = MakeError(ErrorCode::kFrameTooLarge, "compressed stream: frame above the limit");
        break;
      }
      if (*size <= kSizePrefixBytes) {
        status = MakeError(ErrorCode::kEnvelopeInvalid, "compressed stream: empty frame");
        break;
      }
      if (*size > rest.size()) break;
      std::span<const uint8_t> frame = rest.first(static_cast<std::size_t>(*size));
      if (reinterpret_cast<std::uintptr_t>(frame.data()) % 8 != 0) {
        aligned.assign(frame.begin(), frame.end());
        frame = aligned;
      }
      pos += frame.size();
      if (!sink(frame)) stopped = true;
    }
    if (pos > 0) {
      std::memmove(plain.data(), plain.data() + pos, used - pos);
      used -= pos;
    }
    return status;
  }
};

ZstdFrameReader::ZstdFrameReader(uint32_t max_frame_bytes) : impl_(std::make_unique<Impl>()) {
  impl_->dctx = ZSTD_createDCtx();
  SCENECRDT_CHECK(impl_->dctx != nullptr, "ZSTD_createDCtx failed (out of memory)");
  SCENECRDT_CHECK(
      !ZSTD_isError(ZSTD_DCtx_setParameter(impl_->dctx, ZSTD_d_windowLogMax, kZstdWindowLog)),
      "zstd window log max");
  impl_->max_frame_bytes = max_frame_bytes;
}

ZstdFrameReader::~ZstdFrameReader() = default;

Result<void> ZstdFrameReader::Feed(std::span<const uint8_t> compressed, const FrameSink& sink) {
  Impl& s = *impl_;
  if (s.failed) return MakeError(ErrorCode::kCorruptData, "compressed stream already failed");
  ZSTD_inBuffer in{compressed.data(), compressed.size(), 0};
  while (!s.stopped) {
    // Room for one more step; `used` is below one frame (max_frame_bytes) here.
    if (s.plain.size() < s.used + kPlainChunk) s.plain.resize(s.used + kPlainChunk);
    ZSTD_outBuffer out{s.plain.data() + s.used, s.plain.size() - s.used, 0};
    const std::size_t r = ZSTD_decompressStream(s.dctx, &out, &in);
    if (ZSTD_isError(r)) {
      s.failed = true;
      return MakeError(ErrorCode::kCorruptData,
                       ZSTD_getErrorCode(r) == ZSTD_error_frameParameter_windowTooLarge
                           ? "compressed stream: window above the limit"
                           : "compressed stream: not a valid zstd stream");
    }
    s.used += out.pos;
    Result<void> cut = s.CutFrames(sink);
    if (!cut.has_value()) {
      s.failed = true;
      return cut;
    }
    // Done when every input byte is taken and zstd had room left (nothing held back).
    if (in.pos == in.size && out.pos < out.size) break;
  }
  return {};
}

std::size_t ZstdFrameReader::memory_bytes() const {
  return ZSTD_sizeof_DCtx(impl_->dctx) + impl_->plain.capacity() + impl_->aligned.capacity();
}

}  // namespace scenecrdt::session
