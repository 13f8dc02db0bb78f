// SPDX-License-Identifier: Apache-2.0
// Owns RedisReply, our own copy of a Redis reply tree (so parsers and fuzzers never touch
// hiredis objects), and the mapping of Redis error replies to ErrorCode.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "scenecrdt/protocol/result.h"

namespace scenecrdt::cluster {

struct RedisReply {
  enum class Type : uint8_t { kNil, kString, kStatus, kError, kInteger, kArray };
  Type type = Type::kNil;
  int64_t integer = 0;               // kInteger
  std::string str;                   // kString (binary safe), kStatus, kError
  std::vector<RedisReply> elements;  // kArray

  bool is_nil() const { return type == Type::kNil; }
  bool is_string() const { return type == Type::kString; }
  bool is_array() const { return type == Type::kArray; }
  bool is_error() const { return type == Type::kError; }
  std::span<const uint8_t> bytes() const {
    return {reinterpret_cast<const uint8_t*>(str.data()), str.size()};
  }
};

// The ErrorCode and static reason of a Redis error reply, by its first word: WRONGTYPE ->
// kCorruptData (a scene key of the wrong type); NOAUTH/WRONGPASS/NOPERM -> kUnauthorized;
// LOADING/BUSY/OOM/MISCONF/READONLY/MASTERDOWN/TRYAGAIN/CLUSTERDOWN/NOREPLICAS -> kUnavailable
// (retry later); anything else -> kIo.
Error ErrorFromRedisError(std::string_view text);

}  // namespace scenecrdt::cluster
