// SPDX-License-Identifier: Apache-2.0
// Owns SHA-256 (FIPS 180-4), used for the canonical CRDT state hash: equal digests mean equal
// canonical serialisations. Incremental: Update() any number of times, then Finish(). Ours
// rather than OpenSSL's so the runtime builds for WebAssembly and hashes alike everywhere
// (docs/CRDT.md, canonical state hash).
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <string>

namespace scenecrdt::runtime {

class Sha256 {
 public:
  using Digest = std::array<uint8_t, 32>;

  Sha256();
  void Update(std::span<const uint8_t> bytes);
  void UpdateU32(uint32_t v);  // little-endian
  void UpdateU64(uint64_t v);  // little-endian
  Digest Finish();

  static Digest Hash(std::span<const uint8_t> bytes);
  static std::string ToHex(const Digest& d);

 private:
  void Block(const uint8_t* p);

  std::array<uint32_t, 8> h_;
  std::array<uint8_t, 64> buffer_{};
  std::size_t buffered_ = 0;
  uint64_t total_bytes_ = 0;
};

}  // namespace scenecrdt::runtime
