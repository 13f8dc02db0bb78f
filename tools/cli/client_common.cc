// SPDX-License-Identifier: Apache-2.0
// Owns the shared flags and the join sequence of the network commands.
#include "tools/cli/client_common.h"

#include <cstdio>
#include <optional>
#include <vector>

namespace scenecrdt::cli {

bool ReadClientFlags(ArgScanner& scan, std::string_view command, ClientFlags& out) {
  auto server = scan.Value("--server");
  auto scene = scan.Value("--scene");
  auto token = scan.Value("--token");
  auto timeout = scan.Double("--timeout");
  if (auto ca = scan.Value("--ca")) out.ca_file = *ca;
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
                              " failed: " + c->close_error().detail);
  } else {
    PrintMessage(command, "timed out joining scene '" + flags.scene + "' on " + flags.server +
                              " (is the server up? raise --timeout)");
  }
  return nullptr;
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
