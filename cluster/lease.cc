// SPDX-License-Identifier: Apache-2.0
// Owns the lease commands. The TTL bounds how long a crashed holder blocks others; the scripts
// make renew/release safe against a lease that changed hands meanwhile.
#include "scenecrdt/cluster/lease.h"

#include <cstdio>
#include <random>
#include <utility>

#include "scenecrdt/cluster/internal/scripts.h"

namespace scenecrdt::cluster {
namespace {

Result<bool> IntegerFlag(Result<RedisReply> reply) {
  if (!reply.has_value()) return reply.error();
  if (reply->type != RedisReply::Type::kInteger) {
    return MakeError(ErrorCode::kIo, "lease script did not answer an integer");
  }
  return reply->integer == 1;
}

}  // namespace

Lease::Lease(RedisConnection& connection, std::string key, std::string_view node_id,
             uint32_t ttl_ms)
    : connection_(connection), key_(std::move(key)), ttl_ms_(ttl_ms > 0 ? ttl_ms : 1) {
  std::random_device random;
  char nonce[24];
  std::snprintf(nonce, sizeof(nonce), "/%08x%08x", random(), random());
  token_.append(node_id).append(nonce);
}

Result<bool> Lease::TryAcquire() {
  if (held_) {
    auto renewed = Renew();
    if (!renewed.has_value() || *renewed) return renewed;
  }
  const std::string ttl = std::to_string(ttl_ms_);
  auto reply = connection_.Command({"SET", key_, token_, "NX", "PX", ttl});
  if (!reply.has_value()) return reply.error();
  if (reply->is_nil()) return false;
  if (reply->type != RedisReply::Type::kStatus || reply->str != "OK") {
    return MakeError(ErrorCode::kIo, "SET NX did not answer OK or nil");
  }
  held_ = true;
  return true;
}

Result<bool> Lease::Renew() {
  const std::string ttl = std::to_string(ttl_ms_);
  auto renewed = IntegerFlag(
      connection_.Command({"EVAL", internal::kRenewLeaseScript, "1", key_, token_, ttl}));
  if (renewed.has_value()) held_ = *renewed;
  return renewed;
}

Result<bool> Lease::Release() {
  auto released =
      IntegerFlag(connection_.Command({"EVAL", internal::kReleaseLeaseScript, "1", key_, token_}));
  if (released.has_value()) held_ = false;
  return released;
}

}  // namespace scenecrdt::cluster
