// SPDX-License-Identifier: Apache-2.0
// Owns `scenecrdt serve`: config file and flags (serve_options.h) -> ServerConfig, start, wait for
// SIGINT/SIGTERM, stop cleanly.
#include <sys/resource.h>

#include <algorithm>
#include <cstdarg>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <optional>
#include <sstream>
#include <system_error>
#include <vector>

#include "scenecrdt/server/scene/authority_rules.h"
#include "scenecrdt/server/server.h"
#include "tools/cli/commands.h"
#include "tools/cli/serve_options.h"

namespace scenecrdt::cli {

namespace {
constexpr const char* kHelp = R"(usage: scenecrdt serve [options]

Runs the scene server: clients join scenes (created on first join), send DCL CRDT writes,
and receive every winning change at once. State is kept in SQLite under --data and restored
on restart; a write is acknowledged only once it is durable. See docs/SERVER.md.

config file (docs/OPERATIONS.md "The config file"):
  --config FILE         read options from a TOML file first: every key is a flag below
                        without its dashes (rate = 2000, no-fsync = true, jwt-secret =
                        ["a", "b"]); flags given as well override the file. An unknown key
                        or a wrong type exits 2 naming FILE:LINE:COL. Secrets are file
                        paths only (auth, jwt-secret, redis-password-file); the package
                        ships /etc/scenecrdt/scenecrdt.toml with every key commented
  --print-config        print the effective configuration (file, then flags) as TOML and
                        exit 0 (a password in the --redis URL is printed as ***)
listeners:
  --tcp HOST:PORT       framed envelope over TCP, for tcp:// clients (default
                        127.0.0.1:7600; "off" disables)
  --http HOST:PORT      HTTP, for ws:// clients (default 127.0.0.1:7601; "off" disables):
                          WebSocket /scene/<name>  the session envelope (scenecrdt clients)
                          WebSocket /dcl/<scene>   raw DCL CRDT chunks, no envelope: an
                                                   unmodified @dcl/ecs engine joins here
                                                   (?token=T with --auth)
                          GET /healthz, GET /metrics
                          GET /                    the scene list; /view/<scene>: a live
                                                   3D viewer (docs/WEB.md)
                        tcp:// on the --http port, or ws:// on the --tcp port, is refused
                        with a message naming the right port.
  --threads N           io_context threads (default 1)
  --web-root DIR        the viewer's assets (default: PREFIX/share/scenecrdt/web for an
                        installed PREFIX/bin/scenecrdt; in a build tree, build/web next to
                        the build folder of this binary, which scripts/build_web.sh fills)
  --tls-cert PEM        TLS for both listeners: tls:// on --tcp, wss:// and https:// on
  --tls-key PEM         --http (certificate chain and its unencrypted key; SIGHUP reloads
                        them for new connections without dropping sessions; a certificate
                        outside its validity period is warned about at start, refused on
                        reload)
  --insecure-no-tls     allow a non-loopback bind without TLS (behind a TLS proxy only)
state and access:
  --data DIR            database directory (default ./scenecrdt-data)
  --no-fsync            SQLite synchronous=NORMAL: survives kill -9, not a power cut
  --no-compression      never compress (default: zstd on framed TCP and permessage-deflate
                        on WebSocket for clients that offer it)
  --auth FILE           tokens: {"tokens":[{"token":"...","scenes":["lobby","*"],
                        "role":"read"|"write"}]}. Without it (and without --jwt-*):
                        loopback only, all may write.
  --max-db-bytes N      the database may not grow past N bytes (default: no cap); commits
                        beyond fail as on a full disk: writers get storage_unavailable,
                        /healthz answers 503, nothing more is acknowledged until space is
                        freed (a delete) or the server restarts with a larger cap
  --jwt-secret FILE     accept signed access tokens (HS256) made with the secret in FILE
                        (>= 32 bytes); claims sub, scenes, role, exp (docs/AUTH.md)
  --jwt-public-key PEM  accept tokens signed by this EdDSA or ES256 key (public PEM)
                        Both repeatable, at most 4 keys per algorithm (key rotation: a
                        token passes if any key of its algorithm verifies it)
  --jwt-leeway-s N      clock skew allowed on exp/nbf (default 30, at most 600). A session
                        whose token expires is closed: Error unauthorized "token_expired"
  --allowed-origins LIST  browser pages (Origin header) allowed to connect, comma-separated
                        (e.g. https://game.example) or "*"; same-origin pages and clients
                        without an Origin are always allowed; others get 403
  --allowed-hosts LIST  Host names this server answers to besides localhost, *.localhost
                        and IP addresses (the DNS-rebinding guard), comma-separated; a
                        leading dot (.example.com) allows subdomains; "*" turns the check
                        off. Requests naming another host get 403
  --admin-token-file FILE  the admin HTTP API on --http (GET /admin/scenes, GET
                        /admin/scenes/<name>, POST /admin/scenes/<name>/checkpoint;
                        docs/OPERATIONS.md "Admin API") for
                        "Authorization: Bearer T", T read from FILE (>= 16 bytes); without
                        it every /admin/ path answers 404
cluster (docs/CLUSTER.md; several nodes share scenes through Redis Streams):
  --redis URL           join the cluster at redis://[[user]:password@]host[:port][/db] or
                        unix:///path[?db=N]: scenes live in Redis (AOF with appendfsync
                        always recommended), a write is acknowledged once its XADD returned,
                        and --data / --no-fsync are not used
  --redis-password-file F  the Redis password, read from a file (keeps it off the URL)
  --compact-interval-ms N  how often this node tries to compact its scenes' streams
                        (default 10000; 0 never; a lease in Redis lets one node work)
  --compact-retain-ms N    entries this young stay in the stream after a compaction, for
                        readers that lag (default 10000)
  --authority MODE      who may write an entity: open (default, last writer wins), owner
                        (its creator and admins) or rules (per component, from
                        --authority-rules; docs/AUTHORITY.md)
  --authority-rules FILE  the rules of --authority rules (JSON: "default", "components",
                        "admin_entities"; docs/AUTHORITY.md "Rules mode"); a bad file: exit 2
  --demo                animate the scene "demo" (a small solar system) from the server
  --demo-hz HZ          demo writer rate (default 25)
logs (stderr; docs/SERVER.md "Log format and levels"):
  --log-format F        text (default: "scenecrdt serve: TIME EVENT key=value ...") or json
                        (one object per line: ts, level, event and the same fields)
  --log-level L         debug, info (default), warn or error: events below are not written
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
  --interest-cell-m M   interest grid cell side in metres (default 16; docs/INTEREST.md)
  --max-interest-radius-m M
                        larger interest radii are clamped, the client told (default 1000)
memory bounds (docs/SERVER.md "Memory bounds" gives the memory each one implies):
  --max-scene-bytes N   a scene's state (as a DCL snapshot) may not grow past N bytes;
                        such writes get scene_too_large, deletes always pass (default
                        16777216)
  --max-scenes-in-memory N
                        scenes held in memory at once; a join that needs one more gets
                        scene_full (retry) while idle ones are evicted (default 1000)
  --scene-idle-evict-ms N
                        a scene with no session for this long leaves memory; its state is
                        on disk and a later join loads it again (default 60000)
A read-only token joins stored scenes only: it never creates one.
  --max-connections N   open connections in all (default: what `ulimit -n` allows after
                        the server's own 64 descriptors and 16 reserved for /healthz and
                        /metrics); beyond: an Error frame or HTTP 503, then closed
  --max-connections-per-ip N  open connections from one address (default 1024)

SIGINT/SIGTERM: stop accepting, commit, acknowledge, close sessions, exit 0.
SIGHUP: reload --tls-cert/--tls-key (an expired one is refused), the --auth table and the
--jwt-* keys, and re-read --config FILE: its keys log-level, auth, jwt-secret,
jwt-public-key and jwt-leeway-s apply at once; a change to another key is logged as
needing a restart and ignored (docs/OPERATIONS.md "Reloading").
A damaged database (PRAGMA quick_check fails, a 0-byte file, no incarnation row) is never
loaded in part: the server exits 2 and says so; 'scenecrdt db-salvage --data DIR' copies
what still reads into a new file and names what was lost.
exit status: 0 clean stop; 1 a final commit failed; 2 bad usage or cannot start.
)";

// Installed, PREFIX/bin/scenecrdt -> PREFIX/share/scenecrdt/web (docs/PACKAGING.md); in a
// build tree, build/<preset>/tools/scenecrdt -> build/web (where scripts/build_web.sh writes).
std::string DefaultWebRoot() {
  std::error_code ec;
  const std::filesystem::path exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (ec) return std::string();
  const std::filesystem::path dir = exe.parent_path();
  const std::filesystem::path root = dir.filename() == "bin"
                                         ? dir.parent_path() / "share" / "scenecrdt" / "web"
                                         : dir.parent_path().parent_path() / "web";
  return root.lexically_normal().string();
}

// Raises the soft RLIMIT_NOFILE to the hard one (at most 65536): every connection is a file
// descriptor, and Debian's default soft limit of 1024 is the first cap a busy server meets.
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

// One line of `scenecrdt serve`'s own (start, stop): "scenecrdt serve: TEXT" as always, or a
// json object with --log-format json (event "serve").
void Say(const server::EventLog& log, server::LogLevel level, const char* format, ...)
    __attribute__((format(printf, 3, 4)));
void Say(const server::EventLog& log, server::LogLevel level, const char* format, ...) {
  std::va_list args;
  va_start(args, format);
  std::va_list again;
  va_copy(again, args);
  const int n = std::vsnprintf(nullptr, 0, format, args);
  va_end(args);
  std::string text(n > 0 ? static_cast<std::size_t>(n) : 0, '\0');
  if (n > 0) std::vsnprintf(text.data(), text.size() + 1, format, again);
  va_end(again);
  log.Message(level, "serve", text);
}

// --authority rules needs --authority-rules FILE, and the file only means something with it.
// Reads and parses it (AuthorityRules::Parse names the bad key); false after saying why.
bool LoadAuthorityRules(server::ServerConfig& config) {
  const bool rules = config.authority == server::AuthorityMode::kRules;
  if (rules != !config.authority_rules_file.empty()) {
    PrintMessage("serve", rules ? "--authority rules needs --authority-rules FILE "
                                  "(docs/AUTHORITY.md \"Rules mode\")"
                                : "--authority-rules needs --authority rules");
    return false;
  }
  if (!rules) return true;
  const std::string& path = config.authority_rules_file;
  std::ifstream in(path, std::ios::binary);
  std::string text;
  char buf[4096];
  while (in && (in.read(buf, sizeof buf) || in.gcount() > 0)) {
    text.append(buf, static_cast<std::size_t>(in.gcount()));
    if (text.size() > server::AuthorityRules::kMaxFileBytes) break;
  }
  if (!in && !in.eof()) {
    PrintMessage("serve", "cannot read --authority-rules " + path + "; check the path");
    return false;
  }
  std::string why;
  auto parsed = server::AuthorityRules::Parse(text, why);
  if (!parsed.has_value()) {
    PrintMessage("serve", "--authority-rules " + path + ": " + why);
    return false;
  }
  config.authority_rules = std::make_shared<const server::AuthorityRules>(std::move(*parsed));
  return true;
}

}  // namespace

int RunServe(Args args) {
  ArgScanner scan("serve", args);
  if (scan.Help()) {
    std::fputs(kHelp, stdout);
    return kExitOk;
  }
  ServeSettings settings;
  settings.config.web_root = DefaultWebRoot();
  const std::optional<std::string> config_path = scan.Value("--config");
  const bool print_config = scan.Flag("--print-config");
  std::string error;
  if (config_path && !ReadServeConfigFile(*config_path, settings, error)) {
    PrintMessage("serve", error);
    return kExitBadInput;
  }
  const bool flags_ok = ScanServeFlags(scan, settings, error);  // flags override the file
  if (!scan.Finish()) return kExitBadInput;
  if (!flags_ok) {
    PrintMessage("serve", error + " (see 'scenecrdt serve --help')");
    return kExitBadInput;
  }
  server::ServerConfig& config = settings.config;
  server::Limits& l = config.limits;
  if (!scan.Positionals().empty()) {
    PrintMessage("serve", "takes no positional arguments; see 'scenecrdt serve --help'");
    return kExitBadInput;
  }
  if (config.threads < 1 || config.threads > 64 || l.max_frame_bytes < 64 || l.message_burst < 1 ||
      l.messages_per_second < 1 || l.max_scenes_in_memory < 1) {
    PrintMessage("serve",
                 "--threads must be 1..64, --max-frame-bytes >= 64, --rate, --burst and "
                 "--max-scenes-in-memory >= 1");
    return kExitBadInput;
  }
  if (config.tcp_listen.empty() && config.http_listen.empty()) {
    PrintMessage("serve", "both listeners are off: give --tcp or --http");
    return kExitBadInput;
  }
  if (!settings.redis_password_file.empty() && config.redis_url.empty()) {
    PrintMessage("serve", "--redis-password-file needs --redis URL");
    return kExitBadInput;
  }
  if (l.max_connections_per_ip < 1) {
    PrintMessage("serve", "--max-connections-per-ip must be >= 1");
    return kExitBadInput;
  }
  if (!LoadAuthorityRules(config)) return kExitBadInput;
  if (print_config) {
    std::fputs(PrintServeConfig(settings).c_str(), stdout);
    return kExitOk;
  }
  if (!settings.redis_password_file.empty()) {
    std::ifstream in(settings.redis_password_file, std::ios::binary);
    std::stringstream text;
    if (in) text << in.rdbuf();
    if (!in) {
      PrintMessage("serve", "cannot read --redis-password-file; check the path and permissions");
      return kExitBadInput;
    }
    config.redis_password = text.str();
    while (!config.redis_password.empty() &&
           (config.redis_password.back() == '\n' || config.redis_password.back() == '\r')) {
      config.redis_password.pop_back();
    }
  }
  if (config_path) {
    // SIGHUP: the file again, then the same flags over it; the server applies the reloadable
    // keys that changed (docs/OPERATIONS.md "Reloading"). Runs on an io thread, one at a time.
    auto running = std::make_shared<ServeSettings>(settings);
    config.reread_config = [running, path = *config_path,
                            saved = std::vector<std::string>(args.begin(), args.end())](
                               server::ServerConfig& fresh_config,
                               std::vector<std::string>& changed, std::string& why) {
      ServeSettings fresh;
      fresh.config.web_root = DefaultWebRoot();
      if (!ReadServeConfigFile(path, fresh, why)) return false;
      const std::vector<std::string_view> views(saved.begin(), saved.end());
      ArgScanner again("serve", views);
      if (!ScanServeFlags(again, fresh, why)) return false;
      for (const ServeOption* o : ChangedServeOptions(*running, fresh)) {
        changed.emplace_back(o->name);
        if (server::IsReloadableKey(o->name)) o->set(*running, o->get(fresh));
      }
      fresh_config = fresh.config;
      return true;
    };
  }
  // The server's own lines go out in the log's format too (a log shipper reads one format).
  const server::EventLog say({}, true, config.log_format, config.log_level);
  const auto info = server::LogLevel::kInfo;
  const auto warn = server::LogLevel::kWarn;
  RaiseOpenFileLimit();
  const uint32_t fd_bound = server::ConnectionsForFds(server::OpenFileLimit(), l.http_reserve);
  if (l.max_connections > fd_bound) {
    Say(say, warn,
        "warning: --max-connections %u is more than `ulimit -n` %llu "
        "allows (%u): accepts will fail and back off when descriptors run out",
        l.max_connections, static_cast<unsigned long long>(server::OpenFileLimit()), fd_bound);
  }
  server::Server srv(config);
  if (auto started = srv.Start(/*handle_signals=*/true); !started.has_value()) {
    if (config.log_format == server::LogFormat::kJson) {
      Say(say, server::LogLevel::kError, "cannot start: %s: %s %s %s",
          ErrorCodeName(started.error().code), started.error().detail,
          srv.start_diagnostic().c_str(), srv.start_hint().c_str());
      return kExitBadInput;
    }
    PrintError("serve", "cannot start", started.error());
    if (!srv.start_diagnostic().empty()) PrintMessage("serve", srv.start_diagnostic());
    if (!srv.start_hint().empty()) PrintMessage("serve", srv.start_hint());
    if (started.error().code == ErrorCode::kUnauthorized) {
      PrintMessage("serve",
                   "give --auth FILE or --jwt-secret/--jwt-public-key to listen on other "
                   "addresses");
    }
    return kExitBadInput;
  }
  if (srv.auth().open()) {
    Say(say, warn, "no --auth: unauthenticated mode, loopback only, every client may write");
  }
  if (const server::ClusterNode* node = srv.cluster()) {
    Say(say, info, "cluster node %s on %s", node->node_id().c_str(),
        node->redis_url_for_logs().c_str());
  } else {
    Say(say, info,
        "data %s (incarnation %llu, %zu scenes stored, loaded on "
        "first join)",
        config.data_dir.c_str(), static_cast<unsigned long long>(srv.incarnation()),
        srv.stored_scenes());
  }
  const auto host = [](const std::string& hp) { return hp.substr(0, hp.rfind(':')); };
  if (!config.tcp_listen.empty()) {
    Say(say, info, srv.tls() ? "listening tls://%s:%u" : "listening tcp://%s:%u",
        host(config.tcp_listen).c_str(), srv.tcp_port());
  }
  if (!config.http_listen.empty()) {
    Say(say, info,
        "listening %s://%s:%u (/scene/<name>, /dcl/<scene>, /healthz, "
        "/metrics)",
        srv.tls() ? "wss" : "ws", host(config.http_listen).c_str(), srv.http_port());
  }
  if (!config.http_listen.empty()) {
    std::error_code ec;
    const bool built = std::filesystem::exists(config.web_root + "/view.html", ec);
    Say(say, info, "viewer http://%s:%u/ (assets %s%s)", host(config.http_listen).c_str(),
        srv.http_port(), config.web_root.c_str(),
        built ? "" : ": missing, build them with bash scripts/build_web.sh");
  }
  if (!config.http_listen.empty() && config.allowed_hosts.empty() &&
      host(config.http_listen) != "127.0.0.1" && host(config.http_listen) != "[::1]") {
    Say(say, warn,
        "HTTP answers Host localhost and IP addresses only; give "
        "--allowed-hosts NAME for the DNS names clients use (docs/SERVER.md)");
  }
  if (config.demo) {
    Say(say, info, "demo scene \"demo\" animated at %g Hz", config.demo_hz);
  }
  Say(say, info, "connections: at most %u (%u per address)", srv.connection_caps().max_total,
      srv.connection_caps().max_per_ip);
  std::fflush(stderr);
  const int status = srv.Wait();
  Say(say, status == 0 ? info : server::LogLevel::kError, "stopped%s",
      status == 0 ? " cleanly" : " (a final commit failed)");
  return status;
}

}  // namespace scenecrdt::cli
