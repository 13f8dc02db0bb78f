// SPDX-License-Identifier: Apache-2.0
// Owns the table of `scenecrdt serve`'s options and two of its readers: the TOML config file
// (toml++) and --print-config (docs/OPERATIONS.md "The config file"); the flags are
// serve_flags.cc.
#include "tools/cli/serve/serve_options.h"

#include <chrono>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <limits>
#include <sstream>
#include <utility>

// Debian's toml++ is a shared library built with exceptions: a parse error is caught in
// ReadServeConfigText and never leaves this file.
#include <toml++/toml.h>

namespace scenecrdt::cli {
namespace {

constexpr uint64_t kU32 = std::numeric_limits<uint32_t>::max();

const std::string& Str(const OptionValue& v) { return std::get<std::string>(v); }
uint64_t U64(const OptionValue& v) { return std::get<uint64_t>(v); }

// One entry of the table. FIELD is an lvalue expression of ServeSettings `s`; then the
// value's name in --help (nullptr for a flag) and the help text (ServeOption::meta, help).
#define SCENECRDT_STRING(NAME, FIELD, ...)                                                  \
  ServeOption {                                                                             \
    NAME, OptionKind::kString, 0,                                                           \
        [](ServeSettings& s, const OptionValue& v) -> const char* {                         \
          FIELD = Str(v);                                                                   \
          return nullptr;                                                                   \
        },                                                                                  \
        [](const ServeSettings& s) { return OptionValue(std::string(FIELD)); }, __VA_ARGS__ \
  }
#define SCENECRDT_LIST(NAME, FIELD, ...)                                       \
  ServeOption {                                                                \
    NAME, OptionKind::kStringList, 0,                                          \
        [](ServeSettings& s, const OptionValue& v) -> const char* {            \
          FIELD = std::get<std::vector<std::string>>(v);                       \
          return nullptr;                                                      \
        },                                                                     \
        [](const ServeSettings& s) { return OptionValue(FIELD); }, __VA_ARGS__ \
  }
#define SCENECRDT_LISTEN(NAME, FIELD, ...)                                \
  ServeOption {                                                           \
    NAME, OptionKind::kListen, 0,                                         \
        [](ServeSettings& s, const OptionValue& v) -> const char* {       \
          FIELD = Str(v) == "off" ? std::string() : Str(v);               \
          return nullptr;                                                 \
        },                                                                \
        [](const ServeSettings& s) {                                      \
          return OptionValue(FIELD.empty() ? std::string("off") : FIELD); \
        },                                                                \
        __VA_ARGS__                                                       \
  }
#define SCENECRDT_U32(NAME, FIELD, ...)                                                   \
  ServeOption {                                                                           \
    NAME, OptionKind::kUnsigned, kU32,                                                    \
        [](ServeSettings& s, const OptionValue& v) -> const char* {                       \
          FIELD = static_cast<uint32_t>(U64(v));                                          \
          return nullptr;                                                                 \
        },                                                                                \
        [](const ServeSettings& s) { return OptionValue(static_cast<uint64_t>(FIELD)); }, \
        __VA_ARGS__                                                                       \
  }
#define SCENECRDT_U64(NAME, FIELD, ...)                                                   \
  ServeOption {                                                                           \
    NAME, OptionKind::kUnsigned, std::numeric_limits<int64_t>::max(),                     \
        [](ServeSettings& s, const OptionValue& v) -> const char* {                       \
          FIELD = U64(v);                                                                 \
          return nullptr;                                                                 \
        },                                                                                \
        [](const ServeSettings& s) { return OptionValue(static_cast<uint64_t>(FIELD)); }, \
        __VA_ARGS__                                                                       \
  }
#define SCENECRDT_NUMBER(NAME, FIELD, ...)                                       \
  ServeOption {                                                                  \
    NAME, OptionKind::kNumber, 0,                                                \
        [](ServeSettings& s, const OptionValue& v) -> const char* {              \
          const double d = std::get<double>(v);                                  \
          if (!std::isfinite(d) || d < 0) return "must be a finite number >= 0"; \
          FIELD = d;                                                             \
          return nullptr;                                                        \
        },                                                                       \
        [](const ServeSettings& s) { return OptionValue(FIELD); }, __VA_ARGS__   \
  }
// A number in [LO, HI] (or 0 when ZERO_OK: "none"); WHY: the message when it is not.
#define SCENECRDT_NUMBER_IN(NAME, FIELD, LO, HI, ZERO_OK, WHY, ...)            \
  ServeOption {                                                                \
    NAME, OptionKind::kNumber, 0,                                              \
        [](ServeSettings& s, const OptionValue& v) -> const char* {            \
          const double d = std::get<double>(v);                                \
          if (!((ZERO_OK && d == 0) || (d >= LO && d <= HI))) return WHY;      \
          FIELD = d;                                                           \
          return nullptr;                                                      \
        },                                                                     \
        [](const ServeSettings& s) { return OptionValue(FIELD); }, __VA_ARGS__ \
  }
// A flag sets true; NEGATE: the field holds the opposite (--no-fsync sets fsync = false).
#define SCENECRDT_FLAG(NAME, NEGATE, FIELD, ...)                                         \
  ServeOption {                                                                          \
    NAME, OptionKind::kFlag, 0,                                                          \
        [](ServeSettings& s, const OptionValue& v) -> const char* {                      \
          FIELD = std::get<bool>(v) != NEGATE;                                           \
          return nullptr;                                                                \
        },                                                                               \
        [](const ServeSettings& s) { return OptionValue(FIELD != NEGATE); }, __VA_ARGS__ \
  }

const ServeOption kOptions[] = {
    // listeners
    SCENECRDT_LISTEN("tcp", s.config.tcp_listen, "HOST:PORT",
                     "framed envelope over TCP, for tcp:// clients (default\n"
                     "127.0.0.1:7600; \"off\" disables)"),
    SCENECRDT_LISTEN("http", s.config.http_listen, "HOST:PORT",
                     "HTTP, for ws:// clients (default 127.0.0.1:7601; \"off\" disables):\n"
                     "  WebSocket /scene/<name>  the session envelope (scenecrdt clients)\n"
                     "  WebSocket /dcl/<scene>   raw DCL CRDT chunks, no envelope: an\n"
                     "                           unmodified @dcl/ecs engine joins here\n"
                     "                           (?token=T with --auth)\n"
                     "  GET /healthz, GET /metrics\n"
                     "  GET /                    the scene list; /view/<scene>: a live\n"
                     "                           3D viewer (docs/WEB.md)\n"
                     "tcp:// on the --http port, or ws:// on the --tcp port, is refused\n"
                     "with a message naming the right port."),
    ServeOption{
        "threads", OptionKind::kUnsigned, 64,
        [](ServeSettings& s, const OptionValue& v) -> const char* {
          s.config.threads = static_cast<int>(U64(v));
          return nullptr;
        },
        [](const ServeSettings& s) { return OptionValue(static_cast<uint64_t>(s.config.threads)); },
        "N", "io_context threads (default 1, at most 64)"},
    SCENECRDT_STRING("web-root", s.config.web_root, "DIR",
                     "the viewer's assets (default: PREFIX/share/scenecrdt/web for an\n"
                     "installed PREFIX/bin/scenecrdt; in a build tree, build/web next to\n"
                     "the build folder of this binary, which scripts/build_web.sh fills)"),
    SCENECRDT_STRING("tls-cert", s.config.tls_cert_file, "PEM",
                     "TLS for both listeners: tls:// on --tcp, wss:// and https:// on\n"
                     "--http (the certificate chain; SIGHUP reloads it and --tls-key for new\n"
                     "connections without dropping sessions; a certificate outside its\n"
                     "validity period is warned about at start, refused on reload)"),
    SCENECRDT_STRING("tls-key", s.config.tls_key_file, "PEM", "the unencrypted key of --tls-cert"),
    SCENECRDT_FLAG("insecure-no-tls", false, s.config.insecure_no_tls, nullptr,
                   "allow a non-loopback bind without TLS (behind a TLS proxy only)"),
    // state and access
    SCENECRDT_STRING("data", s.config.data_dir, "DIR",
                     "database directory (default ./scenecrdt-data)"),
    SCENECRDT_FLAG("no-fsync", true, s.config.fsync, nullptr,
                   "SQLite synchronous=NORMAL: survives kill -9, not a power cut"),
    SCENECRDT_FLAG("no-compression", true, s.config.compression, nullptr,
                   "never compress (default: zstd on framed TCP and permessage-deflate\n"
                   "on WebSocket for clients that offer it)"),
    SCENECRDT_STRING("auth", s.config.access.auth_file, "FILE",
                     "tokens: {\"tokens\":[{\"token\":\"...\",\"scenes\":[\"lobby\",\"*\"],\n"
                     "\"role\":\"read\"|\"write\"}]}. Without it (and without --jwt-*):\n"
                     "loopback only, all may write. A read-only token joins stored\n"
                     "scenes only: it never creates one."),
    SCENECRDT_U64("max-db-bytes", s.config.max_db_bytes, "N",
                  "the database may not grow past N bytes (default: no cap); commits\n"
                  "beyond fail as on a full disk: writers get storage_unavailable,\n"
                  "/healthz answers 503, nothing more is acknowledged until space is\n"
                  "freed (a delete) or the server restarts with a larger cap"),
    SCENECRDT_LIST("jwt-secret", s.config.access.jwt_secret_files, "FILE",
                   "accept signed access tokens (HS256) made with the secret in FILE\n"
                   "(>= 32 bytes); claims sub, scenes, role, exp (docs/AUTH.md).\n"
                   "Repeatable, at most 4 keys per algorithm (key rotation: a token\n"
                   "passes if any key of its algorithm verifies it)"),
    SCENECRDT_LIST("jwt-public-key", s.config.access.jwt_public_keys, "PEM",
                   "accept tokens signed by this EdDSA or ES256 key (public PEM);\n"
                   "repeatable, as --jwt-secret"),
    ServeOption{"jwt-leeway-s", OptionKind::kUnsigned, 100000,
                [](ServeSettings& s, const OptionValue& v) -> const char* {
                  s.config.access.jwt_leeway = std::chrono::seconds(U64(v));
                  return nullptr;
                },
                [](const ServeSettings& s) {
                  return OptionValue(static_cast<uint64_t>(s.config.access.jwt_leeway.count()));
                },
                "N",
                "clock skew allowed on exp/nbf (default 30, at most 600). A session\n"
                "whose token expires is closed: Error unauthorized \"token_expired\""},
    SCENECRDT_STRING("allowed-origins", s.config.allowed_origins, "LIST",
                     "browser pages (Origin header) allowed to connect, comma-separated\n"
                     "(e.g. https://game.example) or \"*\"; same-origin pages and clients\n"
                     "without an Origin are always allowed; others get 403"),
    SCENECRDT_STRING("allowed-hosts", s.config.allowed_hosts, "LIST",
                     "Host names this server answers to besides localhost, *.localhost\n"
                     "and IP addresses (the DNS-rebinding guard), comma-separated; a\n"
                     "leading dot (.example.com) allows subdomains; \"*\" turns the check\n"
                     "off. Requests naming another host get 403"),
    SCENECRDT_STRING("admin-token-file", s.config.admin_token_file, "FILE",
                     "the admin HTTP API on --http (GET /admin/scenes, GET\n"
                     "/admin/scenes/<name>, POST /admin/scenes/<name>/checkpoint;\n"
                     "docs/OPERATIONS.md \"Admin API\") for \"Authorization: Bearer T\", T\n"
                     "read from FILE (>= 16 bytes); without it every /admin/ path\n"
                     "answers 404"),
    ServeOption{"authority", OptionKind::kString, 0,
                [](ServeSettings& s, const OptionValue& v) -> const char* {
                  if (Str(v) == "owner") {
                    s.config.authority = server::AuthorityMode::kOwner;
                  } else if (Str(v) == "open") {
                    s.config.authority = server::AuthorityMode::kOpen;
                  } else if (Str(v) == "rules") {
                    s.config.authority = server::AuthorityMode::kRules;
                  } else {
                    return "must be open, owner or rules (docs/AUTHORITY.md)";
                  }
                  return nullptr;
                },
                [](const ServeSettings& s) {
                  const server::AuthorityMode mode = s.config.authority;
                  return OptionValue(std::string(mode == server::AuthorityMode::kOwner   ? "owner"
                                                 : mode == server::AuthorityMode::kRules ? "rules"
                                                                                         : "open"));
                },
                "MODE",
                "who may write an entity: open (default, last writer wins), owner\n"
                "(its creator and admins) or rules (per component, from\n"
                "--authority-rules; docs/AUTHORITY.md)"},
    SCENECRDT_STRING("authority-rules", s.config.authority_rules_file, "FILE",
                     "the rules of --authority rules (JSON: \"default\", \"components\",\n"
                     "\"admin_entities\"; docs/AUTHORITY.md \"Rules mode\"); a bad file: exit 2"),
    // cluster
    SCENECRDT_STRING("redis", s.config.redis_url, "URL",
                     "join the cluster at redis://[[user]:password@]host[:port][/db] or\n"
                     "unix:///path[?db=N]: scenes live in Redis (AOF with appendfsync\n"
                     "always recommended), a write is acknowledged once its XADD returned,\n"
                     "and --data / --no-fsync are not used"),
    SCENECRDT_STRING("redis-password-file", s.redis_password_file, "FILE",
                     "the Redis password, read from a file (keeps it off the URL)"),
    SCENECRDT_U32("compact-interval-ms", s.config.compact_interval_ms, "N",
                  "how often this node tries to compact its scenes' streams\n"
                  "(default 10000; 0 never; a lease in Redis lets one node work)"),
    SCENECRDT_U32("compact-retain-ms", s.config.compact_retain_ms, "N",
                  "entries this young stay in the stream after a compaction, for\n"
                  "readers that lag (default 10000)"),
    SCENECRDT_FLAG("demo", false, s.config.demo, nullptr,
                   "animate the scene \"demo\" (a small solar system) from the server"),
    SCENECRDT_NUMBER("demo-hz", s.config.demo_hz, "HZ", "demo writer rate (default 25)"),
    // logs
    ServeOption{"log-format", OptionKind::kString, 0,
                [](ServeSettings& s, const OptionValue& v) -> const char* {
                  const auto format = server::ParseLogFormat(Str(v));
                  if (!format) return "must be text or json";
                  s.config.log_format = *format;
                  return nullptr;
                },
                [](const ServeSettings& s) {
                  return OptionValue(std::string(
                      s.config.log_format == server::LogFormat::kJson ? "json" : "text"));
                },
                "F",
                "text (default: \"scenecrdt serve: TIME EVENT key=value ...\") or json\n"
                "(one object per line: ts, level, event and the same fields)"},
    ServeOption{"log-level", OptionKind::kString, 0,
                [](ServeSettings& s, const OptionValue& v) -> const char* {
                  const auto level = server::ParseLogLevel(Str(v));
                  if (!level) return "must be debug, info, warn or error";
                  s.config.log_level = *level;
                  return nullptr;
                },
                [](const ServeSettings& s) {
                  return OptionValue(std::string(server::LogLevelName(s.config.log_level)));
                },
                "L", "debug, info (default), warn or error: events below are not written"},
    // limits
    SCENECRDT_U32("max-frame-bytes", s.config.limits.max_frame_bytes, "N",
                  "largest client frame (default 1048576, at least 64)"),
    SCENECRDT_U32("max-message-bytes", s.config.limits.max_message_bytes, "N",
                  "largest DCL message in a frame (default 65536)"),
    SCENECRDT_U32("max-payload-bytes", s.config.limits.max_payload_bytes, "N",
                  "largest component payload (default 16384)"),
    SCENECRDT_U32("rate", s.config.limits.messages_per_second, "N",
                  "messages per second per session, token bucket (default 2000)"),
    SCENECRDT_U32("burst", s.config.limits.message_burst, "N", "token bucket size (default 4000)"),
    SCENECRDT_U32("max-entities", s.config.limits.max_entities, "N",
                  "entities per scene (default 20000)"),
    SCENECRDT_U32("max-tombstones", s.config.limits.max_tombstones, "N",
                  "deleted entity numbers per scene (default 65536)"),
    SCENECRDT_NUMBER("max-rate", s.config.limits.max_rate_hz, "HZ",
                     "scene frames per second per session (default: unlimited)"),
    SCENECRDT_U32("batch-window-us", s.config.limits.batch_window_us, "N",
                  "fan-out waits N us after a batch's first change (default 0:\n"
                  "at once; merges of one burst still leave together)"),
    SCENECRDT_U32("slow-consumer-ms", s.config.limits.slow_consumer_ms, "N",
                  "drop a session whose write is stuck this long (default 5000)"),
    SCENECRDT_U32("idle-timeout-ms", s.config.limits.idle_timeout_ms, "N",
                  "close a session silent this long; pinged at a third (default 60000)"),
    // interest management (docs/INTEREST.md "Bounds")
    SCENECRDT_NUMBER_IN("interest-cell-m", s.config.limits.interest_cell_m, 0.5, 1e6, false,
                        "must be between 0.5 and 1000000", "M",
                        "interest grid cell side in metres (default 16; docs/INTEREST.md)"),
    SCENECRDT_NUMBER_IN("max-interest-radius-m", s.config.limits.max_interest_radius_m, 1, 1e7,
                        false, "must be between 1 and 10000000", "M",
                        "larger interest radii are clamped, the client told (default 1000)"),
    SCENECRDT_NUMBER_IN("client-budget-kbps", s.config.limits.client_budget_kbps, 1, 1e7, true,
                        "must be 0 (none) or between 1 and 10000000", "N",
                        "an interest member's byte budget in kbit/s: the farthest entities'\n"
                        "changes are deferred, coalesced, never dropped (default 0: none)"),
    // memory bounds
    SCENECRDT_U64("max-scene-bytes", s.config.limits.max_scene_bytes, "N",
                  "a scene's state (as a DCL snapshot) may not grow past N bytes;\n"
                  "such writes get scene_too_large, deletes always pass (default\n"
                  "16777216)"),
    SCENECRDT_U32("max-scenes-in-memory", s.config.limits.max_scenes_in_memory, "N",
                  "scenes held in memory at once; a join that needs one more gets\n"
                  "scene_full (retry) while idle ones are evicted (default 1000)"),
    SCENECRDT_U32("scene-idle-evict-ms", s.config.limits.scene_idle_evict_ms, "N",
                  "a scene with no session for this long leaves memory; its state is\n"
                  "on disk and a later join loads it again (default 60000)"),
    SCENECRDT_U32("max-connections", s.config.limits.max_connections, "N",
                  "open connections in all (default: what `ulimit -n` allows after\n"
                  "the server's own 64 descriptors and 16 reserved for /healthz and\n"
                  "/metrics); beyond: an Error frame or HTTP 503, then closed"),
    SCENECRDT_U32("max-connections-per-ip", s.config.limits.max_connections_per_ip, "N",
                  "open connections from one address (default 1024)"),
};

std::string Where(const std::string& source, const toml::source_region& at) {
  return source + ":" + std::to_string(at.begin.line) + ":" + std::to_string(at.begin.column);
}

const char* KindWords(const ServeOption& o) {
  switch (o.kind) {
    case OptionKind::kListen:
      return "a string \"HOST:PORT\" or \"off\"";
    case OptionKind::kString:
      return "a string";
    case OptionKind::kStringList:
      return "an array of strings";
    case OptionKind::kUnsigned:
      return "a non-negative integer";
    case OptionKind::kNumber:
      return "a number";
    case OptionKind::kFlag:
      return "true or false";
  }
  return "?";
}

// The node as the option's kind; false when it has another type.
bool FromToml(const ServeOption& o, const toml::node& node, OptionValue& out) {
  switch (o.kind) {
    case OptionKind::kListen:
    case OptionKind::kString:
      if (!node.is_string()) return false;
      out = std::string(node.as_string()->get());
      return true;
    case OptionKind::kStringList: {
      const toml::array* array = node.as_array();
      if (array == nullptr) return false;
      std::vector<std::string> list;
      for (const toml::node& item : *array) {
        if (!item.is_string()) return false;
        list.emplace_back(item.as_string()->get());
      }
      out = std::move(list);
      return true;
    }
    case OptionKind::kUnsigned: {
      if (!node.is_integer()) return false;
      const int64_t i = node.as_integer()->get();
      if (i < 0) return false;
      out = static_cast<uint64_t>(i);
      return true;
    }
    case OptionKind::kNumber:
      if (node.is_integer()) {
        out = static_cast<double>(node.as_integer()->get());
        return true;
      }
      if (!node.is_floating_point()) return false;
      out = node.as_floating_point()->get();
      return true;
    case OptionKind::kFlag:
      if (!node.is_boolean()) return false;
      out = node.as_boolean()->get();
      return true;
  }
  return false;
}

// "redis://user:pass@host" -> true (a password on the URL).
bool UrlHasPassword(std::string_view url) {
  const auto scheme = url.find("://");
  if (scheme == std::string_view::npos) return false;
  const std::string_view rest = url.substr(scheme + 3);
  const auto at = rest.find('@');
  if (at == std::string_view::npos || rest.substr(0, at).find('/') != std::string_view::npos) {
    return false;
  }
  return rest.substr(0, at).find(':') != std::string_view::npos;
}

std::string RedactUrl(const std::string& url) {
  if (!UrlHasPassword(url)) return url;
  const auto start = url.find("://") + 3;
  const auto at = url.find('@', start);
  const auto colon = url.find(':', start);
  return url.substr(0, colon + 1) + "***" + url.substr(at);
}

void AppendTomlString(std::string& out, std::string_view text) {
  out += '"';
  for (const char c : text) {
    const auto u = static_cast<unsigned char>(c);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (u < 0x20 || u == 0x7f) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", u);
      out += buf;
    } else {
      out += c;
    }
  }
  out += '"';
}

void AppendTomlValue(std::string& out, const OptionValue& v) {
  if (const bool* b = std::get_if<bool>(&v)) {
    out += *b ? "true" : "false";
  } else if (const uint64_t* u = std::get_if<uint64_t>(&v)) {
    out += std::to_string(*u);
  } else if (const double* d = std::get_if<double>(&v)) {
    char buf[40];
    std::snprintf(buf, sizeof buf, "%.17g", *d);
    std::string text = buf;
    if (text.find_first_of(".eEn") == std::string::npos) text += ".0";  // TOML floats
    out += text;
  } else if (const std::string* s = std::get_if<std::string>(&v)) {
    AppendTomlString(out, *s);
  } else {
    out += '[';
    const auto& list = std::get<std::vector<std::string>>(v);
    for (std::size_t i = 0; i < list.size(); ++i) {
      if (i != 0) out += ", ";
      AppendTomlString(out, list[i]);
    }
    out += ']';
  }
}

}  // namespace

std::span<const ServeOption> ServeOptions() { return kOptions; }

const ServeOption* FindServeOption(std::string_view name) {
  for (const ServeOption& o : kOptions) {
    if (name == o.name) return &o;
  }
  return nullptr;
}

bool IsServeMetaFlag(std::string_view flag) {
  return flag == "--config" || flag == "--print-config" || flag == "--help";
}

bool ReadServeConfigText(std::string_view text, const std::string& source, ServeSettings& s,
                         std::string& error) {
  if (text.size() > kMaxConfigBytes) {
    error = source + ": larger than " + std::to_string(kMaxConfigBytes) + " bytes";
    return false;
  }
  toml::table table;
  try {
    table = toml::parse(text, source);
  } catch (const toml::parse_error& e) {
    error = Where(source, e.source()) + ": " + std::string(e.description());
    return false;
  }
  for (auto&& [key, node] : table) {
    const ServeOption* o = FindServeOption(key.str());
    if (o == nullptr) {
      error = Where(source, key.source()) + ": unknown key '" + std::string(key.str()) +
              "' (every key is a serve flag without its dashes: 'scenecrdt serve --help')";
      return false;
    }
    OptionValue v;
    if (!FromToml(*o, node, v)) {
      error = Where(source, node.source()) + ": " + o->name + " must be " + KindWords(*o);
      return false;
    }
    if (o->kind == OptionKind::kUnsigned && U64(v) > o->max) {
      error = Where(source, node.source()) + ": " + o->name + " must be at most " +
              std::to_string(o->max);
      return false;
    }
    if (std::string_view(o->name) == "redis" && UrlHasPassword(Str(v))) {
      error = Where(source, node.source()) +
              ": redis: no password in the URL; put it in a file named by "
              "redis-password-file (secrets are given as file paths only)";
      return false;
    }
    if (const char* why = o->set(s, v)) {
      error = Where(source, node.source()) + ": " + o->name + " " + why;
      return false;
    }
  }
  return true;
}

bool ReadServeConfigFile(const std::string& path, ServeSettings& s, std::string& error) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    error = "cannot read the config file " + path + "; check the path and permissions";
    return false;
  }
  std::string text;
  char buf[4096];
  while (in.read(buf, sizeof buf) || in.gcount() > 0) {
    text.append(buf, static_cast<std::size_t>(in.gcount()));
    if (text.size() > kMaxConfigBytes) break;
  }
  return ReadServeConfigText(text, path, s, error);
}

std::string PrintServeConfig(const ServeSettings& s) {
  std::string out =
      "# scenecrdt serve: the effective configuration (config file, then flags).\n"
      "# Keys are the serve flags without their dashes (docs/OPERATIONS.md).\n";
  for (const ServeOption& o : kOptions) {
    OptionValue v = o.get(s);
    if (std::string_view(o.name) == "redis") v = RedactUrl(Str(v));
    out += o.name;
    out += " = ";
    AppendTomlValue(out, v);
    out += '\n';
  }
  return out;
}

std::vector<const ServeOption*> ChangedServeOptions(const ServeSettings& a,
                                                    const ServeSettings& b) {
  std::vector<const ServeOption*> out;
  for (const ServeOption& o : kOptions) {
    if (o.get(a) != o.get(b)) out.push_back(&o);
  }
  return out;
}

}  // namespace scenecrdt::cli
