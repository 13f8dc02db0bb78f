// SPDX-License-Identifier: Apache-2.0
// Owns parsing --server URLs and URL lists.
#include "scenecrdt/client/url.h"

#include "scenecrdt/protocol/session/envelope.h"

namespace scenecrdt::client {
namespace {

Error Bad(const char* why) { return MakeError(ErrorCode::kInvalidArgument, why); }

// The path after HOST:PORT ("" or starting with '/'): the scene it names, or a refusal. A
// path that was silently ignored would join another scene than the one the user typed.
Result<std::string> SceneOfPath(ServerUrl::Scheme scheme, std::string_view path) {
  if (path.find('?') != std::string_view::npos || path.find('#') != std::string_view::npos) {
    return Bad("the server URL takes no query or fragment: pass the token with --token");
  }
  if (path.empty() || path == "/") return std::string();
  if (scheme == ServerUrl::Scheme::kTcp) {
    return Bad(
        "a tcp:// URL has no path (nor a tls:// one): tcp://HOST:PORT, and the scene with "
        "--scene");
  }
  constexpr std::string_view kScene = "/scene/";
  if (path.starts_with("/dcl/")) {
    return Bad(
        "/dcl/<scene> is the raw-DCL path for @dcl/ecs engines; scenecrdt commands speak the "
        "envelope protocol on ws://HOST:PORT/scene/<scene>");
  }
  if (!path.starts_with(kScene)) {
    return Bad(
        "the only ws:// path is /scene/<scene>: ws://HOST:PORT or ws://HOST:PORT/scene/NAME");
  }
  std::string_view name = path.substr(kScene.size());
  if (!name.empty() && name.back() == '/') name.remove_suffix(1);
  if (!session::IsValidSceneName(name)) {
    return Bad("the scene in the URL must be 1..64 characters of A-Z a-z 0-9 _ . -");
  }
  return std::string(name);
}

}  // namespace

Result<ServerUrl> ParseServerUrl(std::string_view url) {
  ServerUrl out;
  constexpr struct {
    std::string_view prefix;
    ServerUrl::Scheme scheme;
    bool tls;
  } kSchemes[] = {{"tcp://", ServerUrl::Scheme::kTcp, false},
                  {"ws://", ServerUrl::Scheme::kWebSocket, false},
                  {"tls://", ServerUrl::Scheme::kTcp, true},
                  {"wss://", ServerUrl::Scheme::kWebSocket, true}};
  bool known = false;
  for (const auto& s : kSchemes) {
    if (!url.starts_with(s.prefix)) continue;
    out.scheme = s.scheme;
    out.tls = s.tls;
    url.remove_prefix(s.prefix.size());
    known = true;
    break;
  }
  if (!known) {
    return Bad(
        "the server URL must be tcp://HOST:PORT or ws://HOST:PORT (tls:// and wss:// "
        "over TLS)");
  }
  std::string_view path;
  if (const auto slash = url.find_first_of("/?#"); slash != std::string_view::npos) {
    path = url.substr(slash);
    url = url.substr(0, slash);
  }
  auto scene = SceneOfPath(out.scheme, path);
  if (!scene.has_value()) return scene.error();
  out.scene = std::move(scene).value();
  const auto colon = url.rfind(':');
  if (colon == std::string_view::npos || colon == 0 || colon + 1 >= url.size()) {
    return Bad("the server URL needs HOST:PORT");
  }
  std::string_view host = url.substr(0, colon);
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') {
    host = host.substr(1, host.size() - 2);
  }
  if (host.empty()) return Bad("the server URL has an empty host (write HOST:PORT)");
  uint32_t port = 0;
  for (char c : url.substr(colon + 1)) {
    if (c < '0' || c > '9') return Bad("bad port in URL");
    port = port * 10 + static_cast<uint32_t>(c - '0');
    if (port > 65535) return Bad("port above 65535");
  }
  if (port == 0) return Bad("port 0 in URL");
  out.host = std::string(host);
  out.port = static_cast<uint16_t>(port);
  return out;
}

std::vector<std::string> SplitServerList(std::string_view list) {
  std::vector<std::string> out;
  while (!list.empty()) {
    const std::size_t comma = list.find(',');
    std::string_view one = list.substr(0, comma);
    list = comma == std::string_view::npos ? std::string_view() : list.substr(comma + 1);
    while (!one.empty() && one.front() == ' ') one.remove_prefix(1);
    while (!one.empty() && one.back() == ' ') one.remove_suffix(1);
    if (!one.empty()) out.emplace_back(one);
  }
  return out;
}

}  // namespace scenecrdt::client
