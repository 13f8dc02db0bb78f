// SPDX-License-Identifier: Apache-2.0
// Fuzz target for the viewer's request-target parser (server/web/web_request.h): any target parses
// without crashing; a scene or asset name it accepts is 1..64 of [A-Za-z0-9_.-] (an asset name
// never starts with '.', so no path outside --web-root can be named); a decoded token re-encoded
// parses back to itself; and the route never depends on the query string.
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "scenecrdt/protocol/percent.h"
#include "scenecrdt/server/web/web_request.h"

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
  const std::string_view target(reinterpret_cast<const char*>(data), size);
  const WebRequest req = ParseWebTarget(target);
  if (!req.name.empty()) {
    if (req.name.size() > 64 || !NameChars(req.name)) std::abort();
    if (req.route == WebRequest::Route::kAsset && (req.name[0] == '.' || !IsAssetName(req.name))) {
      std::abort();
    }
    if (req.route != WebRequest::Route::kAsset && req.route != WebRequest::Route::kView) {
      std::abort();
    }
  }
  if (scenecrdt::protocol::QueryParam("token=" + Encode(req.token), "token").value_or("") !=
      req.token) {
    std::abort();
  }
  const auto q = target.find('?');
  if (q != std::string_view::npos && ParseWebTarget(target.substr(0, q)).route != req.route) {
    std::abort();
  }
  return 0;
}
