// SPDX-License-Identifier: Apache-2.0
// Owns `scenecrdt watch`: a live tree view of a scene (effective hierarchy with world
// positions), redrawn in place on a terminal, printed periodically otherwise.
#include <unistd.h>

#include <atomic>
#include <csignal>
#include <cstdio>
#include <map>

#include "tools/cli/cli_app.h"
#include "tools/cli/commands.h"
#include "tools/cli/remote/client_common.h"

namespace scenecrdt::cli {

namespace {
constexpr const char* kAbout =
    R"(Joins a scene and shows its entity tree live: effective parent, world position, parked loop
members and placeholder parents, plus update counts. On a terminal the view redraws in place;
otherwise a plain snapshot is printed every --interval. Ctrl-C stops.
)";
constexpr const char* kFooter =
    R"(exit status: 0 ok; 1 refused or the connection failed; 2 bad usage.
)";

std::atomic<bool> g_stop{false};
void OnSignal(int) { g_stop.store(true); }

void AppendTree(const client::Client& c, const runtime::Runtime& rt, std::size_t max_rows,
                std::string& out) {
  const auto nodes = rt.transforms().Nodes();
  std::map<protocol::EntityId, std::vector<const runtime::NodeInfo*>> children;
  for (const runtime::NodeInfo& n : nodes) {
    if (n.entity != 0) children[n.effective_parent].push_back(&n);
  }
  const auto world = rt.world_matrices();
  std::size_t rows = 0;
  char line[256];
  const auto walk = [&](auto& self, protocol::EntityId parent, int depth) -> void {
    auto it = children.find(parent);
    if (it == children.end()) return;
    for (const runtime::NodeInfo* n : it->second) {
      if (rows++ >= max_rows) return;
      float x = 0, y = 0, z = 0;
      if (n->index < world.size()) {
        x = world[n->index][3][0];
        y = world[n->index][3][1];
        z = world[n->index][3][2];
      }
      std::snprintf(line, sizeof line, "%*s%u%s%s  (%8.3f %8.3f %8.3f)\n", depth * 2 + 2, "",
                    n->entity, n->parked ? " [parked: loop]" : "",
                    n->placeholder ? " [placeholder]" : "", static_cast<double>(x),
                    static_cast<double>(y), static_cast<double>(z));
      out += line;
      self(self, n->entity, depth + 1);
    }
  };
  walk(walk, 0, 0);
  if (rows > max_rows) out += "  ... (" + std::to_string(nodes.size()) + " nodes)\n";
  (void)c;
}

}  // namespace

int RunWatch(Args args) {
  CliApp app("watch", kAbout, kFooter);
  ClientFlagValues client;
  std::optional<uint64_t> interval_given, max_rows_given;
  std::optional<double> duration;
  DeclareClientFlags(app, client);
  app.U64("--interval", "MS", "redraw period (default 200 on a terminal, 1000 otherwise)",
          &interval_given);
  app.Double("--duration", "SEC", "stop after SEC (default: until Ctrl-C)", &duration);
  app.U64("--max-rows", "N", "rows shown (default 40)", &max_rows_given);
  DeclareInterestFlags(app, client);
  if (auto status = app.Parse(args)) return *status;
  ClientFlags flags;
  bool have_flags = ReadClientFlags(client, "watch", flags);
  have_flags = ReadInterestFlags(client, "watch", flags) && have_flags;
  if (!have_flags) return kExitBadInput;
  const bool tty = isatty(STDOUT_FILENO) != 0;
  const uint64_t interval_ms = interval_given.value_or(tty ? 200 : 1000);
  const uint64_t max_rows = max_rows_given.value_or(40);
  auto c = JoinScene("watch", flags, "scenecrdt-watch");
  if (!c) return kExitCheckFailed;
  std::signal(SIGINT, OnSignal);
  std::signal(SIGTERM, OnSignal);
  const auto start = std::chrono::steady_clock::now();
  auto next_draw = start;
  uint64_t frames_at_last = 0;
  std::string out;
  while (!g_stop.load()) {
    c->PollUntil([] { return g_stop.load(); }, std::chrono::milliseconds(20));
    c->Update();
    const auto now = std::chrono::steady_clock::now();
    const double elapsed = std::chrono::duration<double>(now - start).count();
    if (c->closed()) {
      PrintMessage("watch", "the connection ended: " + ConnectionEndReason(*c));
      return kExitCheckFailed;
    }
    if (now >= next_draw) {
      next_draw = now + std::chrono::milliseconds(interval_ms);
      out.clear();
      if (tty) out += "\x1b[H\x1b[2J";
      char head[256];
      std::snprintf(head, sizeof head,
                    "scene %s on %s  t=%.1fs  seq=%llu  %zu nodes  %llu live frames (+%llu)\n",
                    flags.scene.c_str(), flags.server.c_str(), elapsed,
                    static_cast<unsigned long long>(c->scene_sequence() & 0xFFFFFFFFFFull),
                    c->runtime().transforms().num_nodes(),
                    static_cast<unsigned long long>(c->live_frames()),
                    static_cast<unsigned long long>(c->live_frames() - frames_at_last));
      frames_at_last = c->live_frames();
      out += head;
      AppendTree(*c, c->runtime(), max_rows, out);
      if (!tty) out += '\n';
      std::fwrite(out.data(), 1, out.size(), stdout);
      std::fflush(stdout);
    }
    if (duration && elapsed >= *duration) break;
  }
  c->Stop();
  return kExitOk;
}

}  // namespace scenecrdt::cli
