// SPDX-License-Identifier: Apache-2.0
// Owns the viewer's HTTP routes (see web_routes.h, docs/WEB.md): the scene list (HTML and
// JSON), the viewer page and its static assets from --web-root, and the 404 that says how to
// build missing assets.
#include "scenecrdt/server/web_routes.h"

#include <algorithm>
#include <atomic>
#include <fstream>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <vector>

#include "scenecrdt/protocol/session/envelope.h"
#include "scenecrdt/server/scene.h"

namespace scenecrdt::server {

namespace {

constexpr std::string_view kViewPrefix = "/view/";
constexpr std::string_view kAssetPrefix = "/web/";
// Largest asset served (the wasm module is ~200 KiB, the bundle ~50 KiB): a bound on what one
// request reads into memory.
constexpr std::size_t kMaxAssetBytes = 16u << 20;

// Percent-decoded value of `key` in a query string; empty when absent or malformed.
std::string QueryValue(std::string_view query, std::string_view key) {
  while (!query.empty()) {
    const auto amp = query.find('&');
    const std::string_view pair = query.substr(0, amp);
    query = amp == std::string_view::npos ? std::string_view() : query.substr(amp + 1);
    const auto eq = pair.find('=');
    if (eq == std::string_view::npos || pair.substr(0, eq) != key) continue;
    std::string out;
    const std::string_view v = pair.substr(eq + 1);
    for (std::size_t i = 0; i < v.size(); ++i) {
      if (v[i] == '+') {
        out += ' ';
      } else if (v[i] != '%') {
        out += v[i];
      } else {
        const auto hex = [](char c) {
          if (c >= '0' && c <= '9') return c - '0';
          if (c >= 'a' && c <= 'f') return c - 'a' + 10;
          if (c >= 'A' && c <= 'F') return c - 'A' + 10;
          return -1;
        };
        if (i + 2 >= v.size()) return std::string();
        const int hi = hex(v[i + 1]);
        const int lo = hex(v[i + 2]);
        if (hi < 0 || lo < 0) return std::string();
        out += static_cast<char>(hi * 16 + lo);
        i += 2;
      }
    }
    return out;
  }
  return std::string();
}

std::string PercentEncode(std::string_view s) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  for (const char c : s) {
    const auto u = static_cast<unsigned char>(c);
    if ((u >= 'A' && u <= 'Z') || (u >= 'a' && u <= 'z') || (u >= '0' && u <= '9') || c == '-' ||
        c == '_' || c == '.' || c == '~') {
      out += c;
    } else {
      out += '%';
      out += kHex[u >> 4];
      out += kHex[u & 15];
    }
  }
  return out;
}

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

// An asset name: [A-Za-z0-9_.-], not starting with '.', at most 64 characters (no folders, so
// nothing outside --web-root is reachable).
bool IsAssetName(std::string_view name) {
  if (name.empty() || name.size() > 64 || name.front() == '.') return false;
  return std::all_of(name.begin(), name.end(), [](char c) {
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' ||
           c == '.' || c == '-';
  });
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

WebResponse Asset(ServerContext& ctx, std::string_view name, std::string_view peer) {
  const std::string& root = ctx.config().web_root;
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
  ctx.log().Write("web_asset_missing", "peer=%.*s asset=%.*s web_root=\"%s\"",
                  static_cast<int>(peer.size()), peer.data(), static_cast<int>(name.size()),
                  name.data(), where.c_str());
  return {404,
          "viewer asset '" + std::string(name) + "' not found in " + where +
              ": build the viewer with `bash tests/web/run.sh build/<preset>/tools/scenecrdt` "
              "(it writes build/web) or start `scenecrdt serve --web-root DIR` with a folder "
              "holding view.html, viewer.js, scenecrdt.js and scenecrdt.wasm (docs/WEB.md)\n",
          "text/plain"};
}

// Summaries of the scenes `token` may read, gathered from each scene's strand; `done` runs
// once with all of them, in name order, on the strand of the last scene to answer.
void Summaries(ServerContext& ctx, const std::string& token,
               std::function<void(std::vector<Scene::Summary>)> done) {
  std::vector<Scene*> scenes = ctx.ListScenes();
  std::erase_if(scenes, [&](Scene* s) { return !ctx.auth().Check(token, s->name()).has_value(); });
  if (scenes.empty()) {
    done({});
    return;
  }
  struct Gather {
    std::mutex mu;
    std::vector<Scene::Summary> out;
    std::size_t left;
    std::function<void(std::vector<Scene::Summary>)> done;
  };
  auto g = std::make_shared<Gather>();
  g->left = scenes.size();
  g->out.resize(scenes.size());
  g->done = std::move(done);
  for (std::size_t i = 0; i < scenes.size(); ++i) {
    scenes[i]->Describe([g, i](Scene::Summary s) {
      bool last = false;
      {
        std::lock_guard<std::mutex> lock(g->mu);
        g->out[i] = std::move(s);
        last = --g->left == 0;
      }
      if (last) g->done(std::move(g->out));
    });
  }
}

std::string ListHtml(const std::vector<Scene::Summary>& scenes, const std::string& token) {
  const std::string suffix = token.empty() ? std::string() : "?token=" + PercentEncode(token);
  std::string html =
      "<!doctype html><html><head><meta charset=\"utf-8\"><title>scenecrdt scenes</title>"
      "<link rel=\"icon\" href=\"data:,\">"
      "<style>body{font:14px system-ui,sans-serif;margin:2em;background:#15181d;color:#dde}"
      "a{color:#8cf}td,th{padding:4px 14px;text-align:left}</style></head><body>"
      "<h1>scenecrdt: scenes</h1><table><tr><th>scene</th><th>entities</th><th>sessions</th>"
      "</tr>";
  for (const Scene::Summary& s : scenes) {
    const std::string name = HtmlEscape(s.name);
    html += "<tr><td><a href=\"/view/" + PercentEncode(s.name) + HtmlEscape(suffix) + "\">" + name +
            "</a></td><td>" + std::to_string(s.entities) + "</td><td>" +
            std::to_string(s.sessions) + "</td></tr>";
  }
  if (scenes.empty()) html += "<tr><td colspan=\"3\">no scenes yet</td></tr>";
  html += "</table><p>JSON: <a href=\"/api/scenes" + HtmlEscape(suffix) +
          "\">/api/scenes</a></p></body></html>\n";
  return html;
}

std::string ListJson(const std::vector<Scene::Summary>& scenes) {
  nlohmann::json list = nlohmann::json::array();
  for (const Scene::Summary& s : scenes) {
    list.push_back({{"name", s.name}, {"entities", s.entities}, {"sessions", s.sessions}});
  }
  return nlohmann::json{{"scenes", std::move(list)}}.dump() + "\n";
}

}  // namespace

bool IsWebPath(std::string_view path) {
  return path == "/" || path == "/api/scenes" || path.starts_with(kViewPrefix) ||
         path.starts_with(kAssetPrefix);
}

void ServeWeb(ServerContext& ctx, std::string_view target, std::string_view peer,
              std::function<void(WebResponse)> respond) {
  const auto query_at = target.find('?');
  const std::string_view path = target.substr(0, query_at);
  const std::string_view query =
      query_at == std::string_view::npos ? std::string_view() : target.substr(query_at + 1);
  if (path.starts_with(kAssetPrefix)) {
    const std::string_view name = path.substr(kAssetPrefix.size());
    if (!IsAssetName(name)) {
      respond({404, "asset names are [A-Za-z0-9_.-] (no folders)\n"});
      return;
    }
    respond(Asset(ctx, name, peer));
    return;
  }
  if (path.starts_with(kViewPrefix)) {
    if (!session::IsValidSceneName(path.substr(kViewPrefix.size()))) {
      respond({400, "bad scene name: 1..64 of [A-Za-z0-9_.-]\n"});
      return;
    }
    respond(Asset(ctx, "view.html", peer));  // the page reads the scene from its own URL
    return;
  }
  std::string token = QueryValue(query, "token");
  if (!ctx.auth().Knows(token)) {
    respond({401,
             "this server runs with --auth: add ?token=T (a token of the --auth file; the "
             "read role is enough) to list its scenes\n"});
    return;
  }
  const bool json = path == "/api/scenes";
  Summaries(ctx, token, [json, token, respond = std::move(respond)](auto scenes) {
    if (json) {
      respond({200, ListJson(scenes), "application/json"});
    } else {
      respond({200, ListHtml(scenes, token), "text/html; charset=utf-8"});
    }
  });
}

}  // namespace scenecrdt::server
