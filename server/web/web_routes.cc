// SPDX-License-Identifier: Apache-2.0
// Owns the viewer's HTTP routes (see web_routes.h, docs/WEB.md): the scene list (HTML and
// JSON: the scenes in memory plus the stored names of the SceneDirectory, per-address rate,
// at most kMaxListedScenes), the viewer page (only for a scene that exists: "no such scene"
// and the list otherwise) and its static assets from --web-root, and the 404 that says how to
// build missing assets (the web root's path only in the log).
#include "scenecrdt/server/web/web_routes.h"

#include <algorithm>
#include <fstream>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "scenecrdt/protocol/percent.h"
#include "scenecrdt/protocol/session/envelope.h"
#include "scenecrdt/server/observability/endpoint_text.h"
#include "scenecrdt/server/scene/scene.h"
#include "scenecrdt/server/web/scene_directory.h"
#include "scenecrdt/server/web/web_request.h"

namespace scenecrdt::server {

namespace {

// Largest asset served (the wasm module is ~200 KiB, the bundle ~50 KiB): a bound on what one
// request reads into memory.
constexpr std::size_t kMaxAssetBytes = 16u << 20;

std::string HtmlEscape(std::string_view s) {
  std::string out;
  for (const char c : s) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

const char* ContentType(std::string_view name) {
  const auto ends = [&](std::string_view ext) { return name.ends_with(ext); };
  if (ends(".html")) return "text/html; charset=utf-8";
  if (ends(".js")) return "text/javascript; charset=utf-8";
  if (ends(".wasm")) return "application/wasm";
  if (ends(".css")) return "text/css; charset=utf-8";
  if (ends(".map")) return "application/json";
  return "application/octet-stream";
}

WebResponse Asset(const WebContext& web, std::string_view name, const std::string& peer) {
  const std::string& root = web.server.config().web_root;
  const std::string path = root + "/" + std::string(name);
  std::ifstream in(path, std::ios::binary);
  std::optional<std::string> body;
  if (!root.empty() && in) {
    in.seekg(0, std::ios::end);
    const auto size = static_cast<std::streamoff>(in.tellg());
    if (size >= 0 && static_cast<std::size_t>(size) <= kMaxAssetBytes) {
      std::string bytes(static_cast<std::size_t>(size), '\0');
      in.seekg(0);
      if (in.read(bytes.data(), size)) body = std::move(bytes);
    }
  }
  if (body) return {200, std::move(*body), ContentType(name)};
  const std::string where = root.empty() ? std::string("(no --web-root)") : root;
  web.server.log().Write(LogLevel::kWarn, "web_asset_missing", "peer=%s asset=%.*s web_root=\"%s\"",
                         peer.c_str(), static_cast<int>(name.size()), name.data(), where.c_str());
  // The server's folders are its operator's business: the path goes to the log only.
  return {404,
          "viewer asset '" + std::string(name) +
              "' not found in the server's --web-root (its log names the folder): build the "
              "viewer with `bash scripts/build_web.sh` (it writes build/web) or start "
              "`scenecrdt serve --web-root DIR` with a folder holding view.html, viewer.js, "
              "scenecrdt.js and scenecrdt.wasm (docs/WEB.md)\n",
          "text/plain"};
}

}  // namespace

void SceneSummaries(const WebContext& web, const std::string* token, const StoredScenesPtr& stored,
                    std::function<void(Listing)> done) {
  const auto granted = [&](const std::string& name) {
    return token == nullptr || web.server.auth().CheckNow(*token, name).has_value();
  };
  std::vector<Scene*> loaded = web.scenes.AcquireLoaded();
  std::vector<Scene*> scenes;
  std::set<std::string, std::less<>> names;
  for (Scene* s : loaded) {
    names.insert(s->name());
    if (granted(s->name())) {
      scenes.push_back(s);
    } else {
      web.scenes.Release(s);
    }
  }
  std::vector<Scene::Summary> stored_only;
  if (stored) {
    for (const std::string& name : stored->names) {
      // Cluster streams may carry names a client can never join; they are not listed.
      if (names.count(name) != 0 || !session::IsValidSceneName(name) || !granted(name)) {
        continue;
      }
      stored_only.push_back(Scene::Summary{name, 0, 0, /*in_memory=*/false});
    }
  }
  struct Gather {
    std::mutex mu;
    Listing out;
    std::size_t left;
    std::function<void(Listing)> done;
    void Finish() {
      auto& list = out.scenes;
      std::sort(list.begin(), list.end(),
                [](const Scene::Summary& a, const Scene::Summary& b) { return a.name < b.name; });
      if (list.size() > kMaxListedScenes) {
        list.resize(kMaxListedScenes);
        out.complete = false;
      }
      done(std::move(out));
    }
  };
  auto g = std::make_shared<Gather>();
  g->left = scenes.size();
  g->out.complete = !stored || stored->complete;
  if (stored) g->out.error = stored->error;
  g->out.scenes.resize(scenes.size());
  g->out.scenes.insert(g->out.scenes.end(), std::make_move_iterator(stored_only.begin()),
                       std::make_move_iterator(stored_only.end()));
  g->done = std::move(done);
  if (scenes.empty()) {
    g->Finish();
    return;
  }
  for (std::size_t i = 0; i < scenes.size(); ++i) {
    Scene* scene = scenes[i];
    scene->Describe([g, i, scene, web](Scene::Summary s) {
      bool last = false;
      {
        std::lock_guard<std::mutex> lock(g->mu);
        g->out.scenes[i] = std::move(s);
        last = --g->left == 0;
      }
      web.scenes.Release(scene);
      if (last) g->Finish();
    });
  }
}

namespace {

// `missing`: the scene a /view/ request named that does not exist (said above the list).
std::string ListHtml(const Listing& listing, const std::string& token,
                     const std::string& missing = {}) {
  const std::vector<Scene::Summary>& scenes = listing.scenes;
  const std::string suffix =
      token.empty() ? std::string() : "?token=" + protocol::PercentEncode(token);
  std::string html =
      "<!doctype html><html><head><meta charset=\"utf-8\"><title>scenecrdt scenes</title>"
      "<link rel=\"icon\" href=\"data:,\">"
      "<style>body{font:14px system-ui,sans-serif;margin:2em;background:#15181d;color:#dde}"
      "a{color:#8cf}td,th{padding:4px 14px;text-align:left}</style></head><body>"
      "<h1>scenecrdt: scenes</h1>";
  if (!missing.empty()) {
    html += "<p id=\"no-such-scene\">no such scene: <b>" + HtmlEscape(missing) +
            "</b>. The viewer opens only scenes that exist (a scene exists once something was "
            "written to it); pick one below.</p>";
  }
  html += "<table><tr><th>scene</th><th>entities</th><th>sessions</th></tr>";
  for (const Scene::Summary& s : scenes) {
    const std::string name = HtmlEscape(s.name);
    html += "<tr><td><a href=\"/view/" + protocol::PercentEncode(s.name) + HtmlEscape(suffix) +
            "\">" + name + "</a></td><td>" +
            (s.in_memory ? std::to_string(s.entities) : std::string("stored")) + "</td><td>" +
            std::to_string(s.sessions) + "</td></tr>";
  }
  if (scenes.empty()) html += "<tr><td colspan=\"3\">no scenes yet</td></tr>";
  html += "</table>";
  if (!listing.error.empty()) {
    html += "<p>The stored scenes could not be read (" + HtmlEscape(listing.error) +
            "): only the scenes in memory are listed.</p>";
  } else if (!listing.complete) {
    html += "<p>The list stops at " + std::to_string(kMaxListedScenes) +
            " scenes: more are stored.</p>";
  }
  html += "<p>JSON: <a href=\"/api/scenes" + HtmlEscape(suffix) +
          "\">/api/scenes</a></p></body></html>\n";
  return html;
}

std::string ListJson(const Listing& listing) {
  nlohmann::json list = nlohmann::json::array();
  for (const Scene::Summary& s : listing.scenes) {
    list.push_back({{"name", s.name},
                    {"entities", s.entities},
                    {"sessions", s.sessions},
                    {"in_memory", s.in_memory}});
  }
  nlohmann::json out{{"scenes", std::move(list)}, {"complete", listing.complete}};
  if (!listing.error.empty()) out["error"] = listing.error;
  return out.dump() + "\n";
}

}  // namespace

bool IsViewerRoute(WebRequest::Route route) {
  switch (route) {
    case WebRequest::Route::kList:
    case WebRequest::Route::kListJson:
    case WebRequest::Route::kView:
    case WebRequest::Route::kAsset:
      return true;
    default:
      return false;
  }
}

void ServeWeb(const WebContext& web, const WebRequest& req, const net::tcp::endpoint& peer,
              std::function<void(WebResponse)> respond) {
  const std::string peer_text = EndpointText(peer);
  switch (req.route) {
    case WebRequest::Route::kAsset:
      if (req.name.empty()) {
        respond({404, "asset names are [A-Za-z0-9_.-] (no folders)\n"});
      } else {
        respond(Asset(web, req.name, peer_text));
      }
      return;
    case WebRequest::Route::kView:
      if (req.name.empty()) {
        respond({400, "bad scene name: 1..64 of [A-Za-z0-9_.-]\n"});
        return;
      }
      break;
    case WebRequest::Route::kList:
    case WebRequest::Route::kListJson:
      break;
    default:
      respond({404, "not a viewer path\n"});
      return;
  }
  // The page reads the scene from its own URL. A missing page answers its 404 (how to build
  // it) first; with --auth and no known token the page is served as it is: it lists nothing,
  // and its join is refused without creating anything.
  std::optional<WebResponse> page;
  if (req.route == WebRequest::Route::kView) {
    page = Asset(web, "view.html", peer_text);
    if (page->status != 200 || !web.server.auth().Knows(req.token)) {
      respond(std::move(*page));
      return;
    }
  }
  if (!web.server.auth().Knows(req.token)) {
    respond({401,
             "this server runs with --auth: add ?token=T (a token of the --auth file; the "
             "read role is enough) to list its scenes\n"});
    return;
  }
  SceneDirectory* directory = web.directory;
  if (directory && !directory->rate().Admit(peer.address(), NowMs())) {
    directory->NoteLimited(peer_text);
    respond({429, "too many scene listings from your address (at most " +
                      std::to_string(static_cast<int>(kListingsPerSecond)) +
                      " a second): the viewer page polls every 2 s; retry in a second\n"});
    return;
  }
  Metrics::Add(web.server.metrics().scene_listings);
  const bool json = req.route == WebRequest::Route::kListJson;
  // /view/<scene>: the page when the scene exists (or the list is cut, so it may); else 404
  // with the list. Opening the page would join the scene, which creates it (issue 21).
  auto answer = [json, token = req.token, view = std::move(page), scene = req.name,
                 respond = std::move(respond)](Listing listing) mutable {
    if (view) {
      const bool listed = std::any_of(listing.scenes.begin(), listing.scenes.end(),
                                      [&](const Scene::Summary& s) { return s.name == scene; });
      if (listed || !listing.complete) {
        respond(std::move(*view));
      } else {
        respond({404, ListHtml(listing, token, scene), "text/html; charset=utf-8"});
      }
    } else if (json) {
      respond({200, ListJson(listing), "application/json"});
    } else {
      respond({200, ListHtml(listing, token), "text/html; charset=utf-8"});
    }
  };
  if (!directory) {  // a context without stored scenes (tests): the scenes in memory
    SceneSummaries(web, &req.token, nullptr, std::move(answer));
    return;
  }
  // The stored names are read on the directory's thread; the summaries are gathered from
  // there (auth checks per name included), never on this network thread.
  directory->List([web, token = req.token, answer = std::move(answer)](StoredScenesPtr stored) {
    SceneSummaries(web, &token, stored, answer);
  });
}

}  // namespace scenecrdt::server
