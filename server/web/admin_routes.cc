// SPDX-License-Identifier: Apache-2.0
// Owns the admin HTTP API's routes (admin_routes.h).
#include "scenecrdt/server/web/admin_routes.h"

#include <nlohmann/json.hpp>
#include <string>
#include <utility>

#include "scenecrdt/protocol/session/envelope.h"
#include "scenecrdt/server/observability/endpoint_text.h"
#include "scenecrdt/server/scene/scene.h"
#include "scenecrdt/server/web/scene_directory.h"

namespace scenecrdt::server {

namespace {

nlohmann::json SummaryJson(const Scene::Summary& s) {
  nlohmann::json out{{"name", s.name}, {"in_memory", s.in_memory}};
  if (s.in_memory) {
    out["entities"] = s.entities;
    out["bytes"] = s.bytes;
    out["sessions"] = s.sessions;
  }
  return out;
}

WebResponse Json(unsigned status, const nlohmann::json& body) {
  return {status, body.dump() + "\n", "application/json"};
}

WebResponse Problem(unsigned status, const std::string& text) {
  return Json(status, nlohmann::json{{"error", text}});
}

void ListScenes(ServerContext& ctx, std::function<void(WebResponse)> respond) {
  auto answer = [respond = std::move(respond)](Listing listing) {
    nlohmann::json scenes = nlohmann::json::array();
    for (const Scene::Summary& s : listing.scenes) scenes.push_back(SummaryJson(s));
    nlohmann::json out{{"scenes", std::move(scenes)}, {"complete", listing.complete}};
    if (!listing.error.empty()) out["error"] = listing.error;
    respond(Json(200, out));
  };
  SceneDirectory* directory = ctx.scene_directory();
  if (directory == nullptr) {
    SceneSummaries(ctx, nullptr, nullptr, std::move(answer));
    return;
  }
  directory->List([&ctx, answer = std::move(answer)](StoredScenesPtr stored) {
    SceneSummaries(ctx, nullptr, stored, answer);
  });
}

// One scene, loaded when only stored (never created: 404 when nothing is stored).
void InspectScene(ServerContext& ctx, const std::string& name,
                  std::function<void(WebResponse)> respond) {
  auto held = ctx.AcquireScene(name, /*may_create=*/false);
  if (!held.has_value()) {
    const bool missing = held.error().code == ErrorCode::kUnauthorized;
    respond(Problem(missing ? 404 : 503,
                    missing ? "no such scene: nothing is stored under '" + name + "'"
                            : std::string(held.error().detail)));
    return;
  }
  Scene* scene = held.value();
  scene->Describe([&ctx, scene, respond = std::move(respond)](Scene::Summary s) {
    nlohmann::json out = SummaryJson(s);
    out["sequences"] = {
        {"store", s.store_sequence}, {"scene", s.wire_sequence}, {"durable", s.durable_sequence}};
    ctx.ReleaseScene(scene);
    respond(Json(200, out));
  });
}

}  // namespace

bool SameSecret(std::string_view a, std::string_view b) {
  // Every byte of the longer one is read whatever differs; only the lengths leak.
  const std::size_t n = std::max(a.size(), b.size());
  unsigned char diff = a.size() == b.size() ? 0 : 1;
  for (std::size_t i = 0; i < n; ++i) {
    const auto x = static_cast<unsigned char>(i < a.size() ? a[i] : 0);
    const auto y = static_cast<unsigned char>(i < b.size() ? b[i] : 0);
    diff = static_cast<unsigned char>(diff | (x ^ y));
  }
  return diff == 0;
}

void ServeAdmin(ServerContext& ctx, std::string_view method, std::string_view path,
                std::string_view authorization, const net::tcp::endpoint& peer,
                std::function<void(WebResponse)> respond) {
  const std::string& token = ctx.config().admin_token;
  if (token.empty()) {  // not configured: as if the paths did not exist
    respond({404, "not found (the admin API needs --admin-token-file)\n"});
    return;
  }
  constexpr std::string_view kBearer = "Bearer ";
  const std::string_view given = authorization.substr(0, kBearer.size()) == kBearer
                                     ? authorization.substr(kBearer.size())
                                     : std::string_view();
  if (given.empty() || !SameSecret(given, token)) {
    Metrics::Add(ctx.metrics().admin_refused);
    ctx.log().Write(LogLevel::kWarn, "refusal",
                    "scene=- session=- kind=admin peer=%s reason=unauthorized fatal=yes "
                    "messages=0 detail=\"%s\" http=401",
                    EndpointText(peer).c_str(),
                    given.empty() ? "no bearer token" : "wrong admin token");
    respond(Problem(401,
                    "the admin API needs Authorization: Bearer <the --admin-token-file "
                    "token>"));
    return;
  }
  Metrics::Add(ctx.metrics().admin_requests);
  const std::string_view rest = path.substr(kAdminPrefix.size());
  constexpr std::string_view kScenes = "scenes";
  if (rest == kScenes || rest == "scenes/") {
    if (method != "GET") {
      respond(Problem(405, "GET /admin/scenes"));
      return;
    }
    ListScenes(ctx, std::move(respond));
    return;
  }
  if (rest.substr(0, kScenes.size() + 1) != "scenes/") {
    respond(Problem(404, "admin paths: /admin/scenes, /admin/scenes/<name>"));
    return;
  }
  std::string_view name = rest.substr(kScenes.size() + 1);
  constexpr std::string_view kCheckpoint = "/checkpoint";
  const bool checkpoint = name.size() > kCheckpoint.size() &&
                          name.substr(name.size() - kCheckpoint.size()) == kCheckpoint;
  if (checkpoint) name.remove_suffix(kCheckpoint.size());
  if (!session::IsValidSceneName(name)) {
    respond(Problem(400, "bad scene name: 1..64 of [A-Za-z0-9_.-]"));
    return;
  }
  if (checkpoint) {
    respond(method == "POST"
                ? Problem(501, "checkpoint is not built yet (docs/OPERATIONS.md \"Admin API\")")
                : Problem(405, "POST /admin/scenes/<name>/checkpoint"));
    return;
  }
  if (method == "GET") {
    InspectScene(ctx, std::string(name), std::move(respond));
  } else if (method == "DELETE") {
    respond(Problem(501, "deleting a scene is not built yet (docs/OPERATIONS.md \"Admin API\")"));
  } else {
    respond(Problem(405, "GET or DELETE /admin/scenes/<name>"));
  }
}

}  // namespace scenecrdt::server
