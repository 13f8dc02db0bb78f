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

#include "scenecrdt/server/scene/authority/authority_rules.h"
#include "scenecrdt/server/server.h"
#include "tools/cli/cli_app.h"
#include "tools/cli/commands.h"
#include "tools/cli/serve/serve_options.h"

namespace scenecrdt::cli {

namespace {
constexpr const char* kAbout =
    R"(Runs the scene server: clients join scenes (created on first join), send DCL CRDT writes,
and receive every winning change at once. State is kept in SQLite under --data and restored
on restart; a write is acknowledged only once it is durable. See docs/SERVER.md. Every
option below is also a key of the --config file (tools/cli/serve/serve_options.cc declares both).
)";
constexpr const char* kFooter =
    R"(SIGINT/SIGTERM: stop accepting, commit, acknowledge, close sessions, exit 0.
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
  CliApp app("serve", kAbout, kFooter);
  std::optional<std::string> config_path;
  bool print_config = false;
  ServeFlagValues flags;
  app.Section("config file (docs/OPERATIONS.md \"The config file\")");
  app.Value("--config", "FILE",
            "read options from a TOML file first: every key is a flag below\n"
            "without its dashes (rate = 2000, no-fsync = true, jwt-secret =\n"
            "[\"a\", \"b\"]); flags given as well override the file. An unknown key\n"
            "or a wrong type exits 2 naming FILE:LINE:COL. Secrets are file\n"
            "paths only (auth, jwt-secret, redis-password-file); the package\n"
            "ships /etc/scenecrdt/scenecrdt.toml with every key commented",
            &config_path);
  app.Flag("--print-config",
           "print the effective configuration (file, then flags) as TOML and\n"
           "exit 0 (a password in the --redis URL is printed as ***)",
           &print_config);
  DeclareServeFlags(app, flags);
  if (auto status = app.Parse(args)) return *status;
  ServeSettings settings;
  settings.config.web_root = DefaultWebRoot();
  std::string error;
  if (config_path && !ReadServeConfigFile(*config_path, settings, error)) {
    PrintMessage("serve", error);
    return kExitBadInput;
  }
  if (!ApplyServeFlags(flags, settings, error)) {  // flags override the file
    PrintMessage("serve", error + " (see 'scenecrdt serve --help')");
    return kExitBadInput;
  }
  server::ServerConfig& config = settings.config;
  server::Limits& l = config.limits;
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
    config.reread_config = [running, path = *config_path, flags](server::ServerConfig& fresh_config,
                                                                 std::vector<std::string>& changed,
                                                                 std::string& why) {
      ServeSettings fresh;
      fresh.config.web_root = DefaultWebRoot();
      if (!ReadServeConfigFile(path, fresh, why)) return false;
      if (!ApplyServeFlags(flags, fresh, why)) return false;
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
