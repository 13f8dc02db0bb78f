// SPDX-License-Identifier: Apache-2.0
// Owns the server's one HTTP router: which route a request target names (every path the
// --http listener answers: the WebSocket paths, /healthz, /metrics, the admin API and the
// viewer, docs/SERVER.md "HTTP paths"), the scene or asset name it carries (validated) and the
// percent-decoded ?token= value. Std and protocol only, so the fuzz target
// tools/fuzz/fuzz_web_request.cc builds it without Boost. HttpSession dispatches on the route;
// web_routes.h and admin_routes.h answer theirs from it without reading the target again.
#pragma once

#include <string>
#include <string_view>

namespace scenecrdt::server {

struct WebRequest {
  enum class Route {
    kNone,             // no such path (404 with the list of paths)
    kSceneSocket,      // WebSocket /scene/<name>: the envelope protocol
    kDclSocket,        // WebSocket /dcl/<name>?token=T: raw DCL for @dcl/ecs engines
    kHealthz,          // GET /healthz
    kMetrics,          // GET /metrics
    kList,             // GET /          the scene list (HTML)
    kListJson,         // GET /api/scenes
    kView,             // GET /view/<scene>
    kAsset,            // GET /web/<file>
    kAdminScenes,      // /admin/scenes
    kAdminScene,       // /admin/scenes/<name>
    kAdminCheckpoint,  // /admin/scenes/<name>/checkpoint
    kAdminOwners,      // /admin/scenes/<name>/owners
    kAdminOther,       // any other /admin/ path (404 with the admin paths, after the token)
  };
  Route route = Route::kNone;
  // The scene (sockets, kView, kAdminScene*) or the file name (kAsset: [A-Za-z0-9_.-], 1..64,
  // not starting with '.'). Empty when the name is invalid (the route answers 400 / 404 then).
  std::string name;
  // The value of ?token=, decoded by protocol::QueryParam (protocol/percent.h: '+' is a space,
  // the first ?token= wins); empty when absent or malformed.
  std::string token;
};

// Routes a request target ("/view/lobby?token=x"). A WebSocket upgrade names only the socket
// routes; any other request only the others. Never fails: unknown paths are kNone. The route
// never depends on the query string.
WebRequest ParseWebTarget(std::string_view target, bool websocket_upgrade = false);

// True for the routes of the admin API (admin_routes.h).
bool IsAdminRoute(WebRequest::Route route);

// [A-Za-z0-9_.-], 1..64 characters, not starting with '.': no folder can be named.
bool IsAssetName(std::string_view name);

}  // namespace scenecrdt::server
