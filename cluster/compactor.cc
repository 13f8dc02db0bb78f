// SPDX-License-Identifier: Apache-2.0
// Owns the compaction procedure. The lease makes one node do the work; the commit script is the
// fence: it re-checks the lease and refuses to replace a snapshot with an older one, so a
// compactor that stalled past its TTL cannot overwrite or trim behind a newer one.
#include "scenecrdt/cluster/compactor.h"

#include <string>
#include <utility>
#include <vector>

#include "scenecrdt/cluster/internal/scripts.h"
#include "scenecrdt/cluster/lease.h"
#include "scenecrdt/cluster/scene_log.h"

namespace scenecrdt::cluster {
namespace {

// Entries strictly below the returned ID may go: never past what the snapshot covers, and
// never the last `retain_ms` before it. Zero: nothing to trim.
StreamId TrimPoint(StreamId covers, uint32_t retain_ms) {
  const StreamId after = covers.Next();
  if (retain_ms == 0) return after;
  const StreamId window{covers.ms > retain_ms ? covers.ms - retain_ms : 0, 0};
  return window < after ? window : after;
}

}  // namespace

Compactor::Compactor(RedisConnection& connection, ClusterConfig config, CompactionOptions options)
    : connection_(connection), config_(std::move(config)), options_(options) {}

Result<CompactionResult> Compactor::CompactScene(std::string_view scene) {
  if (auto valid = ValidateClusterConfig(config_); !valid.has_value()) return valid.error();
  auto keys = MakeSceneKeys(config_.key_prefix, scene);
  if (!keys.has_value()) return keys.error();
  Lease lease(connection_, keys->lease, config_.node_id, options_.lease_ttl_ms);
  auto acquired = lease.TryAcquire();
  if (!acquired.has_value()) {
    failures_.fetch_add(1, std::memory_order_relaxed);
    return acquired.error();
  }
  if (!*acquired) {
    lease_busy_.fetch_add(1, std::memory_order_relaxed);
    CompactionResult busy;
    busy.outcome = CompactionResult::Outcome::kLeaseHeld;
    return busy;
  }
  Result<CompactionResult> result = FoldAndCommit(scene, lease.token());
  // Released whatever happened; if Redis is gone the TTL releases it.
  auto released = lease.Release();
  if (!released.has_value()) {
    connection_.Log("compaction of " + std::string(scene) +
                    ": lease release failed: " + connection_.last_error_text());
  }
  if (!result.has_value()) {
    failures_.fetch_add(1, std::memory_order_relaxed);
    return result;
  }
  switch (result->outcome) {
    case CompactionResult::Outcome::kCompacted:
      compactions_.fetch_add(1, std::memory_order_relaxed);
      trimmed_.fetch_add(result->trimmed, std::memory_order_relaxed);
      break;
    case CompactionResult::Outcome::kLeaseLost:
    case CompactionResult::Outcome::kSuperseded:
      failures_.fetch_add(1, std::memory_order_relaxed);
      connection_.Log("compaction of " + std::string(scene) + " wrote nothing: " +
                      (result->outcome == CompactionResult::Outcome::kLeaseLost
                           ? "the lease expired while folding"
                           : "a newer snapshot is stored"));
      break;
    default:
      break;
  }
  return result;
}

Result<CompactionResult> Compactor::FoldAndCommit(std::string_view scene,
                                                  const std::string& token) {
  SceneLog log(connection_, config_);
  auto loaded = log.LoadScene(scene);
  if (!loaded.has_value()) return loaded.error();
  CompactionResult result;
  result.bad_entries = loaded->bad.size();
  const uint64_t new_entries = loaded->tail.size() + loaded->bad.size();
  if (new_entries == 0 || new_entries < options_.min_tail_entries) {
    result.outcome = CompactionResult::Outcome::kNothingToDo;
    return result;
  }

  runtime::CrdtStore store(options_.limits);
  if (auto r = store.MergeStream(loaded->snapshot.bytes(), config_.decode); !r.has_value()) {
    return r.error();
  }
  for (const StreamEntry& e : loaded->tail) {
    // Parsed entries decode (StreamEntry::Kind::kData); refusals inside are the store's rules,
    // the same on every node, so they are not errors here.
    if (auto r = store.MergeStream(e.bytes(), config_.decode); !r.has_value()) return r.error();
    ++result.folded_entries;
  }
  std::vector<uint8_t> snapshot;
  store.ExportSnapshot(snapshot);
  result.state_hash = store.StateHash();
  result.snapshot_bytes = snapshot.size();
  result.covers = loaded->last_id;

  auto keys = MakeSceneKeys(config_.key_prefix, scene);
  if (!keys.has_value()) return keys.error();
  const StreamId trim = TrimPoint(result.covers, options_.retain_ms);
  const std::string covers = result.covers.ToString();
  const std::string min_id = trim.is_zero() ? std::string() : trim.ToString();
  const std::string_view data(reinterpret_cast<const char*>(snapshot.data()), snapshot.size());
  auto reply = connection_.Command({"EVAL", internal::kCommitCompactionScript, "3", keys->lease,
                                    keys->snapshot, keys->log, token, covers, data, min_id,
                                    config_.node_id});
  if (!reply.has_value()) return reply.error();
  if (!reply->is_array() || reply->elements.size() != 2 ||
      reply->elements[0].type != RedisReply::Type::kInteger ||
      reply->elements[1].type != RedisReply::Type::kInteger) {
    return MakeError(ErrorCode::kIo, "compaction script answered an unexpected shape");
  }
  const int64_t status = reply->elements[0].integer;
  if (status == -1) {
    result.outcome = CompactionResult::Outcome::kLeaseLost;
    return result;
  }
  if (status == -2) {
    result.outcome = CompactionResult::Outcome::kSuperseded;
    return result;
  }
  if (status < 0) {
    return MakeError(ErrorCode::kCorruptData, "stored snapshot id is malformed");
  }
  result.outcome = CompactionResult::Outcome::kCompacted;
  result.trimmed = static_cast<uint64_t>(status);
  result.stream_length = static_cast<uint64_t>(reply->elements[1].integer);
  return result;
}

CompactorCounters Compactor::counters() const {
  CompactorCounters c;
  c.compactions = compactions_.load(std::memory_order_relaxed);
  c.lease_busy = lease_busy_.load(std::memory_order_relaxed);
  c.failures = failures_.load(std::memory_order_relaxed);
  c.trimmed = trimmed_.load(std::memory_order_relaxed);
  return c;
}

}  // namespace scenecrdt::cluster
