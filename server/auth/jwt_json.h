// SPDX-License-Identifier: Apache-2.0
// Owns reading a JWT header or claims set into nlohmann-json with the bounds the verifier
// needs: limited nesting, duplicate member names refused (RFC 7515 section 5.2 allows a parser
// to refuse them; taking "the last one" lets two libraries read different claims), UTF-8 checked,
// a NUL byte refused. It is json/reader.h's ReadJson with those bounds (ReadLimits::max_nesting,
// refuse_duplicate_members).
#pragma once

#include <nlohmann/json.hpp>
#include <string_view>

#include "scenecrdt/protocol/result.h"

namespace scenecrdt::server {

// `text` as one JSON value. Errors (kParse): not JSON (invalid UTF-8 and NUL included), nesting of
// objects and arrays deeper than `max_depth` (a bare scalar is depth 0, {} is 1), or an object
// with the same member name twice. Never throws and never recurses on the input.
Result<nlohmann::json> ParseJwtJson(std::string_view text, int max_depth);

}  // namespace scenecrdt::server
