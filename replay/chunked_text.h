// SPDX-License-Identifier: Apache-2.0
// Owns ChunkedText: a fixed 256 KiB text buffer that writers fill in place (numbers with
// std::to_chars, literals, hex) and that hands each full chunk to a sink, so a document of any
// size is produced without holding it and without per-value allocations (docs/CLI.md "Memory").
#pragma once

#include <charconv>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <functional>
#include <memory>
#include <span>
#include <string_view>

namespace scenecrdt::replay {

class ChunkedText {
 public:
  static constexpr std::size_t kCapacity = std::size_t{256} << 10;
  // The most bytes one Room() call may ask for.
  static constexpr std::size_t kMaxRoom = kCapacity / 2;
  using Sink = std::function<void(std::string_view chunk)>;

  explicit ChunkedText(Sink sink) : sink_(std::move(sink)), buffer_(new char[kCapacity]) {}
  ChunkedText(const ChunkedText&) = delete;
  ChunkedText& operator=(const ChunkedText&) = delete;

  // A cursor with at least `n` (<= kMaxRoom) writable bytes; give the end back with Commit().
  char* Room(std::size_t n) {
    if (kCapacity - used_ < n) Flush();
    return buffer_.get() + used_;
  }
  void Commit(char* end) { used_ = static_cast<std::size_t>(end - buffer_.get()); }

  void Put(std::string_view s) {
    while (!s.empty()) {
      if (used_ == kCapacity) Flush();
      const std::size_t n = std::min(s.size(), kCapacity - used_);
      std::memcpy(buffer_.get() + used_, s.data(), n);
      used_ += n;
      s.remove_prefix(n);
    }
  }
  void Put(char c) {
    *Room(1) = c;
    ++used_;
  }
  // Lowercase hex of `bytes`, in pieces of any length.
  void PutHex(std::span<const uint8_t> bytes);

  // Hands what is buffered to the sink.
  void Flush() {
    if (used_ > 0) sink_(std::string_view(buffer_.get(), used_));
    used_ = 0;
  }

 private:
  Sink sink_;
  std::unique_ptr<char[]> buffer_;
  std::size_t used_ = 0;
};

// Cursor helpers for a Room() of known size.
template <std::size_t N>
inline char* PutLiteral(char* p, const char (&s)[N]) {
  std::memcpy(p, s, N - 1);
  return p + (N - 1);
}
inline char* PutU64(char* p, uint64_t v) { return std::to_chars(p, p + 20, v).ptr; }
// Two lowercase hex digits per byte.
char* PutHexBytes(char* p, std::span<const uint8_t> bytes);
// The text json::AppendFloat writes (shortest round-trip form; "NaN", "Infinity", "-Infinity",
// other NaNs as their bits "0x7fc00001"): needs kMaxFloatText bytes of room.
char* PutFloat(char* p, float f);
inline constexpr std::size_t kMaxFloatText = 32;

}  // namespace scenecrdt::replay
