// SPDX-License-Identifier: Apache-2.0
// Owns the parsing of viewer request targets (see web_request.h).
#include "scenecrdt/server/web/web_request.h"

#include <algorithm>

#include "scenecrdt/protocol/percent.h"

namespace scenecrdt::server {

namespace {

constexpr std::string_view kViewPrefix = "/view/";
constexpr std::string_view kAssetPrefix = "/web/";

// Characters of scene and asset names (the envelope's scene-name rule, docs/PROTOCOL.md).
bool IsNameChar(char c) {
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' ||
         c == '.' || c == '-';
}

}  // namespace

bool IsAssetName(std::string_view name) {
  if (name.empty() || name.size() > 64 || name.front() == '.') return false;
  return std::all_of(name.begin(), name.end(), IsNameChar);
}

WebRequest ParseWebTarget(std::string_view target) {
  WebRequest out;
  const auto query_at = target.find('?');
  const std::string_view path = target.substr(0, query_at);
  const std::string_view query =
      query_at == std::string_view::npos ? std::string_view() : target.substr(query_at + 1);
  out.token = protocol::QueryParam(query, "token").value_or(std::string());
  if (path == "/") {
    out.route = WebRequest::Route::kList;
  } else if (path == "/api/scenes") {
    out.route = WebRequest::Route::kListJson;
  } else if (path.starts_with(kViewPrefix)) {
    out.route = WebRequest::Route::kView;
    const std::string_view scene = path.substr(kViewPrefix.size());
    if (!scene.empty() && scene.size() <= 64 && scene != "." && scene != ".." &&
        std::all_of(scene.begin(), scene.end(), IsNameChar)) {
      out.name = std::string(scene);
    }
  } else if (path.starts_with(kAssetPrefix)) {
    out.route = WebRequest::Route::kAsset;
    const std::string_view name = path.substr(kAssetPrefix.size());
    if (IsAssetName(name)) out.name = std::string(name);
  }
  return out;
}

}  // namespace scenecrdt::server
