// SPDX-License-Identifier: Apache-2.0
// Owns AuthorityRules: the `--authority rules` file (docs/AUTHORITY.md "Rules mode"): per
// component id who may write it (owner, any, admin, none = server-only), a default for the
// components it does not name, and entity-number ranges reserved to admins. Parsed once at
// start (std and the repo's bounded JSON reader only: the fuzz target compiles it in);
// immutable afterwards, so every scene strand reads it without locking.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "scenecrdt/protocol/result.h"

namespace scenecrdt::server {

// Who may write a component.
enum class Writer : uint8_t {
  kOwner,  // the entity's owner (owner mode's rule) and admins
  kAny,    // every writer (plain last-writer-wins)
  kAdmin,  // admins only
  kNone,   // nobody: server-only (the server's own writes), never relayed from a client
};

struct AuthorityRules {
  // Bounds of the file: components named, admin ranges, file bytes.
  static constexpr std::size_t kMaxComponents = 4096;
  static constexpr std::size_t kMaxRanges = 256;
  static constexpr std::size_t kMaxFileBytes = 1u << 20;

  std::unordered_map<uint32_t, Writer> components;
  Writer fallback = Writer::kOwner;                           // "default"
  std::vector<std::pair<uint32_t, uint32_t>> admin_entities;  // [lo, hi] entity numbers

  Writer For(uint32_t component) const {
    const auto it = components.find(component);
    return it == components.end() ? fallback : it->second;
  }
  bool AdminOnly(uint32_t number) const {
    for (const auto& [lo, hi] : admin_entities) {
      if (number >= lo && number <= hi) return true;
    }
    return false;
  }

  // Parses the file's text:
  //   {"default": "owner"|"any"|"admin"|"none",
  //    "components": {"<component id>": "owner"|"any"|"admin"|"none", ...},
  //    "admin_entities": [[lo, hi], ...]}
  // Every key is optional; an unknown key, a bad value, a component id that is not a decimal
  // u32, lo > hi, or a number outside 0..65534 is kInvalidArgument, and `why` names the key.
  static Result<AuthorityRules> Parse(std::string_view text, std::string& why);
};

const char* WriterName(Writer w);

}  // namespace scenecrdt::server
