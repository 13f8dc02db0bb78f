// SPDX-License-Identifier: Apache-2.0
// Owns the shared flags and the join sequence of the network commands.
#include "tools/cli/client_common.h"

#include <cstdio>

namespace scenecrdt::cli {

bool ReadClientFlags(ArgScanner& scan, std::string_view command, ClientFlags& out,
                     bool allow_list) {
  auto server = scan.Value("--server");
  auto scene = scan.Value("--scene");
  auto token = scan.Value("--token");
  auto timeout = scan.Double("--timeout");
  if (token) out.token = *token;
  if (timeout) out.timeout_ms = static_cast<uint64_t>(*timeout * 1000.0);
  const std::string hint = "; see 'scenecrdt " + std::string(command) + " --help'";
  if (!server) {
    PrintMessage(command,
                 "needs --server URL (tcp://HOST:PORT, ws://HOST:PORT or "
                 "ws://HOST:PORT/scene/NAME)" +
                     hint);
    return false;
  }
  std::vector<std::string> texts;
  for (std::size_t start = 0;;) {
    const std::size_t comma = allow_list ? server->find(',', start) : std::string::npos;
    texts.push_back(server->substr(start, comma == std::string::npos ? comma : comma - start));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  std::vector<client::ServerUrl> urls;
  for (const std::string& text : texts) {
    auto parsed = client::ParseServerUrl(text);
    if (!parsed.has_value()) {
      PrintError(command, "--server " + text, parsed.error());
      return false;
    }
    if (!urls.empty() && parsed->scene != urls.front().scene) {
      PrintMessage(command, "the --server URLs name different scenes: give the scene once");
      return false;
    }
    urls.push_back(*parsed);
  }
  const client::ServerUrl* url = &urls.front();
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
  out.server = texts.front();
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
  options.client_name = client_name;
  options.reconnect.enabled = join.reconnect;
  options.log = join.log;
  auto c = std::make_unique<client::Client>(options);
  if (join.before_start) join.before_start(*c);
  if (auto started = c->Start(); !started.has_value()) {
    PrintError(command, "cannot start the client", started.error());
    return nullptr;
  }
  const bool ready =
      c->PollUntil([&] { return c->state_ready(); }, std::chrono::milliseconds(flags.timeout_ms));
  if (ready) return c;
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

}  // namespace scenecrdt::cli
