// SPDX-License-Identifier: Apache-2.0
// Owns the SHA-256 compression function and padding (FIPS 180-4 section 6.2).
#include "scenecrdt/runtime/sha256.h"

#include <algorithm>
#include <bit>
#include <cstring>

namespace scenecrdt::runtime {
namespace {

constexpr std::array<uint32_t, 64> kK = {
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
    0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
    0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
    0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
    0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2};

uint32_t LoadBe32(const uint8_t* p) {
  return (uint32_t{p[0]} << 24) | (uint32_t{p[1]} << 16) | (uint32_t{p[2]} << 8) | p[3];
}

}  // namespace

Sha256::Sha256()
    : h_{0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
         0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19} {}

void Sha256::Block(const uint8_t* p) {
  std::array<uint32_t, 64> w;
  for (int i = 0; i < 16; ++i) w[i] = LoadBe32(p + 4 * i);
  for (int i = 16; i < 64; ++i) {
    const uint32_t s0 = std::rotr(w[i - 15], 7) ^ std::rotr(w[i - 15], 18) ^ (w[i - 15] >> 3);
    const uint32_t s1 = std::rotr(w[i - 2], 17) ^ std::rotr(w[i - 2], 19) ^ (w[i - 2] >> 10);
    w[i] = w[i - 16] + s0 + w[i - 7] + s1;
  }
  uint32_t a = h_[0], b = h_[1], c = h_[2], d = h_[3], e = h_[4], f = h_[5], g = h_[6], h = h_[7];
  for (int i = 0; i < 64; ++i) {
    const uint32_t s1 = std::rotr(e, 6) ^ std::rotr(e, 11) ^ std::rotr(e, 25);
    const uint32_t ch = (e & f) ^ (~e & g);
    const uint32_t t1 = h + s1 + ch + kK[i] + w[i];
    const uint32_t s0 = std::rotr(a, 2) ^ std::rotr(a, 13) ^ std::rotr(a, 22);
    const uint32_t maj = (a & b) ^ (a & c) ^ (b & c);
    const uint32_t t2 = s0 + maj;
    h = g;
    g = f;
    f = e;
    e = d + t1;
    d = c;
    c = b;
    b = a;
    a = t1 + t2;
  }
  h_[0] += a;
  h_[1] += b;
  h_[2] += c;
  h_[3] += d;
  h_[4] += e;
  h_[5] += f;
  h_[6] += g;
  h_[7] += h;
}

void Sha256::Update(std::span<const uint8_t> bytes) {
  if (bytes.empty()) return;  // also: memcpy from an empty span's null data() is undefined
  total_bytes_ += bytes.size();
  std::size_t pos = 0;
  if (buffered_ > 0) {
    const std::size_t take = std::min(bytes.size(), 64 - buffered_);
    std::memcpy(buffer_.data() + buffered_, bytes.data(), take);
    buffered_ += take;
    pos = take;
    if (buffered_ < 64) return;
    Block(buffer_.data());
    buffered_ = 0;
  }
  for (; pos + 64 <= bytes.size(); pos += 64) Block(bytes.data() + pos);
  if (pos < bytes.size()) {
    std::memcpy(buffer_.data(), bytes.data() + pos, bytes.size() - pos);
    buffered_ = bytes.size() - pos;
  }
}

void Sha256::UpdateU32(uint32_t v) {
  const uint8_t b[4] = {static_cast<uint8_t>(v), static_cast<uint8_t>(v >> 8),
                        static_cast<uint8_t>(v >> 16), static_cast<uint8_t>(v >> 24)};
  Update(b);
}

void Sha256::UpdateU64(uint64_t v) {
  UpdateU32(static_cast<uint32_t>(v));
  UpdateU32(static_cast<uint32_t>(v >> 32));
}

Sha256::Digest Sha256::Finish() {
  const uint64_t bits = total_bytes_ * 8;
  const uint8_t pad = 0x80;
  Update(std::span<const uint8_t>(&pad, 1));
  const uint8_t zero[64] = {};
  const std::size_t zeros = (buffered_ <= 56) ? 56 - buffered_ : 120 - buffered_;
  Update(std::span<const uint8_t>(zero, zeros));
  uint8_t len[8];
  for (int i = 0; i < 8; ++i) len[i] = static_cast<uint8_t>(bits >> (56 - 8 * i));
  Update(len);
  Digest d;
  for (int i = 0; i < 8; ++i) {
    d[4 * i] = static_cast<uint8_t>(h_[i] >> 24);
    d[4 * i + 1] = static_cast<uint8_t>(h_[i] >> 16);
    d[4 * i + 2] = static_cast<uint8_t>(h_[i] >> 8);
    d[4 * i + 3] = static_cast<uint8_t>(h_[i]);
  }
  return d;
}

Sha256::Digest Sha256::Hash(std::span<const uint8_t> bytes) {
  Sha256 s;
  s.Update(bytes);
  return s.Finish();
}

std::string Sha256::ToHex(const Digest& d) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string s;
  for (uint8_t b : d) {
    s += kDigits[b >> 4];
    s += kDigits[b & 15];
  }
  return s;
}

}  // namespace scenecrdt::runtime
