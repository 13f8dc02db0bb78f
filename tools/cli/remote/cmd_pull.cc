// SPDX-License-Identifier: Apache-2.0
// Owns `scenecrdt pull`: join a scene, apply its snapshot, print the state JSON of `replay`;
// with --owners also the scene's owner table, read from the admin HTTP API
// (GET /admin/scenes/<name>/owners; docs/AUTHORITY.md "Showing owners").
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>

#include "scenecrdt/replay/state_json.h"
#include "scenecrdt/replay/world_json.h"
#include "tools/cli/cli_app.h"
#include "tools/cli/commands.h"
#include "tools/cli/remote/admin_get.h"
#include "tools/cli/remote/client_common.h"

namespace scenecrdt::cli {

namespace {
constexpr const char* kAbout =
    R"(Joins a scene, applies the snapshot the server sends, prints the state as one JSON object
(the same document as 'scenecrdt replay', stateHash included) and exits. Pulling a scene and
replaying everything that was sent to it give the same stateHash.
With --interest or --interest-follow, the partial replica is printed and stateHash is its
hash.
)";
constexpr const char* kFooter =
    R"(exit status: 0 ok; 1 refused or the connection failed (or the owners could not be read);
2 bad usage.
)";

// Bound of the owners answer: 65024 numbers x (a 5-digit key and a 256-byte name).
constexpr std::size_t kMaxOwnersBytes = 32u << 20;

// The "owners" object of the answer, re-serialised (nullopt and `error` when malformed).
std::optional<std::string> ReadOwners(const ClientFlags& flags, const AdminEndpoint& http,
                                      const std::string& token_file, std::string& error) {
  std::ifstream in(token_file, std::ios::binary);
  std::stringstream text;
  if (in) text << in.rdbuf();
  std::string token = text.str();
  while (!token.empty() && (token.back() == '\n' || token.back() == '\r')) token.pop_back();
  if (!in || token.empty()) {
    error = "cannot read --admin-token-file " + token_file;
    return std::nullopt;
  }
  const auto body = AdminGet(http, "/admin/scenes/" + flags.scene + "/owners", token, flags.ca_file,
                             kMaxOwnersBytes, std::chrono::milliseconds(flags.timeout_ms), error);
  if (!body) return std::nullopt;
  const auto doc = nlohmann::json::parse(*body, nullptr, /*allow_exceptions=*/false);
  if (!doc.is_object() || !doc.contains("owners") || !doc["owners"].is_object()) {
    error = "the owners answer is not {\"owners\": {...}}";
    return std::nullopt;
  }
  return doc["owners"].dump();
}

}  // namespace

int RunPull(Args args) {
  CliApp app("pull", kAbout, kFooter);
  ClientFlagValues client;
  bool world = false;
  bool owners = false;
  std::optional<std::string> token_file_given, http_given;
  DeclareClientFlags(app, client);
  app.Flag("--world",
           "also add the \"world\" array of 'replay --world' (effective parents,\n"
           "loop parking, placeholders and column-major localToWorld matrices)",
           &world);
  app.Flag("--owners",
           "also add \"owners\": {\"<entity number>\": \"<principal>\"} (--authority\n"
           "owner|rules), read from the admin API GET /admin/scenes/NAME/owners",
           &owners);
  app.Value("--admin-token-file", "F",
            "the admin API's token (the server's --admin-token-file); needed\n"
            "by --owners",
            &token_file_given);
  app.Value("--http", "[https://]HOST:PORT",
            "the server's --http listener for --owners (default: the --server\n"
            "URL's, when it is ws:// or wss://); https is verified with --ca",
            &http_given);
  DeclareInterestFlags(app, client);
  if (auto status = app.Parse(args)) return *status;
  ClientFlags flags;
  bool have_flags = ReadClientFlags(client, "pull", flags);
  have_flags = ReadInterestFlags(client, "pull", flags) && have_flags;
  if (!have_flags) return kExitBadInput;
  const std::string token_file = token_file_given.value_or("");
  std::optional<AdminEndpoint> http;
  if (owners) {
    if (http_given) {
      http = ParseAdminEndpoint(*http_given);
      if (!http) {
        PrintMessage("pull", "--http " + *http_given +
                                 ": expected HOST:PORT, http://HOST:PORT or https://HOST:PORT");
        return kExitBadInput;
      }
    } else if (flags.url.scheme == client::ServerUrl::Scheme::kWebSocket) {
      // The WebSocket listener is the --http listener: the same host, port and TLS.
      http = AdminEndpoint{flags.url.host, std::to_string(flags.url.port), flags.url.tls};
    }
    if (token_file.empty() || !http) {
      PrintMessage("pull",
                   "--owners needs --admin-token-file F and the server's http listener "
                   "(--http [https://]HOST:PORT, or a ws:// or wss:// --server URL)");
      return kExitBadInput;
    }
  } else if (!token_file.empty() || http_given) {
    PrintMessage("pull", "--admin-token-file and --http go with --owners");
    return kExitBadInput;
  }
  auto c = JoinScene("pull", flags, "scenecrdt-pull");
  if (!c) return kExitCheckFailed;
  // The entities the snapshot carried: every register's, tombstone's and append set's.
  const runtime::CrdtStore& store = c->store();
  std::vector<protocol::EntityId> entities;
  for (const runtime::RegisterView& r : store.SortedRegisters()) entities.push_back(r.entity);
  for (const auto& t : store.SortedTombstones()) {
    entities.push_back(protocol::MakeEntityId(t.number, t.version));
  }
  for (const auto& a : store.SortedAppendSets()) entities.push_back(a.entity);
  std::sort(entities.begin(), entities.end());
  entities.erase(std::unique(entities.begin(), entities.end()), entities.end());
  std::string out;
  replay::AppendStateJsonBody(store, entities, out);
  if (owners) {
    // Read after the snapshot, not atomically with it (docs/AUTHORITY.md "Showing owners").
    std::string error;
    const auto table = ReadOwners(flags, *http, token_file, error);
    if (!table) {
      PrintMessage("pull", error);
      c->Stop();
      return kExitCheckFailed;
    }
    out += ",\"owners\":";
    out += *table;
  }
  if (world) {
    c->Update();
    out += ',';
    replay::AppendWorldJson(c->runtime().transforms(), out);
  }
  out += "}\n";
  std::fwrite(out.data(), 1, out.size(), stdout);
  c->Stop();
  return kExitOk;
}

}  // namespace scenecrdt::cli
