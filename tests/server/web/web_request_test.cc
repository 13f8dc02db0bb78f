// SPDX-License-Identifier: Apache-2.0
// The server's one HTTP route table (server/web/web_request.h): every path the --http listener
// answers, the names it carries and the upgrade split.
#include "scenecrdt/server/web/web_request.h"

#include <gtest/gtest.h>

#include <string>

namespace scenecrdt::server {
namespace {

using Route = WebRequest::Route;

TEST(WebRequestTest, EveryPathOfTheListenerHasItsRoute) {
  struct Case {
    const char* target;
    bool upgrade;
    Route route;
    const char* name;
  };
  const Case cases[] = {
      {"/scene/lobby", true, Route::kSceneSocket, "lobby"},
      {"/dcl/lobby?token=a%2Fb", true, Route::kDclSocket, "lobby"},
      {"/scene/..", true, Route::kSceneSocket, ""},
      {"/scene/lobby", false, Route::kNone, ""},  // a socket path without the upgrade
      {"/healthz", true, Route::kNone, ""},       // and the reverse
      {"/healthz", false, Route::kHealthz, ""},
      {"/metrics?x=1", false, Route::kMetrics, ""},
      {"/", false, Route::kList, ""},
      {"/api/scenes", false, Route::kListJson, ""},
      {"/view/lobby", false, Route::kView, "lobby"},
      {"/view/a%2Fb", false, Route::kView, ""},
      {"/web/app.js", false, Route::kAsset, "app.js"},
      {"/web/.hidden", false, Route::kAsset, ""},
      {"/admin/scenes", false, Route::kAdminScenes, ""},
      {"/admin/scenes/", false, Route::kAdminScenes, ""},
      {"/admin/scenes/lobby", false, Route::kAdminScene, "lobby"},
      {"/admin/scenes/lobby/checkpoint", false, Route::kAdminCheckpoint, "lobby"},
      {"/admin/scenes/lobby/owners", false, Route::kAdminOwners, "lobby"},
      {"/admin/scenes/bad%20name", false, Route::kAdminScene, ""},
      {"/admin/other", false, Route::kAdminOther, ""},
      {"/admin/scenes/x", true, Route::kNone, ""},
      {"/admin", false, Route::kNone, ""},
      {"/nope", false, Route::kNone, ""},
  };
  for (const Case& c : cases) {
    const WebRequest r = ParseWebTarget(c.target, c.upgrade);
    EXPECT_EQ(r.route, c.route) << c.target << " upgrade=" << c.upgrade;
    EXPECT_EQ(r.name, c.name) << c.target;
    EXPECT_EQ(IsAdminRoute(r.route), std::string(c.target).starts_with("/admin/") && !c.upgrade)
        << c.target;
  }
  EXPECT_EQ(ParseWebTarget("/dcl/lobby?token=a%2Fb", true).token, "a/b");
  EXPECT_EQ(ParseWebTarget("/view/lobby?token=a+b", false).token, "a b");
}

}  // namespace
}  // namespace scenecrdt::server
