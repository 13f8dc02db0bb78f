// SPDX-License-Identifier: Apache-2.0
// Owns the shared flags and the join sequence of the network commands.
#include "tools/cli/remote/client_common.h"

#include <charconv>
#include <cmath>
#include <cstdio>
#include <optional>
#include <vector>

namespace scenecrdt::cli {

namespace {

// "A,B,C" -> exactly `count` finite floats; nullopt otherwise.
std::optional<std::vector<float>> FloatList(std::string_view text, std::size_t count) {
  std::vector<float> out;
  for (;;) {
    const std::size_t comma = text.find(',');
    const std::string_view item = text.substr(0, comma);
    float v = 0;
    const auto [end, ec] = std::from_chars(item.data(), item.data() + item.size(), v);
    if (ec != std::errc() || end != item.data() + item.size() || item.empty() ||
        !std::isfinite(v) || out.size() == count) {
      return std::nullopt;
    }
    out.push_back(v);
    if (comma == std::string_view::npos) break;
    text.remove_prefix(comma + 1);
  }
  if (out.size() != count) return std::nullopt;
  return out;
}

}  // namespace

void DeclareClientFlags(CliApp& app, ClientFlagValues& values) {
  app.Value("--server", "URL",
            "tcp://HOST:PORT, ws://HOST:PORT or ws://HOST:PORT/scene/NAME\n"
            "(tls://, wss:// with TLS); URL,URL,...: the nodes of one cluster,\n"
            "tried in turn (fail-over)",
            &values.server);
  app.Value("--scene", "NAME", "the scene, unless the URL names it", &values.scene);
  app.Value("--token", "T", "the token, when the server runs with --auth", &values.token);
  app.Value("--ca", "FILE",
            "CA certificates (PEM) for tls:// and wss:// (default: the system\n"
            "trust store)",
            &values.ca);
  app.Double("--timeout", "SEC", "give up after SEC (default 10)", &values.timeout);
}

void DeclareInterestFlags(CliApp& app, ClientFlagValues& values) {
  app.Value("--interest", "X,Y,Z,R",
            "receive only the entities within R metres of (X,Y,Z), their\n"
            "ancestors and the entities without a Transform (docs/INTEREST.md)",
            &values.interest);
  app.Value("--interest-follow", "E,R", "the same around entity E's world position",
            &values.interest_follow);
}

bool ReadInterestFlags(const ClientFlagValues& values, std::string_view command, ClientFlags& out) {
  const auto& point = values.interest;
  const auto& follow = values.interest_follow;
  if (point && follow) {
    PrintMessage(command, "give --interest or --interest-follow, not both");
    return false;
  }
  if (point) {
    const auto v = FloatList(*point, 4);
    if (!v || (*v)[3] < 0) {
      PrintMessage(command,
                   "--interest takes X,Y,Z,R: four finite numbers, the radius R >= 0 (metres)");
      return false;
    }
    client::Interest i;
    i.center = {(*v)[0], (*v)[1], (*v)[2]};
    i.radius = (*v)[3];
    out.interest = i;
  }
  if (follow) {
    const std::string_view text = *follow;
    const std::size_t comma = text.find(',');
    uint32_t entity = 0;
    const std::string_view e = text.substr(0, comma);
    const auto [end, ec] = std::from_chars(e.data(), e.data() + e.size(), entity);
    const auto r =
        comma == std::string_view::npos ? std::nullopt : FloatList(text.substr(comma + 1), 1);
    if (ec != std::errc() || end != e.data() + e.size() || e.empty() || !r || (*r)[0] < 0) {
      PrintMessage(command,
                   "--interest-follow takes E,R: an entity number and a finite radius R >= 0");
      return false;
    }
    client::Interest i;
    i.follow_entity = entity;
    i.radius = (*r)[0];
    out.interest = i;
  }
  return true;
}

bool ReadClientFlags(const ClientFlagValues& values, std::string_view command, ClientFlags& out) {
  const auto& server = values.server;
  const auto& scene = values.scene;
  const auto& token = values.token;
  const auto& timeout = values.timeout;
  if (values.ca) out.ca_file = *values.ca;
  if (token) out.token = *token;
  if (timeout) out.timeout_ms = static_cast<uint64_t>(*timeout * 1000.0);
  const std::string hint = "; see 'scenecrdt " + std::string(command) + " --help'";
  if (!server) {
    PrintMessage(command,
                 "needs --server URL (tcp://HOST:PORT, ws://HOST:PORT, tls://, wss:// or "
                 "ws://HOST:PORT/scene/NAME)" +
                     hint);
    return false;
  }
  // URL[,URL...]: several servers of the scene, tried in turn (fail-over).
  const std::vector<std::string> servers = client::SplitServerList(*server);
  if (servers.empty()) {
    PrintMessage(command, "--server is empty: give tcp://HOST:PORT or ws://HOST:PORT" + hint);
    return false;
  }
  std::optional<client::ServerUrl> url;
  std::vector<client::ServerUrl> urls;
  for (const std::string& one : servers) {
    auto parsed = client::ParseServerUrl(one);
    if (!parsed.has_value()) {
      PrintError(command, "--server " + one, parsed.error());
      return false;
    }
    if (url && parsed->scene != url->scene) {
      PrintMessage(command, "the --server URLs name different scenes: give the scene once");
      return false;
    }
    if (!url) url = parsed.value();
    urls.push_back(parsed.value());
  }
  // The scene comes from --scene or from a ws:// /scene/NAME path; given twice, it must be
  // the same (a URL path that was silently ignored would join another scene).
  if (scene && !url->scene.empty() && *scene != url->scene) {
    PrintMessage(command, "--server names scene '" + url->scene + "' but --scene says '" + *scene +
                              "': give the scene once");
    return false;
  }
  if (!scene && url->scene.empty()) {
    PrintMessage(command, "needs --scene NAME (or a ws://HOST:PORT/scene/NAME URL)" + hint);
    return false;
  }
  out.server = *server;
  out.url = *url;
  out.urls = std::move(urls);
  out.scene = scene ? *scene : url->scene;
  return true;
}

std::string DescribeRefusal(const client::Refusal& r) {
  std::string out = ErrorCodeName(r.code);
  if (!r.text.empty()) out += ": " + r.text;
  switch (r.code) {
    case ErrorCode::kUnauthorized:
      out += " (check --token and the server's --auth file)";
      break;
    case ErrorCode::kReadOnly:
      out += " (this token has role \"read\")";
      break;
    case ErrorCode::kRateLimited:
      out += " (slow down, or raise the server's --rate)";
      break;
    default:
      break;
  }
  return out;
}

std::unique_ptr<client::Client> JoinScene(std::string_view command, const ClientFlags& flags,
                                          const char* client_name, const JoinOptions& join) {
  client::ClientOptions options;
  options.url = flags.server;
  options.scene = flags.scene;
  options.token = flags.token;
  options.connection.ca_file = flags.ca_file;
  options.client_name = client_name;
  options.reconnect.enabled = join.reconnect;
  options.log = join.log;
  options.interest = flags.interest;
  auto c = std::make_unique<client::Client>(options);
  if (join.before_start) join.before_start(*c);
  if (auto started = c->Start(); !started.has_value()) {
    PrintError(command, "cannot start the client", started.error());
    return nullptr;
  }
  if (c->Join(std::chrono::milliseconds(flags.timeout_ms)).has_value()) return c;
  for (const client::Refusal& r : c->TakeRefusals()) {
    PrintMessage(command, "refused by the server: " + DescribeRefusal(r));
    return nullptr;
  }
  if (c->closed()) {
    PrintMessage(command, std::string("connection to ") + flags.server +
                              " failed: " + ConnectionEndReason(*c));
  } else {
    PrintMessage(command, "timed out joining scene '" + flags.scene + "' on " + flags.server +
                              " (is the server up? raise --timeout)");
  }
  return nullptr;
}

std::string ConnectionEndReason(const client::Client& c) {
  const client::ClientError& e = c.last_error();
  if (e.from_server && !e.text.empty()) {
    return std::string(ErrorCodeName(e.code)) + ": " + e.text;
  }
  const char* detail = c.close_error().detail;
  return detail != nullptr && detail[0] != '\0' ? detail : "closed";
}

bool RequireLoopback(const std::vector<client::ServerUrl>& urls, std::string_view command) {
  for (const client::ServerUrl& url : urls) {
    if (url.host != "127.0.0.1" && url.host != "localhost" && url.host != "::1") {
      PrintMessage(command, "runs against loopback only (127.0.0.1, localhost or ::1)");
      return false;
    }
  }
  return true;
}

}  // namespace scenecrdt::cli
