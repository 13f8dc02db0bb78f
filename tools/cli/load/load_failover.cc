// SPDX-License-Identifier: Apache-2.0
// Owns `scenecrdt load --kill-pid`: the fail-over time of a cluster. N real clients (the
// client library, reconnect on, the whole --server list) join the first node and write; the
// command kills that node with SIGKILL and measures, per client, the time from the kill (and
// from the moment the client saw its connection end) to the moment it was welcomed again on
// another node with its state applied, and whether that was a resume delta or a snapshot.
// Then it waits until every write is acknowledged (unacknowledged frames are resent).
#include "tools/cli/load/load_failover.h"

#include <signal.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <iterator>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <thread>

#include "scenecrdt/client/client.h"
#include "scenecrdt/client/url.h"
#include "tools/cli/progress.h"
#include "tools/cli/remote/client_common.h"

namespace scenecrdt::cli {

namespace {

constexpr const char* kAbout =
    R"(Fail-over mode: measures how long the clients of a cluster node (`serve --redis`,
docs/CLUSTER.md) take to come back on another node after that node is killed with -9.
--clients clients (the C++ client library, reconnect on) are given the whole --server list,
URL1 first (the others rotated per client, so they spread over the survivors); they join URL1
and each writes its own entity --rate times per second. After --warmup seconds the command
sends SIGKILL to PID (which must be the `scenecrdt serve --redis` process behind URL1) and
records, per client, the time from the kill and from the client's disconnect to its return:
welcomed by another node with the state applied. Then it waits until every write is
acknowledged (frames the dead node never acknowledged are resent).
)";
constexpr const char* kFooter =
    R"(Summary: clients back / resumed (a delta) / given a snapshot, kill-to-back and
disconnect-to-back p50/p99/max in ms, frames resent, writes left unacknowledged.
Times are taken on this command's polling loop (about 1 ms resolution).
exit status: 0 every client came back with a resume delta and every write was
acknowledged; 1 otherwise; 2 bad usage.
)";

using Clock = std::chrono::steady_clock;

struct Tracked {
  std::unique_ptr<client::Client> client;
  protocol::EntityId entity = 0;
  uint32_t writes = 0;
  Clock::time_point next_write;
  uint64_t disconnects_before = 0;
  uint64_t connects_before = 0;
  std::optional<Clock::time_point> lost;
  std::optional<Clock::time_point> back;
  bool resumed = false;
};

double Ms(Clock::duration d) { return std::chrono::duration<double, std::milli>(d).count(); }

double Round3(double v) { return std::round(v * 1000.0) / 1000.0; }

// p in [0, 1] of sorted `v` (nearest rank); -1 when empty.
double Percentile(const std::vector<double>& v, double p) {
  if (v.empty()) return -1.0;
  const auto rank = static_cast<std::size_t>(std::ceil(p * static_cast<double>(v.size())));
  return v[std::clamp<std::size_t>(rank, 1, v.size()) - 1];
}

nlohmann::json Summary(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return {{"samples", v.size()},
          {"p50", Round3(Percentile(v, 0.50))},
          {"p99", Round3(Percentile(v, 0.99))},
          {"max", Round3(v.empty() ? -1.0 : v.back())}};
}

// The process's argv, NUL-separated in /proc; empty when it does not exist.
std::vector<std::string> CommandLine(uint64_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/cmdline", std::ios::binary);
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::vector<std::string> out;
  std::size_t start = 0;
  while (start < text.size()) {
    std::size_t end = text.find('\0', start);
    if (end == std::string::npos) end = text.size();
    out.push_back(text.substr(start, end - start));
    start = end + 1;
  }
  return out;
}

bool IsClusterNode(const std::vector<std::string>& argv) {
  const auto has = [&](std::string_view prefix) {
    return std::any_of(argv.begin(), argv.end(),
                       [&](const std::string& a) { return a.rfind(prefix, 0) == 0; });
  };
  return has("serve") && has("--redis");
}

// Polls every client once; writes of those whose turn came.
void PollAll(std::vector<Tracked>& clients, double rate, Clock::time_point now) {
  const auto period =
      rate > 0
          ? std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(1.0 / rate))
          : Clock::duration::zero();
  for (Tracked& t : clients) {
    t.client->Poll();
    if (rate <= 0 || now < t.next_write) continue;
    t.next_write += period;
    protocol::Transform tr;
    tr.position = {static_cast<float>(++t.writes), 0.0f, 0.0f};
    (void)t.client->WriteTransform(t.entity, tr);  // kept and resent until acknowledged
  }
}

}  // namespace

bool WantsLoadFailover(Args args) {
  return std::any_of(args.begin(), args.end(),
                     [](std::string_view a) { return a.rfind("--kill-pid", 0) == 0; });
}

int RunLoadFailover(Args args) {
  CliApp app("load", kAbout, kFooter);
  app.SetUsageName("load --kill-pid PID");
  ClientFlagValues client;
  std::optional<uint64_t> kill_pid, clients_given;
  std::optional<double> rate_given, warmup_given;
  bool json = false;
  DeclareClientFlags(app, client);
  app.U64("--kill-pid", "PID", "the process serving URL1 (checked: a `scenecrdt serve --redis`)",
          &kill_pid);
  app.U64("--clients", "N", "clients (default 100, 1..1000)", &clients_given);
  app.Double("--rate", "HZ", "writes per client per second (default 10, 0..100)", &rate_given);
  app.Double("--warmup", "SEC", "writing before the kill (default 2, 0..60)", &warmup_given);
  app.Flag("--json", "print the summary as one JSON object on stdout", &json);
  if (auto status = app.Parse(args)) return *status;
  ClientFlags flags;
  if (!ReadClientFlags(client, "load", flags)) return kExitBadInput;
  const uint64_t n_clients = clients_given.value_or(100);
  const double rate = rate_given.value_or(10.0);
  const double warmup = warmup_given.value_or(2.0);
  if (!kill_pid || *kill_pid < 2 || n_clients < 1 || n_clients > 1000 || rate < 0 || rate > 100 ||
      warmup < 0 || warmup > 60 || flags.urls.size() < 2) {
    PrintMessage("load",
                 "fail-over mode needs --kill-pid PID and at least two --server URLs; limits: "
                 "--clients 1..1000, --rate [0,100], --warmup [0,60]");
    return kExitBadInput;
  }
  if (!RequireLoopback(flags.urls, "load")) return kExitBadInput;
  if (!IsClusterNode(CommandLine(*kill_pid))) {
    PrintMessage("load", "--kill-pid " + std::to_string(*kill_pid) +
                             " is not a running `scenecrdt serve --redis` process: give the pid "
                             "of the node behind the first --server URL");
    return kExitBadInput;
  }
  const std::vector<std::string> servers = client::SplitServerList(flags.server);
  const auto timeout = std::chrono::milliseconds(flags.timeout_ms);
  // Phase 1: every client joins the first node.
  std::vector<Tracked> clients(n_clients);
  for (uint32_t i = 0; i < n_clients; ++i) {
    client::ClientOptions o;
    o.url = servers[0];
    for (std::size_t k = 0; k + 1 < servers.size(); ++k) {
      o.urls.push_back(servers[1 + (i + k) % (servers.size() - 1)]);
    }
    o.scene = flags.scene;
    o.token = flags.token;
    o.connection.ca_file = flags.ca_file;
    o.client_name = "load-failover-" + std::to_string(i);
    o.reconnect.enabled = true;
    clients[i].client = std::make_unique<client::Client>(o);
    clients[i].entity = protocol::kReservedEntityNumbers + i;
    if (auto started = clients[i].client->Start(); !started.has_value()) {
      PrintError("load", "cannot start a client", started.error());
      return kExitBadInput;
    }
  }
  StatusLine status;
  const auto deadline_join = Clock::now() + timeout;
  std::size_t ready = 0;
  while (ready < n_clients && Clock::now() < deadline_join) {
    ready = 0;
    for (Tracked& t : clients) {
      t.client->Poll();
      ready += t.client->state_ready() && t.client->current_server() == 0 ? 1 : 0;
    }
    status.Show("load: " + std::to_string(ready) + "/" + std::to_string(n_clients) + " joined");
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  status.End();
  if (ready < n_clients) {
    PrintMessage("load", "only " + std::to_string(ready) + " of " + std::to_string(n_clients) +
                             " clients joined " + servers[0] + " (is the node up? --timeout)");
    return kExitCheckFailed;
  }
  // Phase 2: writes, then the kill.
  const Clock::time_point start = Clock::now();
  for (uint32_t i = 0; i < n_clients; ++i) {
    clients[i].next_write =
        start + std::chrono::microseconds(static_cast<int64_t>(1e6 * i / (rate > 0 ? rate : 1) /
                                                               static_cast<double>(n_clients)));
  }
  const auto kill_at = start + std::chrono::milliseconds(static_cast<int64_t>(warmup * 1000));
  while (Clock::now() < kill_at) {
    PollAll(clients, rate, Clock::now());
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  for (Tracked& t : clients) {
    t.client->Poll();
    const client::ClientStats s = t.client->stats();
    t.disconnects_before = s.disconnects;
    t.connects_before = s.connects;
  }
  const Clock::time_point killed = Clock::now();
  if (::kill(static_cast<pid_t>(*kill_pid), SIGKILL) != 0) {
    PrintMessage("load", "kill " + std::to_string(*kill_pid) + " failed (is it yours?)");
    return kExitCheckFailed;
  }
  // Phase 3: the returns. A client is back once it was welcomed again and its state applied.
  std::size_t back = 0;
  const auto deadline_back = killed + timeout;
  while (back < n_clients && Clock::now() < deadline_back) {
    const Clock::time_point now = Clock::now();
    PollAll(clients, rate, now);
    back = 0;
    for (Tracked& t : clients) {
      if (!t.back) {
        const client::ClientStats s = t.client->stats();
        if (!t.lost && s.disconnects > t.disconnects_before) t.lost = now;
        if (t.lost && s.connects > t.connects_before && t.client->synced()) {
          t.back = now;
          t.resumed = t.client->welcome() && t.client->welcome()->resumed;
        }
      }
      back += t.back ? 1 : 0;
    }
    status.Show("load: " + std::to_string(back) + "/" + std::to_string(n_clients) + " back");
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  status.End();
  // Phase 4: every write acknowledged (the dead node's unacknowledged frames resent).
  const auto deadline_acks = Clock::now() + timeout;
  std::size_t unacked = 0;
  do {
    unacked = 0;
    for (Tracked& t : clients) {
      t.client->Poll();
      unacked += t.client->pending_frames() + t.client->unsent_writes();
    }
    if (unacked == 0) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  } while (Clock::now() < deadline_acks);

  std::vector<double> from_kill, from_disconnect;
  uint64_t resumed = 0, snapshots = 0, resent = 0, writes = 0;
  for (Tracked& t : clients) {
    const client::ClientStats s = t.client->stats();
    resent += s.resent_frames;
    writes += t.writes;
    if (!t.back) continue;
    from_kill.push_back(Ms(*t.back - killed));
    from_disconnect.push_back(Ms(*t.back - *t.lost));
    (t.resumed ? resumed : snapshots) += 1;
  }
  for (Tracked& t : clients) t.client->Stop();
  nlohmann::json summary;
  summary["clients"] = n_clients;
  summary["back"] = back;
  summary["resumed"] = resumed;
  summary["snapshots"] = snapshots;
  summary["kill_to_back_ms"] = Summary(from_kill);
  summary["disconnect_to_back_ms"] = Summary(from_disconnect);
  summary["writes"] = writes;
  summary["resent_frames"] = resent;
  summary["unacknowledged"] = unacked;
  if (json) {
    std::printf("%s\n", summary.dump().c_str());
  } else {
    const auto& k = summary["kill_to_back_ms"];
    const auto& d = summary["disconnect_to_back_ms"];
    std::printf(
        "clients back %zu/%llu (resumed %llu, snapshot %llu)\n"
        "kill to back ms: p50 %.3f  p99 %.3f  max %.3f\n"
        "disconnect to back ms: p50 %.3f  p99 %.3f  max %.3f\n"
        "writes %llu  resent frames %llu  unacknowledged %zu\n",
        back, static_cast<unsigned long long>(n_clients), static_cast<unsigned long long>(resumed),
        static_cast<unsigned long long>(snapshots), k["p50"].get<double>(), k["p99"].get<double>(),
        k["max"].get<double>(), d["p50"].get<double>(), d["p99"].get<double>(),
        d["max"].get<double>(), static_cast<unsigned long long>(writes),
        static_cast<unsigned long long>(resent), unacked);
  }
  if (back < n_clients) {
    PrintMessage("load", std::to_string(n_clients - back) + " clients did not come back within " +
                             std::to_string(timeout.count() / 1000) + " s");
  }
  if (unacked != 0) PrintMessage("load", std::to_string(unacked) + " writes never acknowledged");
  return back == n_clients && resumed == n_clients && unacked == 0 ? kExitOk : kExitCheckFailed;
}

}  // namespace scenecrdt::cli
