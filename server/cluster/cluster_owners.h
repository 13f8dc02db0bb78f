// SPDX-License-Identifier: Apache-2.0
// Owns the cluster side of --authority owner|rules (docs/AUTHORITY.md "Cluster"): the scene's
// owner hash in Redis (`<prefix>:{scene}:owners`, entity number -> principal), the two scripts
// that change it atomically with the XADD of the entry that says so (so the hash is always the
// fold of the stream's owner rows, in stream order), and the `o` field's encoding. Used by the
// cluster node's append thread (writes), control thread (loads) and read loop (the re-read that
// goes with a snapshot reload, on its own connection) only.
//
// Bounds: a row's principal is at most kMaxPrincipalBytes (owner_rows.h); a scene has at most 65024
// owned numbers, so the hash and one entry's rows are bounded by them.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "scenecrdt/cluster/cluster_config.h"
#include "scenecrdt/cluster/redis_connection.h"
#include "scenecrdt/server/cluster/owner_rows.h"
#include "scenecrdt/server/storage/commit_log.h"

namespace scenecrdt::server {

// `dcl` cut at message boundaries into pieces of at most `max` bytes (cluster_node.cc).
std::vector<std::span<const uint8_t>> SplitChunk(std::span<const uint8_t> dcl, std::size_t max);

// The owner hash's key of a scene whose keys are `keys` (same hash slot as its stream).
std::string OwnersKey(const cluster::SceneKeys& keys);

// A flush that changes owner rows (releases, transfers) or carries corrections: its pieces
// appended as entries, the last carrying `rows`, each carrying `corrections` (field `k`), and
// the hash changed, in one script. The last entry's ID.
Result<cluster::StreamId> AppendWithOwners(cluster::RedisConnection& redis,
                                           const cluster::SceneKeys& keys, std::string_view node_id,
                                           std::span<const std::span<const uint8_t>> pieces,
                                           const OwnerRows& rows,
                                           const std::vector<CorrectionMark>& corrections);

// Decides `job`'s claims in one script: a number nobody owns (or `job.principal` owns) is won
// (the hash set, its messages and row appended in one entry), any other is lost (its owner
// returned, nothing appended). `max_entry_bytes` bounds the entry (the caller splits jobs).
ClaimResult RunClaim(cluster::RedisConnection& redis, const cluster::SceneKeys& keys,
                     std::string_view node_id, const ClaimJob& job);

// The scene's owner hash (HGETALL), rows that do not parse left out.
Result<OwnerRows> ReadOwners(cluster::RedisConnection& redis, const cluster::SceneKeys& keys);

}  // namespace scenecrdt::server
