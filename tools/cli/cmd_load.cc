// SPDX-License-Identifier: Apache-2.0
// Owns `scenecrdt load`: a light load generator on loopback. One thread and one io_context
// drive N connections; M movers (entities spread round-robin over the clients) each get a new
// Transform at a fixed rate. Latency is measured from the moment a mover's frame is handed
// to its socket to the moment another client decodes that change: the (entity, timestamp)
// pair of every send is kept in a small ring per mover, so no stamp travels in the payload.
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>

#include "scenecrdt/client/internal/connection.h"
#include "scenecrdt/protocol/crdt_codec.h"
#include "tools/cli/client_common.h"
#include "tools/cli/commands.h"
#include "tools/cli/progress.h"

namespace scenecrdt::cli {

namespace {
constexpr const char* kHelp = R"(usage: scenecrdt load --server URL --scene NAME [options]

Loopback load generator: --clients connections join the scene; --movers entities (spread
round-robin over the clients) each get a new Transform --rate times per second, written by
their owner with increasing timestamps. Every other client measures the delay from the
owner's send to its own receipt. Redraws a progress line on stderr when it is a terminal
(SCENECRDT_PROGRESS=1: a plain line every 5 s on a pipe or file) and prints a summary at the
end (JSON with --json). Run it against a release build: the generator uses one thread.

options:
  --server URL[,URL...]  tcp://127.0.0.1:PORT or ws://127.0.0.1:PORT[/scene/NAME] (loopback
                     only); several URLs (cluster nodes, `serve --redis`): client i joins
                     URL i mod N, so writers and watchers sit on different nodes and the
                     latency is cross-node
  --scene NAME       the scene (use a fresh one per run), unless the URL names it
  --token T          a write token, when the server runs with --auth
  --ca FILE          CA certificates (PEM) for tls:// and wss:// (default: the
                     system trust store)
  --clients N        connections (default 200, at most 2000)
  --movers M         moving entities (default 100, at most 10000)
  --rate HZ          updates per mover per second (default 20, at most 1000)
  --duration SEC     measured time (default 10, at most 600)
  --warmup SEC       unmeasured time after everyone joined (default 1)
  --spread           spread the movers' sends over the tick instead of one burst per tick
  --server-pid PID   also report that process's CPU use over the measured time
  --json             print the summary as one JSON object on stdout

Summary: clients connected, messages and bytes per second (sent, received), bytes per client
per second, p50/p95/p99/max latency in ms, acks, refusals, and the CPU the generator (and
--server-pid) used.
exit status: 0 ok; 1 not every client joined or the run failed; 2 bad usage.
)";

constexpr uint32_t kFirstMover = 1000;
constexpr std::size_t kRing = 256;
// Latency histogram: 1 us buckets up to 200 ms, plus the exact maximum.
constexpr std::size_t kHistogramBuckets = 200000;

int64_t NowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

struct Stamp {
  uint32_t timestamp = 0;
  int64_t sent_ns = 0;
};

struct Mover {
  uint32_t owner = 0;
  uint32_t timestamp = 0;  // last timestamp sent
  std::array<Stamp, kRing> ring{};
};

struct Totals {
  uint64_t sent_frames = 0;
  uint64_t sent_messages = 0;
  uint64_t received_frames = 0;
  uint64_t received_messages = 0;
  uint64_t acks = 0;
  uint64_t refusals = 0;
  uint64_t samples = 0;
  int64_t max_ns = 0;
};

struct Run;

struct LoadClient {
  uint32_t index = 0;
  std::shared_ptr<client::Connection> connection;
  bool ready = false;
  bool closed = false;
  uint64_t next_frame = 1;
  std::vector<uint32_t> movers;  // owned mover indices
};

struct Run {
  net::asio::io_context ioc{1};
  std::vector<std::unique_ptr<LoadClient>> clients;
  std::vector<Mover> movers;
  std::vector<uint32_t> histogram = std::vector<uint32_t>(kHistogramBuckets + 1, 0);
  Totals totals;
  bool measuring = false;
  uint32_t ready = 0;
  std::string last_refusal;

  void OnFrame(LoadClient& c, const session::Frame& frame) {
    if (const auto* crdt = std::get_if<session::Crdt>(&frame)) {
      const int64_t now = NowNs();
      if (measuring) ++totals.received_frames;
      (void)protocol::DecodeStream(crdt->data, {}, [&](const protocol::CrdtMessage& m) {
        if (measuring) ++totals.received_messages;
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
        if (!measuring || mover.owner == c.index) return;
        const Stamp& s = mover.ring[m.timestamp % kRing];
        if (s.timestamp != m.timestamp || s.sent_ns == 0) return;
        const int64_t ns = now - s.sent_ns;
        ++histogram[std::min<std::size_t>(static_cast<std::size_t>(ns / 1000), kHistogramBuckets)];
        ++totals.samples;
        totals.max_ns = std::max(totals.max_ns, ns);
      });
      if (crdt->is_state && crdt->frame_sequence == 0 && !c.ready) {
        c.ready = true;
        ++ready;
      }
    } else if (std::get_if<session::Ack>(&frame)) {
      if (measuring) ++totals.acks;
    } else if (const auto* e = std::get_if<session::ErrorFrame>(&frame)) {
      ++totals.refusals;
      last_refusal = std::string(ErrorCodeName(e->code)) + ": " + e->text;
    } else if (const auto* p = std::get_if<session::Ping>(&frame)) {
      c.connection->Send(session::BuildFrame(session::Pong{p->nonce, p->sent_us}));
    }
  }

  void Send(LoadClient& c, std::span<const uint32_t> mover_indices, uint64_t tick) {
    if (!c.ready || c.closed) return;
    std::vector<uint8_t> dcl;
    dcl.reserve(mover_indices.size() * 68);
    const int64_t now = NowNs();
    for (uint32_t k : mover_indices) {
      Mover& m = movers[k];
      ++m.timestamp;
      const double angle = 0.05 * static_cast<double>(tick) + k;
      protocol::Transform t;
      t.position = {static_cast<float>(10.0 * std::cos(angle)), static_cast<float>(k % 7),
                    static_cast<float>(10.0 * std::sin(angle))};
      protocol::AppendTransformPut(kFirstMover + k, m.timestamp, t, dcl);
      m.ring[m.timestamp % kRing] = Stamp{m.timestamp, now};
    }
    session::Crdt crdt;
    crdt.frame_sequence = c.next_frame++;
    crdt.data = dcl;
    if (c.connection->Send(session::BuildFrame(crdt)) && measuring) {
      ++totals.sent_frames;
      totals.sent_messages += mover_indices.size();
    }
  }

  double Percentile(double p) const {
    if (totals.samples == 0) return 0.0;
    const auto target = static_cast<uint64_t>(std::ceil(p * static_cast<double>(totals.samples)));
    uint64_t seen = 0;
    for (std::size_t i = 0; i < histogram.size(); ++i) {
      seen += histogram[i];
      if (seen >= std::max<uint64_t>(target, 1)) return static_cast<double>(i) / 1000.0 + 0.0005;
    }
    return static_cast<double>(totals.max_ns) / 1e6;
  }
};

double CpuSecondsSelf() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
         static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1e6;
}

// utime + stime of another process from /proc/PID/stat, in seconds; negative when unknown.
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

}  // namespace

int RunLoad(Args args) {
  ArgScanner scan("load", args);
  if (scan.Help()) {
    std::fputs(kHelp, stdout);
    return kExitOk;
  }
  ClientFlags flags;
  const bool have_flags = ReadClientFlags(scan, "load", flags);
  const uint64_t n_clients = scan.U64("--clients").value_or(200);
  const uint64_t n_movers = scan.U64("--movers").value_or(100);
  const double rate = scan.Double("--rate").value_or(20.0);
  const double duration = scan.Double("--duration").value_or(10.0);
  const double warmup = scan.Double("--warmup").value_or(1.0);
  const bool spread = scan.Flag("--spread");
  const auto server_pid = scan.U64("--server-pid");
  const bool json = scan.Flag("--json");
  if (!scan.Finish() || !have_flags) return kExitBadInput;
  if (n_clients < 2 || n_clients > 2000 || n_movers < 1 || n_movers > 10000 || rate <= 0 ||
      rate > 1000 || duration <= 0 || duration > 600 || warmup < 0 || warmup > 60) {
    PrintMessage("load",
                 "limits: --clients 2..2000, --movers 1..10000, --rate (0,1000], "
                 "--duration (0,600], --warmup [0,60]");
    return kExitBadInput;
  }
  for (const client::ServerUrl& url : flags.urls) {
    if (url.host != "127.0.0.1" && url.host != "localhost" && url.host != "::1") {
      PrintMessage("load", "runs against loopback only (127.0.0.1, localhost or ::1)");
      return kExitBadInput;
    }
  }
  Run run;
  run.movers.resize(n_movers);
  for (uint32_t i = 0; i < n_clients; ++i) {
    auto c = std::make_unique<LoadClient>();
    c->index = i;
    run.clients.push_back(std::move(c));
  }
  for (uint32_t k = 0; k < n_movers; ++k) {
    run.movers[k].owner = static_cast<uint32_t>(k % n_clients);
    run.clients[k % n_clients]->movers.push_back(k);
  }
  for (auto& owned : run.clients) {
    LoadClient* c = owned.get();
    client::ConnectionHandlers h;
    h.on_open = [c, &flags] {
      session::Hello hello;
      hello.scene = flags.scene;
      hello.token = flags.token;
      hello.client_name = "load-" + std::to_string(c->index);
      c->connection->Send(session::BuildFrame(hello));
    };
    h.on_frame = [c, &run](const session::Frame& f, std::span<const uint8_t>) {
      run.OnFrame(*c, f);
    };
    h.on_closed = [c](const Error&) { c->closed = true; };
    const client::ServerUrl& url = flags.urls[c->index % flags.urls.size()];
    client::ConnectionOptions connection_options;
    connection_options.ca_file = flags.ca_file;
    c->connection =
        std::make_shared<client::Connection>(run.ioc, url, flags.scene, connection_options, h);
    c->connection->Start();
  }
  // Phase 1: everyone joins (bounded).
  const auto join_deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  StatusLine status;
  const auto joined = [&] {
    return "load: " + std::to_string(run.ready) + "/" + std::to_string(n_clients) + " joined";
  };
  while (run.ready < n_clients && std::chrono::steady_clock::now() < join_deadline) {
    run.ioc.run_for(std::chrono::milliseconds(50));
    status.Show(joined());
  }
  status.Show(joined(), /*now=*/true);
  status.End();
  if (run.ready < n_clients) {
    PrintMessage("load", "only " + std::to_string(run.ready) + " of " + std::to_string(n_clients) +
                             " clients joined within 30 s" +
                             (run.last_refusal.empty() ? "" : " (" + run.last_refusal + ")"));
    return kExitCheckFailed;
  }
  // Phase 2: ticks. One timer; with --spread each tick is cut into slices over the clients.
  const auto period = std::chrono::nanoseconds(static_cast<int64_t>(1e9 / rate));
  const int slices = spread ? 10 : 1;
  net::asio::steady_timer timer(run.ioc);
  uint64_t tick = 0;
  int slice = 0;
  auto next = std::chrono::steady_clock::now();
  std::function<void()> arm;
  const auto fire = [&] {
    for (auto& c : run.clients) {
      if (c->movers.empty() || static_cast<int>(c->index % slices) != slice) continue;
      run.Send(*c, c->movers, tick);
    }
    if (++slice == slices) {
      slice = 0;
      ++tick;
    }
    next += period / slices;
    arm();
  };
  arm = [&] {
    timer.expires_at(next);
    timer.async_wait([&](const net::error_code& ec) {
      if (!ec) fire();
    });
  };
  arm();
  const auto t0 = std::chrono::steady_clock::now();
  const auto measure_start = t0 + std::chrono::duration_cast<std::chrono::nanoseconds>(
                                      std::chrono::duration<double>(warmup));
  const auto measure_end = measure_start + std::chrono::duration_cast<std::chrono::nanoseconds>(
                                               std::chrono::duration<double>(duration));
  double cpu_self_start = 0, cpu_server_start = -1;
  uint64_t bytes_in_start = 0, bytes_out_start = 0;
  const auto sum_bytes = [&](bool in) {
    uint64_t total = 0;
    for (auto& c : run.clients) {
      total += in ? c->connection->bytes_received() : c->connection->bytes_sent();
    }
    return total;
  };
  Totals last_totals;
  auto last_report = measure_start;
  while (std::chrono::steady_clock::now() < measure_end) {
    run.ioc.run_for(std::chrono::milliseconds(100));
    const auto now = std::chrono::steady_clock::now();
    if (!run.measuring && now >= measure_start) {
      run.measuring = true;
      cpu_self_start = CpuSecondsSelf();
      if (server_pid) cpu_server_start = CpuSecondsOf(*server_pid);
      bytes_in_start = sum_bytes(true);
      bytes_out_start = sum_bytes(false);
      last_report = now;
    }
    if (status.enabled() && run.measuring && now - last_report >= std::chrono::seconds(1)) {
      const double dt = std::chrono::duration<double>(now - last_report).count();
      char text[256];
      std::snprintf(
          text, sizeof text,
          "load: %llu clients  in %.0f msg/s  out %.0f msg/s  p50 %.2f ms  p99 %.2f ms  max "
          "%.2f ms",
          static_cast<unsigned long long>(n_clients),
          static_cast<double>(run.totals.sent_messages - last_totals.sent_messages) / dt,
          static_cast<double>(run.totals.received_messages - last_totals.received_messages) / dt,
          run.Percentile(0.50), run.Percentile(0.99), static_cast<double>(run.totals.max_ns) / 1e6);
      status.Show(text);
      last_totals = run.totals;
      last_report = now;
    }
  }
  run.measuring = false;
  const double cpu_self = CpuSecondsSelf() - cpu_self_start;
  const double cpu_server =
      server_pid && cpu_server_start >= 0 ? CpuSecondsOf(*server_pid) - cpu_server_start : -1.0;
  const uint64_t bytes_in = sum_bytes(true) - bytes_in_start;
  const uint64_t bytes_out = sum_bytes(false) - bytes_out_start;
  status.End();
  timer.cancel();
  uint32_t connected = 0;
  for (auto& c : run.clients) {
    if (!c->closed) ++connected;
    c->connection->Close();
  }
  // Returns as soon as every connection's cancelled operations have completed.
  run.ioc.run_for(std::chrono::seconds(5));

  const Totals& t = run.totals;
  // Figures rounded to what they can tell (0.1 % of CPU, 1 us of latency), so the JSON holds
  // 0.501 and not 0.50099999999999989.
  // Dividing by a power of ten gives the double nearest the decimal, which dump() prints short.
  const auto rounded = [](double v, double scale) { return std::round(v * scale) / scale; };
  nlohmann::ordered_json summary;
  summary["clients"] = n_clients;
  summary["connected"] = connected;
  summary["movers"] = n_movers;
  summary["rate_hz"] = rate;
  summary["duration_s"] = duration;
  summary["sent_frames"] = t.sent_frames;
  summary["sent_messages"] = t.sent_messages;
  summary["received_frames"] = t.received_frames;
  summary["received_messages"] = t.received_messages;
  summary["messages_per_second_in"] = rounded(static_cast<double>(t.sent_messages) / duration, 10);
  summary["messages_per_second_out"] =
      rounded(static_cast<double>(t.received_messages) / duration, 10);
  summary["bytes_sent"] = bytes_out;
  summary["bytes_received"] = bytes_in;
  summary["bytes_per_client_per_second"] =
      rounded(static_cast<double>(bytes_in) / static_cast<double>(n_clients) / duration, 10);
  summary["latency_ms"] = {{"samples", t.samples},
                           {"p50", rounded(run.Percentile(0.50), 1000)},
                           {"p95", rounded(run.Percentile(0.95), 1000)},
                           {"p99", rounded(run.Percentile(0.99), 1000)},
                           {"max", rounded(static_cast<double>(t.max_ns) / 1e6, 1000)}};
  summary["acks"] = t.acks;
  summary["refusals"] = t.refusals;
  summary["load_cpu_seconds"] = rounded(cpu_self, 1000);
  summary["load_cpu_percent"] = rounded(100.0 * cpu_self / duration, 10);
  summary["server_cpu_seconds"] = rounded(cpu_server, 1000);
  summary["server_cpu_percent"] =
      cpu_server >= 0 ? rounded(100.0 * cpu_server / duration, 10) : -1.0;
  if (json) {
    std::printf("%s\n", summary.dump().c_str());
  } else {
    std::printf(
        "clients %u/%llu  movers %llu at %g Hz  for %g s\n"
        "sent %.0f msg/s  received %.0f msg/s (all clients)  %.0f bytes/client/s\n"
        "latency ms (%llu samples): p50 %.3f  p95 %.3f  p99 %.3f  max %.3f\n"
        "cpu: load generator %.1f%%%s\n",
        connected, static_cast<unsigned long long>(n_clients),
        static_cast<unsigned long long>(n_movers), rate, duration,
        static_cast<double>(t.sent_messages) / duration,
        static_cast<double>(t.received_messages) / duration,
        static_cast<double>(bytes_in) / static_cast<double>(n_clients) / duration,
        static_cast<unsigned long long>(t.samples), run.Percentile(0.50), run.Percentile(0.95),
        run.Percentile(0.99), static_cast<double>(t.max_ns) / 1e6, 100.0 * cpu_self / duration,
        cpu_server >= 0
            ? ("  server " + std::to_string(100.0 * cpu_server / duration) + "%").c_str()
            : "");
  }
  if (t.refusals > 0) PrintMessage("load", "refusals seen; last: " + run.last_refusal);
  return connected == n_clients ? kExitOk : kExitCheckFailed;
}

}  // namespace scenecrdt::cli
