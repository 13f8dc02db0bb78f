// SPDX-License-Identifier: Apache-2.0
// Owns the server's HTTP route table (see web_request.h).
#include "scenecrdt/server/web/web_request.h"

#include <algorithm>

#include "scenecrdt/protocol/percent.h"
#include "scenecrdt/protocol/session/envelope.h"

namespace scenecrdt::server {

namespace {

constexpr std::string_view kScenePrefix = "/scene/";
constexpr std::string_view kDclPrefix = "/dcl/";
constexpr std::string_view kViewPrefix = "/view/";
constexpr std::string_view kAssetPrefix = "/web/";
constexpr std::string_view kAdminPrefix = "/admin/";

bool IsNameChar(char c) {
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' ||
         c == '.' || c == '-';
}

// A scene name by the envelope's rule (docs/PROTOCOL.md), else empty.
std::string SceneName(std::string_view name) {
  return session::IsValidSceneName(name) ? std::string(name) : std::string();
}

void RouteAdmin(std::string_view rest, WebRequest& out) {
  using Route = WebRequest::Route;
  constexpr std::string_view kScenes = "scenes";
  if (rest == kScenes || rest == "scenes/") {
    out.route = Route::kAdminScenes;
    return;
  }
  if (!rest.starts_with("scenes/")) {
    out.route = Route::kAdminOther;
    return;
  }
  std::string_view name = rest.substr(kScenes.size() + 1);
  constexpr std::string_view kCheckpoint = "/checkpoint";
  constexpr std::string_view kOwners = "/owners";
  out.route = Route::kAdminScene;
  if (name.size() > kCheckpoint.size() && name.ends_with(kCheckpoint)) {
    name.remove_suffix(kCheckpoint.size());
    out.route = Route::kAdminCheckpoint;
  } else if (name.size() > kOwners.size() && name.ends_with(kOwners)) {
    name.remove_suffix(kOwners.size());
    out.route = Route::kAdminOwners;
  }
  out.name = SceneName(name);
}

}  // namespace

bool IsAssetName(std::string_view name) {
  if (name.empty() || name.size() > 64 || name.front() == '.') return false;
  return std::all_of(name.begin(), name.end(), IsNameChar);
}

bool IsAdminRoute(WebRequest::Route route) {
  switch (route) {
    case WebRequest::Route::kAdminScenes:
    case WebRequest::Route::kAdminScene:
    case WebRequest::Route::kAdminCheckpoint:
    case WebRequest::Route::kAdminOwners:
    case WebRequest::Route::kAdminOther:
      return true;
    default:
      return false;
  }
}

WebRequest ParseWebTarget(std::string_view target, bool websocket_upgrade) {
  using Route = WebRequest::Route;
  WebRequest out;
  const auto query_at = target.find('?');
  const std::string_view path = target.substr(0, query_at);
  const std::string_view query =
      query_at == std::string_view::npos ? std::string_view() : target.substr(query_at + 1);
  out.token = protocol::QueryParam(query, "token").value_or(std::string());
  if (websocket_upgrade) {
    if (path.starts_with(kScenePrefix)) {
      out.route = Route::kSceneSocket;
      out.name = SceneName(path.substr(kScenePrefix.size()));
    } else if (path.starts_with(kDclPrefix)) {
      out.route = Route::kDclSocket;
      out.name = SceneName(path.substr(kDclPrefix.size()));
    }
    return out;
  }
  if (path.starts_with(kAdminPrefix)) {
    RouteAdmin(path.substr(kAdminPrefix.size()), out);
  } else if (path == "/healthz") {
    out.route = Route::kHealthz;
  } else if (path == "/metrics") {
    out.route = Route::kMetrics;
  } else if (path == "/") {
    out.route = Route::kList;
  } else if (path == "/api/scenes") {
    out.route = Route::kListJson;
  } else if (path.starts_with(kViewPrefix)) {
    out.route = Route::kView;
    out.name = SceneName(path.substr(kViewPrefix.size()));
  } else if (path.starts_with(kAssetPrefix)) {
    out.route = Route::kAsset;
    const std::string_view name = path.substr(kAssetPrefix.size());
    if (IsAssetName(name)) out.name = std::string(name);
  }
  return out;
}

}  // namespace scenecrdt::server
