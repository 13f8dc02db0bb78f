// SPDX-License-Identifier: Apache-2.0
// Owns what one `scenecrdt load` run measures and sends: receipts stamped against the movers'
// rings, one Transform per mover per tick, the latency percentiles, CPU times, and the source
// address of each client.
#include "tools/cli/load/load_run.h"

#include <arpa/inet.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <ctime>
#include <fstream>
#include <iterator>

#include "scenecrdt/protocol/crdt_codec.h"

namespace scenecrdt::cli::load {

namespace {

int64_t SteadyNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// The kernel stamps receipts with CLOCK_REALTIME, so sends are stamped on that clock too.
int64_t RealtimeNs() {
  timespec ts{};
  clock_gettime(CLOCK_REALTIME, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

void Bump(std::atomic<uint64_t>& a, uint64_t n = 1) {
  a.store(a.load(std::memory_order_relaxed) + n, std::memory_order_relaxed);  // one writer
}

}  // namespace

int64_t Run::Now() const { return kernel_stamps ? RealtimeNs() : SteadyNs(); }

void Run::OnFrame(Shard& shard, LoadClient& c, const session::Frame& frame) {
  Totals& totals = shard.totals;
  const bool measure = measuring.load(std::memory_order_relaxed);
  if (const auto* crdt = std::get_if<session::Crdt>(&frame)) {
    const int64_t kernel = kernel_stamps ? c.connection->receive_time_ns() : 0;
    const int64_t now = kernel != 0 ? kernel : Now();
    if (measure) Bump(totals.received_frames);
    (void)protocol::DecodeStream(crdt->data, {}, [&](const protocol::CrdtMessage& m) {
      if (measure) Bump(totals.received_messages);
      if (m.type != protocol::MessageType::kPutComponent ||
          m.component != protocol::kTransformComponentId) {
        return;
      }
      const uint32_t number = protocol::EntityNumber(m.entity);
      if (number < kFirstMover || number - kFirstMover >= movers.size()) return;
      Mover& mover = movers[number - kFirstMover];
      if (crdt->is_state) {
        // Continue above whatever an earlier run left in the scene.
        if (mover.owner == c.index) mover.timestamp = std::max(mover.timestamp, m.timestamp);
        return;
      }
      if (!measure || mover.owner == c.index) return;
      const uint64_t stamp = mover.ring[m.timestamp % kRing].load(std::memory_order_acquire);
      if (static_cast<uint32_t>(stamp >> 32) != m.timestamp || (stamp & 0xffffffffu) == 0) {
        return;
      }
      const int64_t sent_ns = epoch_ns + static_cast<int64_t>(stamp & 0xffffffffu) * 1000;
      const int64_t ns = std::max<int64_t>(0, now - sent_ns);
      shard.histogram[std::min<std::size_t>(static_cast<std::size_t>(ns / 1000), kHistogramBuckets)]
          .fetch_add(1, std::memory_order_relaxed);
      Bump(totals.samples);
      if (ns > totals.max_ns.load(std::memory_order_relaxed)) {
        totals.max_ns.store(ns, std::memory_order_relaxed);
      }
    });
    if (crdt->is_state && crdt->frame_sequence == 0 && !c.ready) {
      c.ready = true;
      ready.fetch_add(1);
      if (world_size > 0 && c.movers.empty()) {
        // Its static entity, written once (a fresh scene: timestamp 1).
        std::vector<uint8_t> dcl;
        protocol::Transform t;
        t.position = {static_spots[c.index][0], 0.0f, static_spots[c.index][1]};
        protocol::AppendTransformPut(kFirstStatic + c.index, 1, t, dcl);
        session::Crdt put;
        put.frame_sequence = c.next_frame++;
        put.data = dcl;
        c.connection->Send(session::BuildFrame(put));
      }
    }
  } else if (std::get_if<session::Ack>(&frame)) {
    if (measure) Bump(totals.acks);
  } else if (const auto* e = std::get_if<session::ErrorFrame>(&frame)) {
    Bump(totals.refusals);
    shard.last_refusal = std::string(ErrorCodeName(e->code)) + ": " + e->text;
  } else if (const auto* p = std::get_if<session::Ping>(&frame)) {
    c.connection->Send(session::BuildFrame(session::Pong{p->nonce, p->sent_us}));
  }
}

void Run::OnClosed(LoadClient& c) {
  if (c.closed) return;
  c.closed = true;
  if (!c.ready) gone_before_ready.fetch_add(1);
}

void Run::Send(Shard& shard, LoadClient& c, std::span<const uint32_t> mover_indices,
               uint64_t tick) {
  if (!c.ready || c.closed) return;
  std::vector<uint8_t> dcl;
  dcl.reserve(mover_indices.size() * 68);
  // At least 1 us after the epoch: 0 marks an empty ring slot.
  const uint64_t sent_us =
      std::max<uint64_t>(1, static_cast<uint64_t>((Now() - epoch_ns) / 1000)) & 0xffffffffu;
  for (uint32_t k : mover_indices) {
    Mover& m = movers[k];
    ++m.timestamp;
    const double angle = 0.05 * static_cast<double>(tick) + k;
    protocol::Transform t;
    t.position = {static_cast<float>(10.0 * std::cos(angle)), static_cast<float>(k % 7),
                  static_cast<float>(10.0 * std::sin(angle))};
    if (world_size > 0) {
      // A random walk: a step of up to 0.5 m per axis, kept inside the square.
      const auto step = [&m] {
        m.walk = m.walk * 1664525u + 1013904223u;
        return (static_cast<float>(m.walk >> 8) / 16777216.0f - 0.5f);
      };
      const auto size = static_cast<float>(world_size);
      m.x = std::clamp(m.x + step(), 0.0f, size);
      m.z = std::clamp(m.z + step(), 0.0f, size);
      t.position = {m.x, 0.0f, m.z};
    }
    protocol::AppendTransformPut(kFirstMover + k, m.timestamp, t, dcl);
    m.ring[m.timestamp % kRing].store((uint64_t{m.timestamp} << 32) | sent_us,
                                      std::memory_order_release);
  }
  session::Crdt crdt;
  crdt.frame_sequence = c.next_frame++;
  crdt.data = dcl;
  if (c.connection->Send(session::BuildFrame(crdt)) && measuring.load(std::memory_order_relaxed)) {
    Bump(shard.totals.sent_frames);
    Bump(shard.totals.sent_messages, mover_indices.size());
  }
}

uint32_t Run::OwnEntity(const LoadClient& c) const {
  return c.movers.empty() ? kFirstStatic + c.index : kFirstMover + c.movers.front();
}

std::array<float, 2> Run::Spot(const LoadClient& c) const {
  if (c.movers.empty()) return static_spots[c.index];
  const Mover& m = movers[c.movers.front()];
  return {m.x, m.z};
}

uint64_t Run::Sum(std::atomic<uint64_t> Totals::*field) const {
  uint64_t total = 0;
  for (const auto& s : shards) total += (s->totals.*field).load(std::memory_order_relaxed);
  return total;
}

int64_t Run::MaxNs() const {
  int64_t m = 0;
  for (const auto& s : shards) m = std::max(m, s->totals.max_ns.load());
  return m;
}

double Run::Percentile(double p) const {
  const uint64_t samples = Sum(&Totals::samples);
  if (samples == 0) return 0.0;
  const auto target = static_cast<uint64_t>(std::ceil(p * static_cast<double>(samples)));
  uint64_t seen = 0;
  for (std::size_t i = 0; i <= kHistogramBuckets; ++i) {
    for (const auto& s : shards) seen += s->histogram[i].load(std::memory_order_relaxed);
    if (seen >= std::max<uint64_t>(target, 1)) return static_cast<double>(i) / 1000.0 + 0.0005;
  }
  return static_cast<double>(MaxNs()) / 1e6;
}

std::string SourceAddresses::For(uint32_t index) const {
  if (!enabled) return "";
  const uint32_t host = first + index / per_address;
  char text[INET_ADDRSTRLEN];
  const in_addr addr{htonl(host)};
  return inet_ntop(AF_INET, &addr, text, sizeof text) != nullptr ? text : "";
}

uint32_t SourceAddresses::Count(uint32_t clients) const {
  return enabled && clients > 0 ? (clients - 1) / per_address + 1 : 0;
}

std::optional<uint32_t> ParseLoopbackV4(const std::string& text) {
  in_addr addr{};
  if (inet_pton(AF_INET, text.c_str(), &addr) != 1) return std::nullopt;
  const uint32_t host = ntohl(addr.s_addr);
  if ((host >> 24) != 127) return std::nullopt;
  return host;
}

double CpuSecondsSelf() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
         static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1e6;
}

double CpuSecondsOf(uint64_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const auto paren = text.rfind(')');
  if (paren == std::string::npos) return -1.0;
  // Fields after "pid (comm)": state is field 3; utime and stime are fields 14 and 15.
  std::size_t pos = paren + 2;
  unsigned long long utime = 0, stime = 0;
  for (int field = 3; field <= 15; ++field) {
    const auto next = text.find(' ', pos);
    if (next == std::string::npos) return -1.0;
    if (field == 14) utime = std::stoull(text.substr(pos, next - pos));
    if (field == 15) stime = std::stoull(text.substr(pos, next - pos));
    pos = next + 1;
  }
  return static_cast<double>(utime + stime) / static_cast<double>(sysconf(_SC_CLK_TCK));
}

void RaiseOpenFileLimit() {
  rlimit limit{};
  if (getrlimit(RLIMIT_NOFILE, &limit) != 0) return;
  const rlim_t want =
      limit.rlim_max == RLIM_INFINITY ? 65536 : std::min<rlim_t>(limit.rlim_max, 65536);
  if (limit.rlim_cur != RLIM_INFINITY && limit.rlim_cur < want) {
    limit.rlim_cur = want;
    setrlimit(RLIMIT_NOFILE, &limit);
  }
}

}  // namespace scenecrdt::cli::load
