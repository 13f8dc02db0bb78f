// SPDX-License-Identifier: Apache-2.0
// Owns Lease: a time-limited exclusive right held in Redis (docs/CLUSTER.md "Compaction and its
// lease"). Acquire is SET key token NX PX ttl; Renew and Release are scripts that act only while
// the key still holds this holder's token, so a holder whose lease expired and was taken by
// another can neither extend nor delete the new holder's lease. The token is fresh per Lease
// object (node id + random), so two objects of one node exclude each other too.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "scenecrdt/cluster/redis_connection.h"
#include "scenecrdt/protocol/result.h"

namespace scenecrdt::cluster {

class Lease {
 public:
  // `connection` must outlive the lease. `key` is the lease key (SceneKeys::lease).
  Lease(RedisConnection& connection, std::string key, std::string_view node_id, uint32_t ttl_ms);

  // True when acquired (or already held by this object and renewed); false when another holds it.
  Result<bool> TryAcquire();
  // True when still held and extended by ttl_ms; false when it was lost (expired, taken).
  Result<bool> Renew();
  // True when it was held and is now released; false when it was no longer ours.
  Result<bool> Release();

  const std::string& token() const { return token_; }
  const std::string& key() const { return key_; }
  uint32_t ttl_ms() const { return ttl_ms_; }

 private:
  RedisConnection& connection_;
  std::string key_;
  std::string token_;
  uint32_t ttl_ms_;
  bool held_ = false;  // last known state (Redis is the authority)
};

}  // namespace scenecrdt::cluster
