// SPDX-License-Identifier: Apache-2.0
// Fuzz target for the server's HTTP router (server/web/web_request.h): any target, upgraded or
// not, routes without crashing; an upgrade names only the WebSocket routes; a scene or asset
// name it accepts is 1..64 of [A-Za-z0-9_.-] (an asset name never starts with '.', so no path
// outside --web-root can be named; a scene name is never "." or ".."); /admin/ is the admin
// API exactly; a decoded token re-encoded parses back to itself; and the route never depends
// on the query string.
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "scenecrdt/protocol/percent.h"
#include "scenecrdt/server/web/web_request.h"

using scenecrdt::server::IsAdminRoute;
using scenecrdt::server::IsAssetName;
using scenecrdt::server::ParseWebTarget;
using scenecrdt::server::WebRequest;

namespace {

bool NameChars(const std::string& s) {
  for (const char c : s) {
    const bool ok = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
                    c == '_' || c == '.' || c == '-';
    if (!ok) return false;
  }
  return true;
}

std::string Encode(const std::string& s) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  for (const char c : s) {
    const auto u = static_cast<unsigned char>(c);
    out += '%';
    out += kHex[u >> 4];
    out += kHex[u & 15];
  }
  return out;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  // The first byte chooses a WebSocket upgrade or a plain request; the rest is the target.
  if (size == 0) return 0;
  const bool upgrade = (data[0] & 1) != 0;
  const std::string_view target(reinterpret_cast<const char*>(data + 1), size - 1);
  const WebRequest req = ParseWebTarget(target, upgrade);
  using Route = WebRequest::Route;
  const bool socket = req.route == Route::kSceneSocket || req.route == Route::kDclSocket;
  // An upgrade names only the socket routes, and a plain request never does.
  if (req.route != Route::kNone && upgrade != socket) std::abort();
  if (!req.name.empty()) {
    if (req.name.size() > 64 || !NameChars(req.name)) std::abort();
    if (req.route == Route::kAsset && (req.name[0] == '.' || !IsAssetName(req.name))) {
      std::abort();
    }
    // Scene names by the envelope's rule: never "." or "..".
    if (req.route != Route::kAsset && (req.name == "." || req.name == "..")) std::abort();
    const bool named = req.route == Route::kAsset || req.route == Route::kView || socket ||
                       req.route == Route::kAdminScene || req.route == Route::kAdminCheckpoint ||
                       req.route == Route::kAdminOwners;
    if (!named) std::abort();
  }
  if (IsAdminRoute(req.route) != (!upgrade && target.starts_with("/admin/"))) std::abort();
  if (scenecrdt::protocol::QueryParam("token=" + Encode(req.token), "token").value_or("") !=
      req.token) {
    std::abort();
  }
  const auto q = target.find('?');
  if (q != std::string_view::npos &&
      ParseWebTarget(target.substr(0, q), upgrade).route != req.route) {
    std::abort();
  }
  return 0;
}
