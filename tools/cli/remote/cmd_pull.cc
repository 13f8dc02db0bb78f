// SPDX-License-Identifier: Apache-2.0
// Owns `scenecrdt pull`: join a scene, apply its snapshot, print the state JSON of `replay`;
// with --owners also the scene's owner table, read from the admin HTTP API
// (GET /admin/scenes/<name>/owners; docs/AUTHORITY.md "Showing owners").
#include <algorithm>
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>

#include "scenecrdt/net/net.h"
#include "scenecrdt/replay/state_json.h"
#include "scenecrdt/replay/world_json.h"
#include "tools/cli/cli_app.h"
#include "tools/cli/commands.h"
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

// GET http://host:port/target with the admin bearer token, within `timeout`: the body of a
// 200 answer, else nullopt and `error` says why.
std::optional<std::string> AdminGet(const std::string& host, const std::string& port,
                                    const std::string& target, const std::string& token,
                                    std::chrono::milliseconds timeout, std::string& error) {
  namespace http = net::beast::http;
  net::asio::io_context ioc;
  net::tcp::resolver resolver(ioc);
  net::beast::tcp_stream stream(ioc);
  http::request<http::empty_body> req{http::verb::get, target, 11};
  req.set(http::field::host, host + ":" + port);
  req.set(http::field::authorization, "Bearer " + token);
  net::beast::flat_buffer buffer;
  http::response_parser<http::string_body> parser;
  parser.body_limit(kMaxOwnersBytes);
  net::error_code failure = net::asio::error::timed_out;
  const auto fail = [&](const net::error_code& ec) { failure = ec; };
  resolver.async_resolve(
      host, port, [&](net::error_code resolved, net::tcp::resolver::results_type r) {
        if (resolved) return fail(resolved);
        stream.async_connect(r, [&](net::error_code connected, const net::tcp::endpoint&) {
          if (connected) return fail(connected);
          http::async_write(stream, req, [&](net::error_code written, std::size_t) {
            if (written) return fail(written);
            http::async_read(stream, buffer, parser,
                             [&](net::error_code got, std::size_t) { fail(got); });
          });
        });
      });
  ioc.run_for(timeout);
  if (failure) {
    error = "GET " + target + " on " + host + ":" + port + ": " + failure.message();
    return std::nullopt;
  }
  const auto& res = parser.get();
  if (res.result_int() != 200) {
    error = "GET " + target + " answered " + std::to_string(res.result_int()) + ": " + res.body();
    while (!error.empty() && error.back() == '\n') error.pop_back();
    return std::nullopt;
  }
  return res.body();
}

// The "owners" object of the answer, re-serialised (nullopt and `error` when malformed).
std::optional<std::string> ReadOwners(const ClientFlags& flags, const std::string& http,
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
  const auto colon = http.rfind(':');
  const auto body = AdminGet(http.substr(0, colon), http.substr(colon + 1),
                             "/admin/scenes/" + flags.scene + "/owners", token,
                             std::chrono::milliseconds(flags.timeout_ms), error);
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
  app.Value("--http", "HOST:PORT",
            "the server's --http listener for --owners (default: the --server\n"
            "URL's, when it is ws://); plain http only",
            &http_given);
  DeclareInterestFlags(app, client);
  if (auto status = app.Parse(args)) return *status;
  ClientFlags flags;
  bool have_flags = ReadClientFlags(client, "pull", flags);
  have_flags = ReadInterestFlags(client, "pull", flags) && have_flags;
  if (!have_flags) return kExitBadInput;
  const std::string token_file = token_file_given.value_or("");
  std::string http = http_given.value_or("");
  if (owners) {
    if (http.empty() && flags.url.scheme == client::ServerUrl::Scheme::kWebSocket &&
        !flags.url.tls) {
      http = flags.url.host + ":" + std::to_string(flags.url.port);
    }
    if (token_file.empty() || http.empty() || http.rfind(':') == std::string::npos) {
      PrintMessage("pull",
                   "--owners needs --admin-token-file F and the server's plain-http listener "
                   "(--http HOST:PORT, or a ws:// --server URL)");
      return kExitBadInput;
    }
  } else if (!token_file.empty() || !http.empty()) {
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
    const auto table = ReadOwners(flags, http, token_file, error);
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
