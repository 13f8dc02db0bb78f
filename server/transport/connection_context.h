// SPDX-License-Identifier: Apache-2.0
// Owns ConnectionContext: what the Server hands the listeners for every connection they accept,
// and the two contexts built from it: a Session's (sessions/session.h) and the web routes'
// (web/web_routes.h).
#pragma once

#include "scenecrdt/server/context.h"
#include "scenecrdt/server/scene/scenes.h"
#include "scenecrdt/server/sessions/session.h"
#include "scenecrdt/server/sessions/session_registry.h"
#include "scenecrdt/server/web/scene_directory.h"
#include "scenecrdt/server/web/web_routes.h"

namespace scenecrdt::server {

// Everything here outlives the listeners and their connections (the Server owns it).
struct ConnectionContext {
  ServerContext& server;
  Scenes& scenes;
  SessionRegistry& sessions;
  SceneDirectory* directory = nullptr;  // the stored scene names; nullptr: in memory only

  SessionContext session() const { return {server, scenes, sessions}; }
  WebContext web() const { return {server, scenes, directory}; }
};

}  // namespace scenecrdt::server
