// SPDX-License-Identifier: Apache-2.0
// Fuzz target for the C ABI (libscenecrdt.so, docs/C-ABI.md): an op script of applies (valid
// and malformed bytes, timed and untimed), updates, interpolation with arbitrary options and
// times, local writes with arbitrary entities, floats and buffer sizes, and every read. Checks,
// for any input: every status is one the function documents (never SC_E_INTERNAL or
// SC_E_BROKEN: nothing fails inside); a refused copy or write writes nothing; bulk copies agree
// with the single reads and with entity_count; and the handle's state equals that of a C++
// runtime fed only what the handle accepted or emitted (so a malformed stream applied nothing,
// and every local write's message reproduces it elsewhere).
//
// Input: a sequence of ops; each starts with an opcode byte (value % 12), followed by its
// operands (see Op below). Missing bytes read as 0.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <initializer_list>
#include <span>
#include <vector>

#include "scenecrdt/protocol/crdt_codec.h"
#include "scenecrdt/runtime/runtime.h"
#include "scenecrdt/scenecrdt.h"

namespace {

constexpr std::size_t kMaxInput = 1u << 13;

class Reader {
 public:
  explicit Reader(std::span<const uint8_t> data) : data_(data) {}
  bool done() const { return pos_ >= data_.size(); }
  uint8_t U8() { return pos_ < data_.size() ? data_[pos_++] : 0; }
  uint16_t U16() { return static_cast<uint16_t>(U8() | (U8() << 8)); }
  std::span<const uint8_t> Bytes(std::size_t n) {
    const std::size_t take = std::min(n, data_.size() - std::min(pos_, data_.size()));
    const std::span<const uint8_t> out = data_.subspan(std::min(pos_, data_.size()), take);
    pos_ += take;
    return out;
  }
  // A float from a small alphabet that reaches the interesting values.
  float Float() {
    static const float kValues[] = {0.0f, -0.0f,    1.0f,      -1.0f, 0.5f,   2.0f, 1e-40f, 3e38f,
                                    NAN,  INFINITY, -INFINITY, 10.0f, -7.25f, 0.1f, 100.0f, 1e6f};
    const uint8_t b = U8();
    return b < 16 ? kValues[b] : static_cast<float>(static_cast<int8_t>(b)) * 0.125f;
  }

 private:
  std::span<const uint8_t> data_;
  std::size_t pos_ = 0;
};

void Require(bool ok) {
  if (!ok) std::abort();
}
void RequireStatus(int status, std::initializer_list<int> allowed) {
  for (int a : allowed) {
    if (status == a) return;
  }
  std::abort();
}

uint32_t Entity(Reader& in) {
  const uint16_t v = in.U16();
  return (500u + (v & 31u)) | (static_cast<uint32_t>((v >> 5) & 1u) << 16);
}

int64_t Time(Reader& in, int64_t& clock_us) {
  const uint16_t v = in.U16();
  if (v == 0xFFFF) return int64_t{1} << 61;              // out of range
  if (v >= 0xFF00) return clock_us - (v & 0xFF) * 1000;  // backwards
  clock_us += v * 10;
  return clock_us;
}

struct State {
  sc_runtime* rt = nullptr;
  scenecrdt::runtime::Runtime reference;
  int64_t clock_us = 1'000'000;
};

void Apply(State& s, Reader& in, bool timed) {
  const std::span<const uint8_t> bytes = in.Bytes(static_cast<std::size_t>(in.U8()) * 4);
  const bool null_bytes = bytes.empty() && (in.U8() & 1);
  const uint8_t* p = null_bytes ? nullptr : bytes.data();
  int status;
  if (timed) {
    const int64_t t = Time(in, s.clock_us);
    status = sc_runtime_apply_at(s.rt, p, bytes.size(), t, SC_NO_SENDER_TIME);
    RequireStatus(status, {SC_OK, SC_E_DECODE, SC_E_INVALID_ARGUMENT});
    if (status == SC_E_INVALID_ARGUMENT) Require(t > (int64_t{1} << 60));
  } else {
    status = sc_runtime_apply(s.rt, p, bytes.size());
    RequireStatus(status, {SC_OK, SC_E_DECODE});
  }
  const bool decodes = scenecrdt::protocol::DecodeStream(
                           bytes, scenecrdt::protocol::DecodeOptions{}, [](const auto&) {})
                           .has_value();
  if (status != SC_E_INVALID_ARGUMENT) Require((status == SC_OK) == decodes);
  if (status == SC_OK) Require(s.reference.ApplyCrdt(bytes).has_value());
}

void Write(State& s, Reader& in, int kind) {
  const uint32_t entity = kind == 2 && (in.U8() & 1) ? 100 + in.U8() : Entity(in);
  std::size_t capacity = in.U8() & 0x7F;
  if (capacity > SC_WRITE_MAX_BYTES) capacity = SC_WRITE_MAX_BYTES;
  uint8_t msg[SC_WRITE_MAX_BYTES + 1];
  std::memset(msg, 0xEE, sizeof(msg));
  size_t len = 12345;
  int status;
  bool finite = true;  // a non-finite Transform: SC_E_INVALID_ARGUMENT, nothing merged
  if (kind == 0) {
    sc_transform t;
    for (float& f : t.position) f = in.Float();
    for (float& f : t.rotation) f = in.Float();
    for (float& f : t.scale) f = in.Float();
    for (const float* f : {t.position, t.rotation, t.scale}) {
      for (int i = 0; i < (f == t.rotation ? 4 : 3); ++i) finite = finite && std::isfinite(f[i]);
    }
    const uint8_t parent = in.U8();
    t.parent = parent < 40 ? 500u + parent : parent < 200 ? 0u : 512u | (1u << 16);
    status = sc_runtime_write_transform(s.rt, entity, &t, msg, capacity, &len);
  } else if (kind == 1) {
    status = sc_runtime_delete_transform(s.rt, entity, msg, capacity, &len);
  } else {
    status = sc_runtime_delete_entity(s.rt, entity, msg, capacity, &len);
  }
  if (!finite && status != SC_E_BUFFER_TOO_SMALL) {  // the room is checked first
    RequireStatus(status, {SC_E_INVALID_ARGUMENT});
    Require(len == 12345);
    for (uint8_t b : msg) Require(b == 0xEE);
    return;
  }
  RequireStatus(status, {SC_OK, SC_E_BUFFER_TOO_SMALL, SC_E_REFUSED});
  if (status == SC_OK) {
    Require(len <= capacity);
    Require(msg[capacity] == 0xEE);
    if (len > 0) Require(s.reference.ApplyCrdt(std::span<const uint8_t>(msg, len)).has_value());
  } else {
    if (status == SC_E_BUFFER_TOO_SMALL) Require(len > capacity && len <= SC_WRITE_MAX_BYTES);
    if (status == SC_E_REFUSED) Require(len == 12345);
    for (uint8_t b : msg) Require(b == 0xEE);
  }
}

void EnableInterpolation(State& s, Reader& in) {
  if (in.U8() & 1) {
    RequireStatus(sc_runtime_enable_interpolation(s.rt, nullptr), {SC_OK});
    return;
  }
  sc_interpolation_options o;
  RequireStatus(sc_interpolation_options_default(&o), {SC_OK});
  const uint8_t pick = in.U8();
  const int64_t value = static_cast<int64_t>(static_cast<int16_t>(in.U16())) * 1000;
  switch (pick % 12) {
    case 0:
      o.fixed_delay_us = value;
      break;
    case 1:
      o.initial_delay_us = value;
      break;
    case 2:
      o.min_delay_us = value;
      break;
    case 3:
      o.max_delay_us = value;
      break;
    case 4:
      o.interval_multiple = static_cast<double>(value) / 4000.0;
      break;
    case 5:
      o.jitter_multiple = static_cast<double>(value) / 4000.0;
      break;
    case 6:
      o.catch_up = static_cast<double>(value) / 100000.0;
      break;
    case 7:
      o.slow_down = static_cast<double>(value) / 100000.0;
      break;
    case 8:
      o.max_extrapolation_us = value;
      break;
    case 9:
      o.snap_distance = in.Float();
      break;
    case 10:
      o.max_interval_us = value;
      break;
    default:
      o.struct_size = static_cast<uint32_t>(value);
      break;
  }
  const int before = sc_runtime_interpolation_enabled(s.rt);
  const int status = sc_runtime_enable_interpolation(s.rt, &o);
  RequireStatus(status, {SC_OK, SC_E_INVALID_ARGUMENT});
  if (status != SC_OK) Require(sc_runtime_interpolation_enabled(s.rt) == before);
}

// Every read, checked against the others.
void Reads(State& s, bool interpolated) {
  const sc_runtime* rt = s.rt;
  const size_t entities =
      interpolated ? sc_runtime_interpolated_entity_count(rt) : sc_runtime_entity_count(rt);
  size_t count = 99;
  const int query = interpolated
                        ? sc_runtime_copy_interpolated_world(rt, nullptr, nullptr, 0, &count)
                        : sc_runtime_copy_world(rt, nullptr, nullptr, 0, &count);
  RequireStatus(query, {entities == 0 ? SC_OK : SC_E_BUFFER_TOO_SMALL});
  Require(count == entities);
  std::vector<uint32_t> ids(entities + 1);
  std::vector<float> m(16 * (entities + 1));
  RequireStatus(interpolated ? sc_runtime_copy_interpolated_world(rt, ids.data(), m.data(),
                                                                  ids.size(), &count)
                             : sc_runtime_copy_world(rt, ids.data(), m.data(), ids.size(), &count),
                {SC_OK});
  Require(count == entities);
  for (size_t i = 0; i < count; ++i) {
    float one[16];
    RequireStatus(interpolated ? sc_runtime_interpolated_world_matrix(rt, ids[i], one)
                               : sc_runtime_world_matrix(rt, ids[i], one),
                  {SC_OK});
    Require(std::memcmp(one, &m[16 * i], sizeof(one)) == 0);
    if (i > 0) Require(ids[i - 1] < ids[i]);
    if (!interpolated) {
      sc_node_info info{};
      info.struct_size = sizeof(info);
      RequireStatus(sc_runtime_node_info(rt, ids[i], &info), {SC_OK});
      Require(info.parked == 0 || info.effective_parent == 0);
      Require(info.placeholder == 0 || info.declared_parent == 0);
    }
  }
  // The changed list and its matrices agree.
  std::vector<uint32_t> changed(entities + 1), changed_world(entities + 1);
  size_t n_changed = 0, n_changed_world = 0;
  RequireStatus(
      interpolated
          ? sc_runtime_copy_interpolated_changed(rt, changed.data(), changed.size(), &n_changed)
          : sc_runtime_copy_changed(rt, changed.data(), changed.size(), &n_changed),
      {SC_OK, SC_E_BUFFER_TOO_SMALL});
  if (n_changed <= changed.size()) {
    RequireStatus(
        interpolated
            ? sc_runtime_copy_interpolated_changed_world(rt, changed_world.data(), m.data(),
                                                         changed_world.size(), &n_changed_world)
            : sc_runtime_copy_changed_world(rt, changed_world.data(), m.data(),
                                            changed_world.size(), &n_changed_world),
        {SC_OK});
    Require(n_changed == n_changed_world);
    Require(std::equal(changed.begin(), changed.begin() + static_cast<long>(n_changed),
                       changed_world.begin()));
  }
  size_t n = 0;
  RequireStatus(interpolated ? sc_runtime_copy_interpolated_added(rt, nullptr, 0, &n)
                             : sc_runtime_copy_added(rt, nullptr, 0, &n),
                {SC_OK, SC_E_BUFFER_TOO_SMALL});
  RequireStatus(interpolated ? sc_runtime_copy_interpolated_removed(rt, nullptr, 0, &n)
                             : sc_runtime_copy_removed(rt, nullptr, 0, &n),
                {SC_OK, SC_E_BUFFER_TOO_SMALL});
  sc_interpolation_stats stats{};
  stats.struct_size = sizeof(stats);
  RequireStatus(sc_runtime_interpolation_stats(rt, &stats), {SC_OK});
  if (sc_runtime_interpolation_enabled(rt) == 0) Require(stats.frames == 0);
}

void SameState(State& s, Reader& in) {
  char hash[SC_STATE_HASH_CHARS];
  RequireStatus(sc_runtime_state_hash(s.rt, hash, sizeof(hash)), {SC_OK});
  Require(s.reference.store().StateHashHex() == hash);
  const uint32_t entity = Entity(in);
  sc_transform t;
  const int status = sc_runtime_get_transform(s.rt, entity, &t);
  const scenecrdt::protocol::Transform* expected = s.reference.store().FindTransform(entity);
  RequireStatus(status, {expected != nullptr ? SC_OK : SC_E_NOT_FOUND});
  if (expected != nullptr) {
    Require(std::memcmp(t.position, &expected->position, sizeof(t.position)) == 0);
    Require(std::memcmp(t.rotation, &expected->rotation, sizeof(t.rotation)) == 0);
    Require(std::memcmp(t.scale, &expected->scale, sizeof(t.scale)) == 0);
    Require(t.parent == expected->parent);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size > kMaxInput) return 0;
  State s;
  s.rt = sc_runtime_create();
  Require(s.rt != nullptr);
  Reader in(std::span<const uint8_t>(data, size));
  while (!in.done()) {
    switch (in.U8() % 12) {
      case 0:
        Apply(s, in, false);
        break;
      case 1:
        Apply(s, in, true);
        break;
      case 2:
        RequireStatus(sc_runtime_update(s.rt), {SC_OK});
        break;
      case 3: {
        const int64_t t = Time(in, s.clock_us);
        const int status = sc_runtime_update_interpolated(s.rt, t);
        RequireStatus(status, {SC_OK, SC_E_INVALID_ARGUMENT});
        Require((status == SC_OK) == (t <= (int64_t{1} << 60)));
        break;
      }
      case 4:
        EnableInterpolation(s, in);
        break;
      case 5:
        RequireStatus(sc_runtime_disable_interpolation(s.rt), {SC_OK});
        break;
      case 6:
        Write(s, in, 0);
        break;
      case 7:
        Write(s, in, 1);
        break;
      case 8:
        Write(s, in, 2);
        break;
      case 9:
        Reads(s, false);
        break;
      case 10:
        Reads(s, true);
        break;
      default:
        SameState(s, in);
        break;
    }
  }
  SameState(s, in);
  sc_runtime_destroy(s.rt);
  return 0;
}
