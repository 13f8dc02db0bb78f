// SPDX-License-Identifier: Apache-2.0
// Owns the hiredis -> RedisReply copy. Recursive, bounded by kMaxDepth (hiredis's own reader
// stops at 7 levels, so the bound is a second fence, not the first).
#include "scenecrdt/cluster/internal/hiredis_reply.h"

namespace scenecrdt::cluster::internal {
namespace {

constexpr int kMaxDepth = 16;

Result<void> Copy(const redisReply& in, RedisReply& out, int depth) {
  if (depth > kMaxDepth) return MakeError(ErrorCode::kIo, "redis: reply nested too deeply");
  switch (in.type) {
    case REDIS_REPLY_NIL:
      out.type = RedisReply::Type::kNil;
      return {};
    case REDIS_REPLY_INTEGER:
      out.type = RedisReply::Type::kInteger;
      out.integer = in.integer;
      return {};
    case REDIS_REPLY_STRING:
    case REDIS_REPLY_STATUS:
    case REDIS_REPLY_ERROR:
      out.type = in.type == REDIS_REPLY_STRING   ? RedisReply::Type::kString
                 : in.type == REDIS_REPLY_STATUS ? RedisReply::Type::kStatus
                                                 : RedisReply::Type::kError;
      if (in.len > 0) out.str.assign(in.str, in.len);
      return {};
    case REDIS_REPLY_ARRAY:
      out.type = RedisReply::Type::kArray;
      out.elements.resize(in.elements);
      for (std::size_t i = 0; i < in.elements; ++i) {
        if (in.element[i] == nullptr) continue;  // hiredis leaves none empty; stay nil if so
        if (auto r = Copy(*in.element[i], out.elements[i], depth + 1); !r.has_value()) {
          return r.error();
        }
      }
      return {};
    default:
      return MakeError(ErrorCode::kIo, "redis: reply of an unknown type");
  }
}

}  // namespace

Result<RedisReply> ConvertReply(const redisReply& reply) {
  RedisReply out;
  if (auto r = Copy(reply, out, 0); !r.has_value()) return r.error();
  return out;
}

}  // namespace scenecrdt::cluster::internal
