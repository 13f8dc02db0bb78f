// SPDX-License-Identifier: Apache-2.0
// Owns the parsing of a viewer request target (docs/WEB.md), std only so the fuzz target
// tools/fuzz/fuzz_web_request.cc builds it without Boost: which route a path names, the scene or
// asset name it carries (validated), and the percent-decoded ?token= value.
#pragma once

#include <string>
#include <string_view>

namespace scenecrdt::server {

struct WebRequest {
  enum class Route { kNone, kList, kListJson, kView, kAsset };
  Route route = Route::kNone;
  // kView: the scene; kAsset: the file name ([A-Za-z0-9_.-], 1..64, not starting with '.').
  // Empty when the name is invalid (the route answers 400 / 404 then).
  std::string name;
  // The value of ?token=, decoded by protocol::QueryParam (protocol/percent.h: '+' is a space,
  // the first ?token= wins); empty when absent or malformed.
  std::string token;
};

// Parses a request target ("/view/lobby?token=x"). Never fails: unknown paths are kNone.
WebRequest ParseWebTarget(std::string_view target);

// [A-Za-z0-9_.-], 1..64 characters, not starting with '.': no folder can be named.
bool IsAssetName(std::string_view name);

}  // namespace scenecrdt::server
