// SPDX-License-Identifier: Apache-2.0
// Owns the admin HTTP API's routes (admin_routes.h).
#include "scenecrdt/server/web/admin_routes.h"

#include <sqlite3.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>

#include "scenecrdt/protocol/session/envelope.h"
#include "scenecrdt/server/observability/endpoint_text.h"
#include "scenecrdt/server/scene/scene.h"
#include "scenecrdt/server/storage/commit_log.h"
#include "scenecrdt/server/storage/persistence.h"
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

void ListScenes(const WebContext& web, std::function<void(WebResponse)> respond) {
  auto answer = [respond = std::move(respond)](Listing listing) {
    nlohmann::json scenes = nlohmann::json::array();
    for (const Scene::Summary& s : listing.scenes) scenes.push_back(SummaryJson(s));
    nlohmann::json out{{"scenes", std::move(scenes)}, {"complete", listing.complete}};
    if (!listing.error.empty()) out["error"] = listing.error;
    respond(Json(200, out));
  };
  SceneDirectory* directory = web.directory;
  if (directory == nullptr) {
    SceneSummaries(web, nullptr, nullptr, std::move(answer));
    return;
  }
  directory->List([web, answer = std::move(answer)](StoredScenesPtr stored) {
    SceneSummaries(web, nullptr, stored, answer);
  });
}

// One stored scene held for an answer (loaded when only stored, never created), or nullptr
// after answering 404 (nothing stored under `name`) or 503 (it cannot be read now).
Scene* AcquireStored(const WebContext& web, const std::string& name,
                     const std::function<void(WebResponse)>& respond) {
  auto held = web.scenes.Acquire(name, /*may_create=*/false);
  if (held.has_value()) return held.value();
  const bool missing = held.error().code == ErrorCode::kUnauthorized;
  respond(Problem(missing ? 404 : 503, missing
                                           ? "no such scene: nothing is stored under '" + name + "'"
                                           : std::string(held.error().detail)));
  return nullptr;
}

// One scene, loaded when only stored (never created: 404 when nothing is stored).
void InspectScene(const WebContext& web, const std::string& name,
                  std::function<void(WebResponse)> respond) {
  Scene* scene = AcquireStored(web, name, respond);
  if (scene == nullptr) return;
  scene->Describe([web, scene, respond = std::move(respond)](Scene::Summary s) {
    nlohmann::json out = SummaryJson(s);
    out["sequences"] = {
        {"store", s.store_sequence}, {"scene", s.wire_sequence}, {"durable", s.durable_sequence}};
    web.scenes.Release(scene);
    respond(Json(200, out));
  });
}

// The scene's owner table (--authority owner|rules; docs/AUTHORITY.md), loaded like
// InspectScene: {"scene", "authority", "owners": {"<entity number>": "<principal>", ...}}.
void SceneOwners(const WebContext& web, const std::string& name,
                 std::function<void(WebResponse)> respond) {
  Scene* scene = AcquireStored(web, name, respond);
  if (scene == nullptr) return;
  scene->Owners([web, scene, name, respond = std::move(respond)](std::vector<OwnerRow> rows) {
    web.scenes.Release(scene);
    nlohmann::json owners = nlohmann::json::object();
    for (const auto& [number, principal] : rows) owners[std::to_string(number)] = principal;
    const AuthorityMode mode = web.server.config().authority;
    respond(Json(200, nlohmann::json{{"scene", name},
                                     {"authority", mode == AuthorityMode::kOwner   ? "owner"
                                                   : mode == AuthorityMode::kRules ? "rules"
                                                                                   : "open"},
                                     {"owners", std::move(owners)}}));
  });
}

// SQLite: the scenes' rows share one database, and every change is committed before it is
// acknowledged, so what a checkpoint can force is the WAL's: PRAGMA wal_checkpoint(TRUNCATE)
// on a connection of its own (any connection may checkpoint), waiting at most 1 s for the
// commit thread. Cluster mode: 501 (the nodes' stream compaction runs on its interval).
void Checkpoint(const WebContext& web, const std::string& name,
                std::function<void(WebResponse)> respond) {
  if (web.server.commits().shared()) {
    respond(Problem(501,
                    "cluster mode: the scenes live in Redis streams, compacted by the nodes "
                    "every --compact-interval-ms; forcing one is not built"));
    return;
  }
  const std::string path = Persistence::DatabasePath(web.server.config().data_dir);
  sqlite3* db = nullptr;
  int rc = sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READWRITE, nullptr);
  int wal_frames = -1;
  int checkpointed = -1;
  if (rc == SQLITE_OK) {
    sqlite3_busy_timeout(db, 1000);
    // A first read opens the WAL on this connection (a fresh one does not know it yet).
    rc = sqlite3_exec(db, "SELECT count(*) FROM sqlite_master;", nullptr, nullptr, nullptr);
  }
  if (rc == SQLITE_OK) {
    rc = sqlite3_wal_checkpoint_v2(db, "main", SQLITE_CHECKPOINT_TRUNCATE, &wal_frames,
                                   &checkpointed);
  }
  std::string why = rc == SQLITE_OK ? "" : sqlite3_errstr(rc);
  if (rc == SQLITE_OK && wal_frames < 0) {
    rc = SQLITE_ERROR;
    why = "the database is not in WAL mode";
  }
  sqlite3_close(db);
  if (rc != SQLITE_OK) {
    web.server.log().Write(LogLevel::kWarn, "admin",
                           "action=checkpoint scene=%s ok=no detail=\"%s\"", name.c_str(),
                           why.c_str());
    respond(Problem(rc == SQLITE_BUSY ? 503 : 500,
                    "checkpoint failed: " + why +
                        (rc == SQLITE_BUSY ? " (the commit thread held it for 1 s; retry)" : "")));
    return;
  }
  std::error_code ec;
  const auto bytes = std::filesystem::file_size(path, ec);
  web.server.log().Write(LogLevel::kInfo, "admin",
                         "action=checkpoint scene=%s ok=yes wal_frames=%d", name.c_str(),
                         wal_frames);
  respond(Json(200, nlohmann::json{{"scene", name},
                                   {"checkpointed_frames", checkpointed},
                                   {"database_bytes", ec ? 0 : bytes}}));
}

// SQLite: the members are closed with scene_deleted, the rows erased on the commit thread
// after any commit in flight, the scene dropped from memory (scene_registry.h Delete).
// Cluster mode: 501 (the stream and snapshot keys are shared with every node; not built).
void DeleteScene(const WebContext& web, const std::string& name, const std::string& peer,
                 std::function<void(WebResponse)> respond) {
  if (web.server.commits().shared()) {
    respond(Problem(501,
                    "cluster mode: deleting a scene is not built (its Redis stream and snapshot "
                    "are shared by every node, which may still host it); see "
                    "docs/OPERATIONS.md \"Admin API\""));
    return;
  }
  auto started = web.scenes.Delete(name, [web, name, peer, respond](SceneDeletion d) {
    web.server.log().Write(
        d.ok ? LogLevel::kInfo : LogLevel::kError, "admin",
        "action=delete scene=%s peer=%s ok=%s entities=%zu sessions=%zu rows=%llu", name.c_str(),
        peer.c_str(), d.ok ? "yes" : "no", d.entities, d.sessions,
        static_cast<unsigned long long>(d.rows));
    if (!d.ok) {
      respond(Problem(503,
                      "the scene's sessions were closed and it left memory, but erasing its rows "
                      "failed (the commit failure is in the log): they load again on the next "
                      "join; retry the DELETE"));
      return;
    }
    Metrics::Add(web.server.metrics().admin_scene_deletes);
    respond(Json(200, nlohmann::json{{"deleted", name},
                                     {"entities", d.entities},
                                     {"sessions_closed", d.sessions},
                                     {"rows", d.rows}}));
  });
  if (started.has_value()) return;
  const ErrorCode code = started.error().code;
  const unsigned status = code == ErrorCode::kUnauthorized   ? 404
                          : code == ErrorCode::kSceneDeleted ? 409
                                                             : 503;
  const std::string text = status == 404 ? "no such scene: nothing is stored under '" + name + "'"
                                         : std::string(started.error().detail);
  web.server.log().Write(LogLevel::kWarn, "admin",
                         "action=delete scene=%s peer=%s ok=no http=%u detail=\"%s\"", name.c_str(),
                         peer.c_str(), status, text.c_str());
  respond(Problem(status, text));
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

void ServeAdmin(const WebContext& web, std::string_view method, const WebRequest& route,
                std::string_view authorization, const net::tcp::endpoint& peer,
                std::function<void(WebResponse)> respond) {
  const std::string& token = web.server.config().admin_token;
  if (token.empty()) {  // not configured: as if the paths did not exist
    respond({404, "not found (the admin API needs --admin-token-file)\n"});
    return;
  }
  constexpr std::string_view kBearer = "Bearer ";
  const std::string_view given = authorization.substr(0, kBearer.size()) == kBearer
                                     ? authorization.substr(kBearer.size())
                                     : std::string_view();
  if (given.empty() || !SameSecret(given, token)) {
    Metrics::Add(web.server.metrics().admin_refused);
    web.server.log().Write(LogLevel::kWarn, "refusal",
                           "scene=- session=- kind=admin peer=%s reason=unauthorized fatal=yes "
                           "messages=0 detail=\"%s\" http=401",
                           EndpointText(peer).c_str(),
                           given.empty() ? "no bearer token" : "wrong admin token");
    respond(Problem(401,
                    "the admin API needs Authorization: Bearer <the --admin-token-file "
                    "token>"));
    return;
  }
  Metrics::Add(web.server.metrics().admin_requests);
  using Route = WebRequest::Route;
  if (route.route == Route::kAdminScenes) {
    if (method != "GET") {
      respond(Problem(405, "GET /admin/scenes"));
      return;
    }
    ListScenes(web, std::move(respond));
    return;
  }
  if (route.route == Route::kAdminOther) {
    respond(Problem(404, "admin paths: /admin/scenes, /admin/scenes/<name>"));
    return;
  }
  if (route.name.empty()) {
    respond(Problem(400, "bad scene name: 1..64 of [A-Za-z0-9_.-]"));
    return;
  }
  const std::string& name = route.name;
  if (route.route == Route::kAdminCheckpoint) {
    if (method == "POST") {
      Checkpoint(web, name, std::move(respond));
    } else {
      respond(Problem(405, "POST /admin/scenes/<name>/checkpoint"));
    }
    return;
  }
  if (route.route == Route::kAdminOwners) {
    if (method == "GET") {
      SceneOwners(web, name, std::move(respond));
    } else {
      respond(Problem(405, "GET /admin/scenes/<name>/owners"));
    }
    return;
  }
  if (method == "GET") {
    InspectScene(web, name, std::move(respond));
  } else if (method == "DELETE") {
    DeleteScene(web, name, EndpointText(peer), std::move(respond));
  } else {
    respond(Problem(405, "GET or DELETE /admin/scenes/<name>"));
  }
}

}  // namespace scenecrdt::server
