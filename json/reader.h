// SPDX-License-Identifier: Apache-2.0
// Owns ReadJson: the one way JSON text is read (the `encode` input, the server's --auth file,
// test data). nlohmann::json parses; our SAX handler builds the document so that nesting depth
// and input size are bounded, a JSON "-0" keeps its sign, errors come back as a Result with a
// byte offset, and the start of every array element can be located for messages that name a
// line. docs/JSON.md lists what nlohmann does by itself and why each of these is ours.
#pragma once

#include <cstddef>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "scenecrdt/protocol/result.h"

namespace scenecrdt::json {

// A parsed document. Objects are std::map (keys sorted, lookups O(log n)); a key given twice
// keeps its last value unless ReadLimits::refuse_duplicate_members.
using Json = nlohmann::json;

struct ReadLimits {
  // Deepest value: a top-level scalar is at depth 0, the items of a top-level array at 1.
  std::size_t max_depth = 64;
  // Longest accepted text, in bytes; longer text is refused before parsing.
  std::size_t max_bytes = 64u << 20;
  // Most objects and arrays open at once (a bare scalar is 0, {} is 1), checked beside
  // max_depth: a JWT's header and claims are bounded this way (server/auth/jwt_json.h).
  std::size_t max_nesting = SIZE_MAX;
  // Refuse an object that names a member twice ("JSON duplicate member") instead of keeping the
  // last value: RFC 7515 section 5.2 lets a JWT parser do so, and taking "the last one" lets two
  // libraries read different claims.
  bool refuse_duplicate_members = false;
};

// Where the elements of each array of one parsed document start, as byte offsets into the
// text ('{' or '[' for a container; for a scalar, a byte on its line). Filled by ReadJson.
class ElementOffsets {
 public:
  // The offset of element `index` of `array` (an array of the document read with *this), or
  // nullopt when unknown.
  std::optional<uint64_t> Of(const Json& array, std::size_t index) const;

 private:
  friend class DomBuilder;
  std::unordered_map<const void*, std::vector<uint64_t>> offsets_;
};

// Parses one JSON document (RFC 8259: UTF-8, surrounding white space allowed). Errors are
// kParse with a static reason and the byte offset where the text stopped making sense.
// `offsets`, when given, is filled for every array of the document.
Result<Json> ReadJson(std::string_view text, const ReadLimits& limits = {},
                      ElementOffsets* offsets = nullptr);

// The 1-based line that holds byte `offset` of `text`.
std::size_t LineOf(std::string_view text, uint64_t offset);

}  // namespace scenecrdt::json
