// SPDX-License-Identifier: Apache-2.0
// Owns the sorted register list and the canonical state hash of the command line's state
// output (OpenSSL EVP SHA-256 over the bytes CrdtStore::StateHash feeds its own SHA-256).
#include "scenecrdt/replay/state_hash.h"

#include <openssl/evp.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <memory>
#include <optional>

#include "scenecrdt/protocol/hex.h"
#include "scenecrdt/runtime/sha256.h"

namespace scenecrdt::replay {
namespace {

using runtime::RegisterView;

// Sorts `keys` by their high 32 bits (the low 32 are distinct slot numbers, so the order is
// total): two counting passes of 16 bits, a pass skipped when every key has the same digit.
void SortByHigh32(std::vector<uint64_t>& keys) {
  if (keys.size() < 4096) {
    std::sort(keys.begin(), keys.end());
    return;
  }
  std::vector<uint64_t> scratch(keys.size());
  std::vector<uint32_t> count(65536);
  for (int shift = 32; shift <= 48; shift += 16) {
    std::fill(count.begin(), count.end(), 0);
    for (uint64_t k : keys) ++count[(k >> shift) & 0xffff];
    if (count[(keys[0] >> shift) & 0xffff] == keys.size()) continue;
    uint32_t sum = 0;
    for (uint32_t& c : count) {
      const uint32_t n = c;
      c = sum;
      sum += n;
    }
    for (uint64_t k : keys) scratch[count[(k >> shift) & 0xffff]++] = k;
    keys.swap(scratch);
  }
}

// Below this many registers OpenSSL's one-off start-up (about 1 ms: configuration, provider
// fetch) costs more than the runtime's own SHA-256 of the whole state.
constexpr std::size_t kOpenSslFromRegisters = 4096;

// SHA-256 with OpenSSL (large states) or runtime::Sha256 (small ones, or OpenSSL failing to
// start): the same digest. Buffers the small fields so OpenSSL sees few, large updates.
class Hasher {
 public:
  explicit Hasher(bool use_openssl) : ctx_(nullptr, &EVP_MD_CTX_free) {
    if (!use_openssl) return;
    ctx_.reset(EVP_MD_CTX_new());
    if (!ctx_ || EVP_DigestInit_ex(ctx_.get(), EVP_sha256(), nullptr) != 1) ctx_.reset();
  }
  void Bytes(const void* p, std::size_t n) {
    if (n == 0) return;  // an empty payload's span may hold no pointer
    if (used_ + n > buffer_.size()) Drain();
    if (n > buffer_.size()) {
      Update(p, n);
      return;
    }
    std::memcpy(buffer_.data() + used_, p, n);
    used_ += n;
  }
  void Bytes(std::span<const uint8_t> b) { Bytes(b.data(), b.size()); }
  void U32(uint32_t v) {
    const uint8_t b[4] = {static_cast<uint8_t>(v), static_cast<uint8_t>(v >> 8),
                          static_cast<uint8_t>(v >> 16), static_cast<uint8_t>(v >> 24)};
    Bytes(b, 4);
  }
  void U64(uint64_t v) {
    U32(static_cast<uint32_t>(v));
    U32(static_cast<uint32_t>(v >> 32));
  }
  // nullopt when OpenSSL refused a step after starting.
  std::optional<std::string> FinishHex() {
    Drain();
    if (!ctx_) return runtime::Sha256::ToHex(sha_.Finish());
    std::array<uint8_t, EVP_MAX_MD_SIZE> digest{};
    unsigned int size = 0;
    ok_ = ok_ && EVP_DigestFinal_ex(ctx_.get(), digest.data(), &size) == 1 && size == 32;
    if (!ok_) return std::nullopt;
    return protocol::ToHex(std::span<const uint8_t>(digest.data(), size));
  }

 private:
  void Update(const void* p, std::size_t n) {
    if (!ctx_) {
      sha_.Update(std::span<const uint8_t>(static_cast<const uint8_t*>(p), n));
      return;
    }
    ok_ = ok_ && EVP_DigestUpdate(ctx_.get(), p, n) == 1;
  }
  void Drain() {
    if (used_ > 0) Update(buffer_.data(), used_);
    used_ = 0;
  }

  std::unique_ptr<EVP_MD_CTX, decltype(&EVP_MD_CTX_free)> ctx_;
  runtime::Sha256 sha_;
  bool ok_ = true;
  std::array<uint8_t, 16384> buffer_{};
  std::size_t used_ = 0;
};

}  // namespace

std::vector<RegisterView> SortedRegisterViews(const runtime::CrdtStore& store) {
  const auto transforms = store.transform_registers();
  if (store.num_registers() != transforms.size()) return store.SortedRegisters();
  // Transforms only: one component, so (component, entity) order is entity order.
  std::vector<uint64_t> keys(transforms.size());
  for (std::size_t i = 0; i < transforms.size(); ++i) {
    keys[i] = (uint64_t{transforms[i].entity} << 32) | i;
  }
  SortByHigh32(keys);
  std::vector<RegisterView> out(keys.size());
  // The registers are read in entity order, which is random in memory: fetch ahead.
  constexpr std::size_t kAhead = 16;
  for (std::size_t i = 0; i < keys.size(); ++i) {
    if (i + kAhead < keys.size()) {
      __builtin_prefetch(&transforms[static_cast<uint32_t>(keys[i + kAhead])]);
    }
    const auto& r = transforms[static_cast<uint32_t>(keys[i])];
    out[i] = RegisterView{
        protocol::kTransformComponentId,     r.entity, r.timestamp, r.has_data != 0, r.sequence, {},
        r.has_data != 0 ? &r.value : nullptr};
  }
  return out;
}

std::string CanonicalStateHashHex(const runtime::CrdtStore& store,
                                  std::span<const RegisterView> registers,
                                  std::span<const runtime::CrdtStore::AppendSetView> sets) {
  // The layout of CrdtStore::StateHash (docs/CRDT.md): a version tag, then each section
  // prefixed by its count; integers little-endian.
  Hasher h(registers.size() >= kOpenSslFromRegisters);
  static constexpr char kTag[] = "scenecrdt-state-v1";
  h.Bytes(kTag, sizeof kTag - 1);
  h.U64(registers.size());
  constexpr std::size_t kAhead = 8;  // registers are scattered in memory: fetch ahead
  for (std::size_t i = 0; i < registers.size(); ++i) {
    if (i + kAhead < registers.size() && registers[i + kAhead].transform) {
      __builtin_prefetch(registers[i + kAhead].transform);
    }
    const RegisterView& r = registers[i];
    h.U32(r.component);
    h.U32(r.entity);
    h.U32(r.timestamp);
    const uint8_t has_data = r.has_data ? 1 : 0;
    h.Bytes(&has_data, 1);
    if (!r.has_data) continue;
    if (r.transform) {
      const protocol::TransformBytes bytes = protocol::StoreTransform(*r.transform);
      h.U32(static_cast<uint32_t>(bytes.size()));
      h.Bytes(bytes);
    } else {
      h.U32(static_cast<uint32_t>(r.data.size()));
      h.Bytes(r.data);
    }
  }
  const std::vector<runtime::CrdtStore::Tombstone> tombstones = store.SortedTombstones();
  h.U64(tombstones.size());
  for (const auto& t : tombstones) {
    h.U32(t.number);
    h.U32(t.version);
  }
  h.U64(sets.size());
  for (const auto& s : sets) {
    h.U32(s.component);
    h.U32(s.entity);
    h.U64(s.elements.size());
    for (const runtime::AppendElement& e : s.elements) {
      h.U32(e.timestamp);
      h.U32(static_cast<uint32_t>(e.data.size()));
      h.Bytes(e.data);
    }
  }
  // OpenSSL refusing a step once started (a broken provider) leaves the runtime's own hash.
  std::optional<std::string> hex = h.FinishHex();
  return hex ? *std::move(hex) : store.StateHashHex();
}

}  // namespace scenecrdt::replay
