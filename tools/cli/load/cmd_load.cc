// SPDX-License-Identifier: Apache-2.0
// Owns `scenecrdt load`: a light load generator on loopback. --threads shards (a thread and
// an io_context each) drive N connections; M movers (entities spread round-robin over the clients)
// each get a new Transform at a fixed rate. Latency is measured from the moment a mover's frame is
// handed to its connection to the moment the bytes completing another client's frame reached its
// socket (the kernel's SO_TIMESTAMPNS on tcp://; the decode time on ws://): the (entity,
// timestamp) pair of every send is kept in a small ring per mover, so no stamp travels in the
// payload. The run's state and measurements: tools/cli/load/load_run.h.
#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdio>
#include <memory>
#include <nlohmann/json.hpp>
#include <random>
#include <thread>

#include "scenecrdt/client/internal/connection.h"
#include "tools/cli/cli_app.h"
#include "tools/cli/commands.h"
#include "tools/cli/load/load_failover.h"
#include "tools/cli/load/load_run.h"
#include "tools/cli/progress.h"
#include "tools/cli/remote/client_common.h"

namespace scenecrdt::cli {

using load::CpuSecondsOf;
using load::CpuSecondsSelf;
using load::LoadClient;
using load::Mover;
using load::Shard;
using load::Totals;

namespace {
constexpr const char* kAbout =
    R"(Loopback load generator: --clients connections join the scene; --movers entities (spread
round-robin over the clients) each get a new Transform --rate times per second, written by
their owner with increasing timestamps. Every other client measures the delay from the
owner's send to its own receipt. Redraws a progress line on stderr when it is a terminal
(SCENECRDT_PROGRESS=1: a plain line every 5 s on a pipe or file) and prints a summary at the
end (JSON with --json). Run it against a release build. Receipt times come from the kernel
(SO_TIMESTAMPNS) on tcp:// (not tls://), so the generator's own event loop adds nothing.
)";
constexpr const char* kFooter =
    R"(Source addresses: against 127.0.0.1 or localhost (IPv4), client i binds its socket to
--source-ip + i / --clients-per-ip before connecting (on Linux every 127.x.y.z is local), so
no address opens more than --clients-per-ip connections: --clients 2000 runs against a
default `serve` (--max-connections-per-ip 1024) from 127.0.0.1 and 127.0.0.2. Several
generators against one server need distinct --source-ip ranges; a server with a lower
--max-connections-per-ip needs --clients-per-ip below it. Against ::1 every client
connects from ::1 (one address).

Summary: clients connected, messages and bytes per second (sent, received), bytes per client
per second, p50/p95/p99/max latency in ms, acks, refusals, and the CPU the generator (and
--server-pid) used.

Fail-over mode (cluster nodes, docs/CLUSTER.md): --kill-pid PID kills the node of the first
--server URL under real clients and reports their time to come back on another node; see
`scenecrdt load --kill-pid --help`.
exit status: 0 ok; 1 not every client joined or the run failed; 2 bad usage.
)";

}  // namespace

int RunLoad(Args args) {
  if (WantsLoadFailover(args)) return RunLoadFailover(args);
  CliApp app("load", kAbout, kFooter);
  ClientFlagValues client;
  std::optional<uint64_t> clients_given, movers_given, threads_given, server_pid, per_ip_given;
  std::optional<double> rate_given, duration_given, warmup_given, world_size_given,
      interest_radius_given;
  std::optional<std::string> compression_given, source_ip_given;
  bool spread = false, zstd_flag = false, no_deflate = false, user_stamps = false, json = false;
  DeclareClientFlags(app, client);
  app.U64("--clients", "N",
          "connections (default 200, at most 2000); from several source\n"
          "addresses when needed, see \"Source addresses\" below",
          &clients_given);
  app.U64("--movers", "M", "moving entities (default 100, at most 10000)", &movers_given);
  app.Double("--rate", "HZ", "updates per mover per second (default 20, at most 1000)",
             &rate_given);
  app.Double("--duration", "SEC", "measured time (default 10, at most 600)", &duration_given);
  app.Double("--warmup", "SEC", "unmeasured time after everyone joined (default 1)", &warmup_given);
  app.Flag("--spread", "spread the movers' sends over the tick instead of one burst per tick",
           &spread);
  app.U64("--threads", "N", "generator threads, clients spread over them (default 1, at most 64)",
          &threads_given);
  app.Flag("--user-timestamps",
           "stamp receipts when the frame is decoded, not the kernel's receive time", &user_stamps);
  app.Value("--compression", "MODE",
            "what to offer on tcp:// and tls:// (the server decides): `zstd` (zstd\n"
            "frames, compressed once per scene, and the zstd stream for servers\n"
            "without them), `zstd-stream` (only the per-connection zstd stream) or\n"
            "`none` (plain frames); default `zstd`, what the C++ client offers\n"
            "by default",
            &compression_given);
  app.Flag("--zstd", "the same as --compression zstd", &zstd_flag);
  app.Flag("--no-deflate", "do not offer permessage-deflate on ws:// and wss://", &no_deflate);
  app.Value("--source-ip", "A", "first source address (127.0.0.0/8, default 127.0.0.1)",
            &source_ip_given);
  app.U64("--clients-per-ip", "N", "clients per source address (default 1000)", &per_ip_given);
  app.U64("--server-pid", "PID", "also report that process's CPU use over the measured time",
          &server_pid);
  app.Double("--world-size", "S",
             "movers and clients spread over an S x S square (metres, y = 0):\n"
             "movers random-walk in it, each client without movers writes a static\n"
             "entity at its own spot",
             &world_size_given);
  app.Double("--interest-radius", "R",
             "with --world-size: each client declares an interest (docs/INTEREST.md)\n"
             "following its own entity (its first mover, else its static entity)\n"
             "with radius R; --json adds entities_in_view_mean",
             &interest_radius_given);
  app.Flag("--json", "print the summary as one JSON object on stdout", &json);
  if (auto status = app.Parse(args)) return *status;
  ClientFlags flags;
  if (!ReadClientFlags(client, "load", flags)) return kExitBadInput;
  const uint64_t n_clients = clients_given.value_or(200);
  const uint64_t n_movers = movers_given.value_or(100);
  const double rate = rate_given.value_or(20.0);
  const double duration = duration_given.value_or(10.0);
  const double warmup = warmup_given.value_or(1.0);
  const std::string compression = compression_given.value_or(zstd_flag ? "zstd" : "");
  const bool deflate = !no_deflate;
  const uint64_t n_threads = threads_given.value_or(1);
  const std::string source_ip = source_ip_given.value_or("127.0.0.1");
  const uint64_t per_ip = per_ip_given.value_or(load::kDefaultClientsPerAddress);
  const double world_size = world_size_given.value_or(0.0);
  const double interest_radius = interest_radius_given.value_or(0.0);
  // The negations refuse NaN too.
  if (!(world_size >= 0 && world_size <= 1e6) ||
      !(interest_radius >= 0 && interest_radius <= 1e6) ||
      (interest_radius > 0 && world_size == 0)) {
    PrintMessage("load",
                 "--world-size takes [0, 1000000] metres; --interest-radius [0, 1000000] and "
                 "needs --world-size");
    return kExitBadInput;
  }
  client::ConnectionOptions options;
  if (compression == "zstd" || compression == "zstd-stream") {
    options.zstd = true;
    options.zstd_frames = compression == "zstd";
  } else if (compression == "none") {
    options.zstd = false;
  } else if (!compression.empty()) {
    PrintMessage("load",
                 "--compression takes zstd, zstd-stream or none (got \"" + compression + "\")");
    return kExitBadInput;
  }
  if (n_clients < 2 || n_clients > 2000 || n_movers < 1 || n_movers > 10000 || rate <= 0 ||
      rate > 1000 || duration <= 0 || duration > 600 || warmup < 0 || warmup > 60 ||
      n_threads < 1 || n_threads > 64) {
    PrintMessage("load",
                 "limits: --clients 2..2000, --movers 1..10000, --rate (0,1000], "
                 "--duration (0,600], --warmup [0,60], --threads 1..64");
    return kExitBadInput;
  }
  if (!RequireLoopback(flags.urls, "load")) return kExitBadInput;
  load::SourceAddresses sources;
  const auto first_source = load::ParseLoopbackV4(source_ip);
  if (!first_source || per_ip < 1 || per_ip > 65535) {
    PrintMessage("load",
                 "--source-ip takes an address in 127.0.0.0/8 and --clients-per-ip 1..65535");
    return kExitBadInput;
  }
  sources.first = *first_source;
  sources.per_address = static_cast<uint32_t>(per_ip);
  // IPv4 loopback targets only: a socket bound to 127.x cannot reach ::1.
  sources.enabled = std::none_of(flags.urls.begin(), flags.urls.end(),
                                 [](const auto& url) { return url.host == "::1"; });
  const uint32_t n_sources = sources.Count(static_cast<uint32_t>(n_clients));
  if (sources.enabled && uint64_t{sources.first} + n_sources - 1 > 0x7ffffffeu) {
    PrintMessage("load", "--source-ip + the addresses --clients needs leave 127.0.0.0/8");
    return kExitBadInput;
  }
  load::RaiseOpenFileLimit();
  load::Run run;
  // Kernel receive stamps need plain framed TCP on every server of the list.
  run.kernel_stamps =
      !user_stamps && std::all_of(flags.urls.begin(), flags.urls.end(), [](const auto& url) {
        return url.scheme == client::ServerUrl::Scheme::kTcp && !url.tls;
      });
  run.epoch_ns = run.Now();
  run.movers = std::vector<Mover>(n_movers);
  for (uint64_t i = 0; i < n_threads; ++i) run.shards.push_back(std::make_unique<Shard>());
  for (uint32_t i = 0; i < n_clients; ++i) {
    auto c = std::make_unique<LoadClient>();
    c->index = i;
    run.shards[i % n_threads]->clients.push_back(c.get());
    run.clients.push_back(std::move(c));
  }
  for (uint32_t k = 0; k < n_movers; ++k) {
    run.movers[k].owner = static_cast<uint32_t>(k % n_clients);
    run.clients[k % n_clients]->movers.push_back(k);
  }
  run.world_size = world_size;
  if (world_size > 0) {
    // Uniform over the square, the same spots every run (seeded).
    std::mt19937 spots(19);
    std::uniform_real_distribution<float> at(0.0f, static_cast<float>(world_size));
    for (Mover& m : run.movers) {
      m.x = at(spots);
      m.z = at(spots);
      m.walk = static_cast<uint32_t>(spots());
    }
    run.static_spots.resize(n_clients);
    for (auto& spot : run.static_spots) spot = {at(spots), at(spots)};
  }
  options.deflate = deflate;
  options.kernel_receive_timestamps = run.kernel_stamps;
  options.ca_file = flags.ca_file;
  for (auto& owned : run.shards) {
    Shard* shard = owned.get();
    for (LoadClient* c : shard->clients) {
      const client::ServerUrl& url = flags.urls[c->index % flags.urls.size()];
      client::ConnectionHandlers h;
      h.on_open = [c, &flags, &options, &url, &run, interest_radius] {
        if (interest_radius > 0) {
          // Before the Hello: the join's state is a snapshot of the view.
          session::SetInterest interest;
          interest.mode = session::InterestMode::kFollow;
          interest.follow_entity = run.OwnEntity(*c);
          interest.radius = static_cast<float>(interest_radius);
          c->connection->Send(session::BuildFrame(interest));
        }
        session::Hello hello;
        hello.scene = flags.scene;
        hello.token = flags.token;
        hello.client_name = "load-" + std::to_string(c->index);
        client::OfferCompression(url, options, hello);
        c->connection->Send(session::BuildFrame(hello));
      };
      h.on_frame = [c, shard, &run](const session::Frame& f, std::span<const uint8_t>) {
        run.OnFrame(*shard, *c, f);
      };
      h.on_closed = [c, shard, &run](const Error& e) {
        run.OnClosed(*c);
        if (e.code != ErrorCode::kOk && e.detail != nullptr) shard->last_close_error = e.detail;
      };
      client::ConnectionOptions own = options;
      own.local_address = sources.For(c->index);
      c->connection = std::make_shared<client::Connection>(shard->ioc, url, flags.scene, own, h);
      c->connection->Start();
    }
  }
  // Every shard runs its io_context on its own thread until the end of the run.
  std::vector<net::asio::executor_work_guard<net::asio::io_context::executor_type>> guards;
  for (auto& shard : run.shards) {
    guards.push_back(net::asio::make_work_guard(shard->ioc));
    shard->thread = std::thread([s = shard.get()] { s->ioc.run(); });
  }
  // Lets the shards finish what is pending (closes), at most 5 s, then ends the threads.
  const auto stop_threads = [&] {
    for (auto& g : guards) g.reset();
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
    for (auto& shard : run.shards) {
      while (!shard->ioc.stopped() && std::chrono::steady_clock::now() < deadline) {
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
      }
      shard->ioc.stop();
      if (shard->thread.joinable()) shard->thread.join();
    }
  };
  // Counts the connections that had ended, closes every other one, then ends the threads.
  const auto close_and_stop = [&](std::atomic<uint32_t>& closed_count) {
    for (auto& owned : run.shards) {
      Shard* shard = owned.get();
      net::asio::post(shard->ioc, [shard, &closed_count] {
        shard->timer.cancel();
        for (LoadClient* c : shard->clients) {
          if (c->closed) closed_count.fetch_add(1);
          c->connection->Close();
        }
      });
    }
    stop_threads();
  };
  // The last refusal, else the last connection error (read after the threads ended).
  const auto last_refusal = [&] {
    std::string text, error;
    for (auto& shard : run.shards) {
      if (!shard->last_refusal.empty()) text = shard->last_refusal;
      if (!shard->last_close_error.empty()) error = shard->last_close_error;
    }
    return text.empty() ? error : text;
  };
  // Phase 1: everyone joins (bounded).
  const auto join_deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  StatusLine status;
  const auto joined = [&] {
    return "load: " + std::to_string(run.ready.load()) + "/" + std::to_string(n_clients) +
           " joined";
  };
  // Until every client is in, or in or gone (refused, cut: no reason to wait for the rest).
  while (run.ready.load() < n_clients &&
         run.ready.load() + run.gone_before_ready.load() < n_clients &&
         std::chrono::steady_clock::now() < join_deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    status.Show(joined());
  }
  status.Show(joined(), /*now=*/true);
  status.End();
  if (run.ready.load() < n_clients) {
    std::atomic<uint32_t> ignored{0};
    close_and_stop(ignored);
    const std::string refusal = last_refusal();
    const uint32_t gone = run.gone_before_ready.load();
    PrintMessage(
        "load", "only " + std::to_string(run.ready.load()) + " of " + std::to_string(n_clients) +
                    " clients joined" +
                    (gone > 0 ? " (" + std::to_string(gone) + " refused or cut)" : " within 30 s") +
                    (refusal.empty() ? "" : ": " + refusal));
    if (sources.enabled) {
      PrintMessage("load", "the clients connected from " + std::to_string(n_sources) +
                               " source address(es) from " + sources.For(0) + ", " +
                               std::to_string(sources.per_address) +
                               " each (--source-ip, --clients-per-ip)");
    }
    return kExitCheckFailed;
  }
  // Phase 2: ticks. One timer per shard, on a common schedule; with --spread each tick is cut
  // into slices over the clients.
  const auto period = std::chrono::nanoseconds(static_cast<int64_t>(1e9 / rate));
  const int slices = spread ? 10 : 1;
  const auto first_tick = std::chrono::steady_clock::now() + std::chrono::milliseconds(10);
  for (auto& owned : run.shards) {
    Shard* shard = owned.get();
    net::asio::post(shard->ioc, [shard, &run, period, slices, first_tick] {
      struct Ticker {
        Shard* shard;
        load::Run* run;
        std::chrono::nanoseconds period;
        int slices;
        std::chrono::steady_clock::time_point next;
        uint64_t tick = 0;
        int slice = 0;
        void Arm(std::shared_ptr<Ticker> self) {
          shard->timer.expires_at(next);
          shard->timer.async_wait([self](const net::error_code& ec) {
            if (!ec) self->Fire(self);
          });
        }
        void Fire(std::shared_ptr<Ticker> self) {
          for (LoadClient* c : shard->clients) {
            if (c->movers.empty() || static_cast<int>(c->index % slices) != slice) continue;
            run->Send(*shard, *c, c->movers, tick);
          }
          if (++slice == slices) {
            slice = 0;
            ++tick;
          }
          next += period / slices;
          Arm(std::move(self));
        }
      };
      auto ticker = std::make_shared<Ticker>(Ticker{shard, &run, period, slices, first_tick, 0, 0});
      ticker->Arm(ticker);
    });
  }
  const auto t0 = first_tick;
  const auto measure_start = t0 + std::chrono::duration_cast<std::chrono::nanoseconds>(
                                      std::chrono::duration<double>(warmup));
  const auto measure_end = measure_start + std::chrono::duration_cast<std::chrono::nanoseconds>(
                                               std::chrono::duration<double>(duration));
  const auto sum_bytes = [&](bool in) {
    uint64_t total = 0;
    for (auto& c : run.clients) {
      total += in ? c->connection->bytes_received() : c->connection->bytes_sent();
    }
    return total;
  };
  std::this_thread::sleep_until(measure_start);
  run.measuring.store(true);
  const double cpu_self_start = CpuSecondsSelf();
  const double cpu_server_start = server_pid ? CpuSecondsOf(*server_pid) : -1.0;
  const uint64_t bytes_in_start = sum_bytes(true);
  const uint64_t bytes_out_start = sum_bytes(false);
  uint64_t last_sent = 0, last_received = 0;
  auto last_report = std::chrono::steady_clock::now();
  while (std::chrono::steady_clock::now() < measure_end) {
    std::this_thread::sleep_until(
        std::min(measure_end, std::chrono::steady_clock::now() + std::chrono::milliseconds(100)));
    const auto now = std::chrono::steady_clock::now();
    if (status.enabled() && now - last_report >= std::chrono::seconds(1)) {
      const double dt = std::chrono::duration<double>(now - last_report).count();
      const uint64_t sent = run.Sum(&Totals::sent_messages);
      const uint64_t received = run.Sum(&Totals::received_messages);
      char text[256];
      std::snprintf(text, sizeof text,
                    "load: %llu clients  in %.0f msg/s  out %.0f msg/s  p50 %.2f ms  p99 %.2f ms  "
                    "max %.2f ms",
                    static_cast<unsigned long long>(n_clients),
                    static_cast<double>(sent - last_sent) / dt,
                    static_cast<double>(received - last_received) / dt, run.Percentile(0.50),
                    run.Percentile(0.99), static_cast<double>(run.MaxNs()) / 1e6);
      status.Show(text);
      last_sent = sent;
      last_received = received;
      last_report = now;
    }
  }
  run.measuring.store(false);
  const double cpu_self = CpuSecondsSelf() - cpu_self_start;
  const double cpu_server =
      server_pid && cpu_server_start >= 0 ? CpuSecondsOf(*server_pid) - cpu_server_start : -1.0;
  const uint64_t bytes_in = sum_bytes(true) - bytes_in_start;
  const uint64_t bytes_out = sum_bytes(false) - bytes_out_start;
  status.End();
  std::atomic<uint32_t> closed_count{0};
  close_and_stop(closed_count);
  const uint32_t connected = static_cast<uint32_t>(n_clients) - closed_count.load();

  struct {
    uint64_t sent_frames, sent_messages, received_frames, received_messages, acks, refusals,
        samples;
    int64_t max_ns;
  } const t{run.Sum(&Totals::sent_frames),
            run.Sum(&Totals::sent_messages),
            run.Sum(&Totals::received_frames),
            run.Sum(&Totals::received_messages),
            run.Sum(&Totals::acks),
            run.Sum(&Totals::refusals),
            run.Sum(&Totals::samples),
            run.MaxNs()};
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
  summary["threads"] = n_threads;
  summary["source_addresses"] = n_sources;
  summary["kernel_timestamps"] = run.kernel_stamps;
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
  if (world_size > 0) {
    // Entities (movers and static ones) within the radius of each client's own entity, at the
    // end of the run (every entity when there is no interest), averaged over the clients.
    std::vector<std::array<float, 2>> entities;
    for (const Mover& m : run.movers) entities.push_back({m.x, m.z});
    for (const auto& c : run.clients) {
      if (c->movers.empty()) entities.push_back(run.static_spots[c->index]);
    }
    double in_view = 0;
    for (const auto& c : run.clients) {
      const std::array<float, 2> at = run.Spot(*c);
      if (interest_radius <= 0) {
        in_view += static_cast<double>(entities.size());
        continue;
      }
      for (const auto& e : entities) {
        const double dx = e[0] - at[0], dz = e[1] - at[1];
        in_view += dx * dx + dz * dz <= interest_radius * interest_radius ? 1 : 0;
      }
    }
    summary["world_size_m"] = world_size;
    summary["interest_radius_m"] = interest_radius;
    summary["entities_in_view_mean"] = rounded(in_view / static_cast<double>(n_clients), 10);
  }
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
  if (t.refusals > 0) PrintMessage("load", "refusals seen; last: " + last_refusal());
  return connected == n_clients ? kExitOk : kExitCheckFailed;
}

}  // namespace scenecrdt::cli
