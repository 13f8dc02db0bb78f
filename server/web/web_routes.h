// SPDX-License-Identifier: Apache-2.0
// Owns the viewer's HTTP routes (docs/WEB.md): GET / (the scene list as HTML), GET /api/scenes
// (the same as JSON, polled by the page), GET /view/<scene> (the 3D viewer page) and
// GET /web/<file> (its assets: script bundle, wasm module), read from --web-root. HttpSession
// only dispatches here; stored scene names come from the SceneDirectory's thread and scene
// summaries from each scene's strand, so the answer comes back through a callback on any
// thread.
#pragma once

#include <functional>
#include <string>
#include <string_view>

#include "scenecrdt/server/context.h"
#include "scenecrdt/server/scene/scene.h"
#include "scenecrdt/server/scene/scenes.h"
#include "scenecrdt/server/web/scene_directory.h"
#include "scenecrdt/server/web/web_request.h"

namespace scenecrdt::server {

// What the web routes are handed (all outlive them; copied into callbacks): the server's
// shared state, the scenes in memory, and the stored scene names (nullptr: list the scenes in
// memory only).
struct WebContext {
  ServerContext& server;
  Scenes& scenes;
  SceneDirectory* directory = nullptr;
};

struct WebResponse {
  unsigned status = 200;  // an HTTP status code
  std::string body;
  const char* content_type = "text/plain";
};

struct Listing {
  std::vector<Scene::Summary> scenes;  // name order, at most kMaxListedScenes
  bool complete = true;                // false: cut at the cap, or stored names unreadable
  std::string error;                   // why the stored names could not be read
};

// Summaries of the scenes `token` may read (nullptr: every scene, for the admin API),
// gathered from each loaded scene's strand (each held by a reference until it answered, so
// eviction cannot drop it meanwhile) plus the `stored` names not in memory (not loaded for a
// listing); `done` runs once with all of them, in name order, on the strand of the last scene
// to answer (or on the caller's thread).
void SceneSummaries(const WebContext& web, const std::string* token, const StoredScenesPtr& stored,
                    std::function<void(Listing)> done);

// True for the viewer's routes (kList, kListJson, kView, kAsset), the ones ServeWeb answers.
bool IsViewerRoute(WebRequest::Route route);

// Answers GET on a viewer `req` (IsViewerRoute) through `respond`, called exactly once,
// possibly on another thread. With --auth, / and /api/scenes need ?token=T and list only the
// scenes it is granted; the viewer page and its assets are public (the page's WebSocket
// carries the token). Listings are rate-limited per `peer` address (429 beyond).
void ServeWeb(const WebContext& web, const WebRequest& req, const net::tcp::endpoint& peer,
              std::function<void(WebResponse)> respond);

}  // namespace scenecrdt::server
