// SPDX-License-Identifier: Apache-2.0
// Owns the admin HTTP API on the --http listener (docs/OPERATIONS.md "Admin API"): for the
// bearer token of --admin-token-file (compared in constant time), GET /admin/scenes (every
// scene, stored and in memory, with entities, bytes and sessions) and GET /admin/scenes/<name>
// (one scene, loaded for the answer: entities, bytes, sessions, sequences). Without a token
// configured every /admin/ path answers 404; a missing or wrong token 401 (logged, counted).
// POST /admin/scenes/<name>/checkpoint (SQLite: the WAL checkpointed into the database file;
// cluster mode: 501), GET /admin/scenes/<name>/owners (the owner table of --authority owner|rules,
// docs/AUTHORITY.md). DELETE /admin/scenes/<name> (SQLite: the members closed with
// scene_deleted, the rows erased durably, the scene out of memory; cluster mode: 501).
// HttpSession only dispatches here.
#pragma once

#include <functional>
#include <string_view>

#include "scenecrdt/server/context.h"
#include "scenecrdt/server/web/web_routes.h"

namespace scenecrdt::server {

// Answers `method` on an admin `route` (IsAdminRoute, web_request.h) through `respond`, called
// exactly once, possibly on another thread. `authorization`: the request's Authorization
// header ("" when absent).
void ServeAdmin(const WebContext& web, std::string_view method, const WebRequest& route,
                std::string_view authorization, const net::tcp::endpoint& peer,
                std::function<void(WebResponse)> respond);

// Compares two byte strings in time that depends only on their lengths.
bool SameSecret(std::string_view a, std::string_view b);

}  // namespace scenecrdt::server
