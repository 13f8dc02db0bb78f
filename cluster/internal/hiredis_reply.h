// SPDX-License-Identifier: Apache-2.0
// Owns the one place a hiredis reply object becomes a RedisReply (redis_connection.cc and the
// reply fuzzer use it). Includes hiredis: never include this from a public header.
#pragma once

#include <hiredis/hiredis.h>

#include "scenecrdt/cluster/redis_reply.h"
#include "scenecrdt/protocol/result.h"

namespace scenecrdt::cluster::internal {

// Deep copy of `reply`. hiredis bounds nesting (7 levels); deeper trees or reply types this
// hiredis does not define are refused with kIo.
Result<RedisReply> ConvertReply(const redisReply& reply);

}  // namespace scenecrdt::cluster::internal
