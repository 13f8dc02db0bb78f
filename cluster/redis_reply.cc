// SPDX-License-Identifier: Apache-2.0
// Owns the classification of Redis error replies: callers branch on the code (retry, refuse,
// quarantine a scene), logs carry the full text.
#include "scenecrdt/cluster/redis_reply.h"

namespace scenecrdt::cluster {

Error ErrorFromRedisError(std::string_view text) {
  const std::string_view word = text.substr(0, text.find(' '));
  if (word == "WRONGTYPE") {
    return MakeError(ErrorCode::kCorruptData, "redis: a scene key holds the wrong type");
  }
  if (word == "NOAUTH" || word == "WRONGPASS" || word == "NOPERM") {
    return MakeError(ErrorCode::kUnauthorized, "redis: authentication or permission refused");
  }
  if (word == "LOADING" || word == "BUSY" || word == "OOM" || word == "MISCONF" ||
      word == "READONLY" || word == "MASTERDOWN" || word == "TRYAGAIN" || word == "CLUSTERDOWN" ||
      word == "NOREPLICAS") {
    return MakeError(ErrorCode::kUnavailable, "redis: temporarily unable to serve the command");
  }
  return MakeError(ErrorCode::kIo, "redis: the command failed");
}

}  // namespace scenecrdt::cluster
