// SPDX-License-Identifier: Apache-2.0
// Owns `scenecrdt serve`: flags -> ServerConfig, start, wait for SIGINT/SIGTERM, stop cleanly.
#include <cstdio>

#include "scenecrdt/server/server.h"
#include "tools/cli/commands.h"

namespace scenecrdt::cli {

namespace {
constexpr const char* kHelp = R"(usage: scenecrdt serve [options]

Runs the scene server: clients join scenes (created on first join), send DCL CRDT writes,
and receive every winning change at once. State is kept in SQLite under --data and restored
on restart; a write is acknowledged only once it is durable. See docs/SERVER.md.

listeners:
  --tcp HOST:PORT       framed envelope over TCP, for tcp:// clients (default
                        127.0.0.1:7600; "off" disables)
  --http HOST:PORT      HTTP, for ws:// clients (default 127.0.0.1:7601; "off" disables):
                          WebSocket /scene/<name>  the session envelope (scenecrdt clients)
                          WebSocket /dcl/<scene>   raw DCL CRDT chunks, no envelope: an
                                                   unmodified @dcl/ecs engine joins here
                                                   (?token=T with --auth)
                          GET /healthz, GET /metrics
                        tcp:// on the --http port, or ws:// on the --tcp port, is refused
                        with a message naming the right port.
  --threads N           io_context threads (default 1)
state and access:
  --data DIR            database directory (default ./scenecrdt-data)
  --no-fsync            SQLite synchronous=NORMAL: survives kill -9, not a power cut
  --no-compression      never compress (default: zstd on framed TCP and permessage-deflate
                        on WebSocket for clients that offer it)
  --auth FILE           tokens: {"tokens":[{"token":"...","scenes":["lobby","*"],
                        "role":"read"|"write"}]}. Without it: loopback only, all may write.
  --demo                animate the scene "demo" (a small solar system) from the server
  --demo-hz HZ          demo writer rate (default 25)
limits (each refusal is a typed Error frame; see docs/SERVER.md for the defaults' reasons):
  --max-frame-bytes N   largest client frame (default 1048576)
  --max-message-bytes N largest DCL message in a frame (default 65536)
  --max-payload-bytes N largest component payload (default 16384)
  --rate N              messages per second per session, token bucket (default 2000)
  --burst N             token bucket size (default 4000)
  --max-entities N      entities per scene (default 20000)
  --max-tombstones N    deleted entity numbers per scene (default 65536)
  --max-rate HZ         scene frames per second per session (default: unlimited)
  --batch-window-us N   fan-out waits N us after a batch's first change (default 0:
                        at once; merges of one burst still leave together)
  --slow-consumer-ms N  drop a session whose write is stuck this long (default 5000)
  --idle-timeout-ms N   close a session silent this long; pinged at a third (default 60000)

SIGINT/SIGTERM: stop accepting, commit, acknowledge, close sessions, exit 0.
exit status: 0 clean stop; 1 a final commit failed; 2 bad usage or cannot start.
)";

bool ListenFlag(ArgScanner& scan, const char* name, std::string& out) {
  if (auto v = scan.Value(name)) {
    out = *v == "off" ? std::string() : *v;
    return true;
  }
  return false;
}

template <class T>
void Take(std::optional<uint64_t> v, T& out) {
  if (v) out = static_cast<T>(*v);
}

}  // namespace

int RunServe(Args args) {
  ArgScanner scan("serve", args);
  if (scan.Help()) {
    std::fputs(kHelp, stdout);
    return kExitOk;
  }
  server::ServerConfig config;
  ListenFlag(scan, "--tcp", config.tcp_listen);
  ListenFlag(scan, "--http", config.http_listen);
  Take(scan.U64("--threads"), config.threads);
  if (auto v = scan.Value("--data")) config.data_dir = *v;
  if (auto v = scan.Value("--auth")) config.auth_file = *v;
  config.demo = scan.Flag("--demo");
  if (auto v = scan.Double("--demo-hz")) config.demo_hz = *v;
  config.fsync = !scan.Flag("--no-fsync");
  config.compression = !scan.Flag("--no-compression");
  server::Limits& l = config.limits;
  Take(scan.U64("--max-frame-bytes"), l.max_frame_bytes);
  Take(scan.U64("--max-message-bytes"), l.max_message_bytes);
  Take(scan.U64("--max-payload-bytes"), l.max_payload_bytes);
  Take(scan.U64("--rate"), l.messages_per_second);
  Take(scan.U64("--burst"), l.message_burst);
  Take(scan.U64("--max-entities"), l.max_entities);
  Take(scan.U64("--max-tombstones"), l.max_tombstones);
  if (auto v = scan.Double("--max-rate")) l.max_rate_hz = *v;
  Take(scan.U64("--batch-window-us"), l.batch_window_us);
  Take(scan.U64("--slow-consumer-ms"), l.slow_consumer_ms);
  Take(scan.U64("--idle-timeout-ms"), l.idle_timeout_ms);
  if (!scan.Finish()) return kExitBadInput;
  if (!scan.Positionals().empty()) {
    PrintMessage("serve", "takes no positional arguments; see 'scenecrdt serve --help'");
    return kExitBadInput;
  }
  if (config.threads < 1 || config.threads > 64 || l.max_frame_bytes < 64 || l.message_burst < 1 ||
      l.messages_per_second < 1) {
    PrintMessage("serve",
                 "--threads must be 1..64, --max-frame-bytes >= 64, --rate and --burst >= 1");
    return kExitBadInput;
  }
  if (config.tcp_listen.empty() && config.http_listen.empty()) {
    PrintMessage("serve", "both listeners are off: give --tcp or --http");
    return kExitBadInput;
  }
  server::Server srv(config);
  if (auto started = srv.Start(/*handle_signals=*/true); !started.has_value()) {
    PrintError("serve", "cannot start", started.error());
    if (started.error().code == ErrorCode::kUnauthorized) {
      PrintMessage("serve", "give --auth FILE to listen on other addresses");
    }
    return kExitBadInput;
  }
  if (config.auth_file.empty()) {
    PrintMessage("serve", "no --auth: unauthenticated mode, loopback only, every client may write");
  }
  std::fprintf(stderr, "scenecrdt serve: data %s (incarnation %llu, %zu scenes)\n",
               config.data_dir.c_str(), static_cast<unsigned long long>(srv.incarnation()),
               srv.num_scenes());
  const auto host = [](const std::string& hp) { return hp.substr(0, hp.rfind(':')); };
  if (!config.tcp_listen.empty()) {
    std::fprintf(stderr, "scenecrdt serve: listening tcp://%s:%u\n",
                 host(config.tcp_listen).c_str(), srv.tcp_port());
  }
  if (!config.http_listen.empty()) {
    std::fprintf(stderr,
                 "scenecrdt serve: listening ws://%s:%u (/scene/<name>, /dcl/<scene>, /healthz, "
                 "/metrics)\n",
                 host(config.http_listen).c_str(), srv.http_port());
  }
  if (config.demo) {
    std::fprintf(stderr, "scenecrdt serve: demo scene \"demo\" animated at %g Hz\n",
                 config.demo_hz);
  }
  std::fflush(stderr);
  const int status = srv.Wait();
  std::fprintf(stderr, "scenecrdt serve: stopped%s\n",
               status == 0 ? " cleanly" : " (a final commit failed)");
  return status;
}

}  // namespace scenecrdt::cli
