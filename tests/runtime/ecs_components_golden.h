// SPDX-License-Identifier: Apache-2.0
// Owns the reader of the golden @dcl/ecs component stream (tests/data/components/, written by
// tests/interop/gen_components.js; docs/COMPONENTS.md): the DCL bytes of four engine.update()
// chunks and, after each, what the Engine held (every component but the Transform as the bytes
// its schema serialized, grow-only sets as sorted values) and the changed / added / removed
// pairs. Header-only: runtime_tests and capi_tests both read it. Needs SCENECRDT_TEST_DATA_DIR.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "scenecrdt/json/reader.h"
#include "scenecrdt/protocol/hex.h"

namespace scenecrdt::golden {

using Key = std::pair<uint32_t, uint32_t>;  // (entity, component)
using Bytes = std::vector<uint8_t>;

struct EcsFrame {
  std::size_t offset = 0;
  std::size_t length = 0;
  std::map<Key, Bytes> values;                  // LWW payloads
  std::map<Key, std::vector<Bytes>> grow_only;  // values, sorted bytewise
  std::vector<Key> changed, added, removed;     // sorted by (entity, component)
};

struct EcsGolden {
  Bytes stream;
  std::vector<EcsFrame> frames;
  std::map<std::string, uint32_t> components;  // name -> id
};

inline std::string ReadGoldenFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

inline Bytes GoldenHex(const json::Json& v) {
  std::optional<Bytes> b = protocol::FromHex(v.get<std::string>());
  return b.value_or(Bytes{});
}

inline Key GoldenKey(const std::string& text) {
  const std::size_t colon = text.find(':');
  return {static_cast<uint32_t>(std::stoul(text.substr(0, colon))),
          static_cast<uint32_t>(std::stoul(text.substr(colon + 1)))};
}

// Reads the golden files; fails the calling test (ADD_FAILURE) when they are unreadable.
inline EcsGolden LoadEcsGolden() {
  EcsGolden g;
  const std::string dir = SCENECRDT_TEST_DATA_DIR "/components/";
  const std::string dcl = ReadGoldenFile(dir + "ecs_components.dcl");
  g.stream.assign(dcl.begin(), dcl.end());
  Result<json::Json> doc = json::ReadJson(ReadGoldenFile(dir + "ecs_components.json"));
  if (!doc.has_value() || g.stream.empty()) {
    ADD_FAILURE() << "cannot read " << dir << "ecs_components.{dcl,json}";
    return g;
  }
  for (const auto& [name, id] : (*doc)["components"].items())
    g.components[name] = id.get<uint32_t>();
  for (const json::Json& f : (*doc)["frames"]) {
    EcsFrame frame;
    frame.offset = f["offset"].get<std::size_t>();
    frame.length = f["length"].get<std::size_t>();
    for (const auto& [key, value] : f["values"].items())
      frame.values[GoldenKey(key)] = GoldenHex(value);
    for (const auto& [key, list] : f["growOnly"].items()) {
      for (const json::Json& v : list) frame.grow_only[GoldenKey(key)].push_back(GoldenHex(v));
    }
    const auto pairs = [](const json::Json& list) {
      std::vector<Key> out;
      for (const json::Json& p : list) out.emplace_back(p[0].get<uint32_t>(), p[1].get<uint32_t>());
      return out;
    };
    frame.changed = pairs(f["changed"]);
    frame.added = pairs(f["added"]);
    frame.removed = pairs(f["removed"]);
    g.frames.push_back(std::move(frame));
  }
  return g;
}

}  // namespace scenecrdt::golden
