// SPDX-License-Identifier: Apache-2.0
// Owns the owner hash of a cluster scene and its scripts (docs/AUTHORITY.md "Cluster"), and
// the read loop's re-read of it when a snapshot reload replaces trimmed entries.
#include "scenecrdt/server/cluster/cluster_owners.h"

#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include "scenecrdt/cluster/stream_entry.h"
#include "scenecrdt/server/cluster/cluster_node.h"
#include "scenecrdt/server/cluster/owner_rows.h"

namespace scenecrdt::server {

namespace {

// KEYS: log, owners. ARGV: node, o, k, row count, (number, principal)..., pieces...
// Rows first (HSET, or HDEL for ""), then one XADD per piece, the last one carrying `o` (when
// there are rows), every one carrying `k` (when there are correction marks).
constexpr std::string_view kAppendScript = R"lua(
local n = tonumber(ARGV[4])
for i = 0, n - 1 do
  local num, p = ARGV[5 + 2 * i], ARGV[6 + 2 * i]
  if p == '' then redis.call('HDEL', KEYS[2], num) else redis.call('HSET', KEYS[2], num, p) end
end
local function add(d, last)
  local f = {'XADD', KEYS[1], '*', 'n', ARGV[1], 'd', d}
  if last and ARGV[2] ~= '' then f[#f + 1] = 'o'; f[#f + 1] = ARGV[2] end
  if ARGV[3] ~= '' then f[#f + 1] = 'k'; f[#f + 1] = ARGV[3] end
  return redis.call(unpack(f))
end
local first = 5 + 2 * n
if #ARGV < first then return add('', true) end
local id
for i = first, #ARGV do id = add(ARGV[i], i == #ARGV) end
return id
)lua";

// KEYS: log, owners. ARGV: node, principal, (number, DCL chunk)...
// The first claim of a number in stream order wins: this script is where the order is made.
constexpr std::string_view kClaimScript = R"lua(
local p = ARGV[2]
local d, o, lost = {}, {}, {}
for i = 3, #ARGV, 2 do
  local num = ARGV[i]
  local cur = redis.call('HGET', KEYS[2], num)
  if (not cur) or cur == p then
    if not cur then redis.call('HSET', KEYS[2], num, p) end
    d[#d + 1] = ARGV[i + 1]
    o[#o + 1] = num .. ',' .. #p .. ',' .. p
  else
    lost[#lost + 1] = num
    lost[#lost + 1] = cur
  end
end
local id
if #d > 0 then
  id = redis.call('XADD', KEYS[1], '*', 'n', ARGV[1], 'd', table.concat(d), 'o', table.concat(o))
else
  local last = redis.call('XREVRANGE', KEYS[1], '+', '-', 'COUNT', 1)
  if #last > 0 then id = last[1][1] else id = '0-0' end
end
return {id, lost}
)lua";

std::string_view Text(std::span<const uint8_t> bytes) {
  return {reinterpret_cast<const char*>(bytes.data()), bytes.size()};
}

}  // namespace

std::string OwnersKey(const cluster::SceneKeys& keys) {
  // "<prefix>:{scene}:log" -> "<prefix>:{scene}:owners": same hash slot.
  std::string key = keys.log;
  const std::size_t colon = key.rfind(':');
  key.resize(colon == std::string::npos ? key.size() : colon + 1);
  return key + "owners";
}

Result<cluster::StreamId> AppendWithOwners(cluster::RedisConnection& redis,
                                           const cluster::SceneKeys& keys, std::string_view node_id,
                                           std::span<const std::span<const uint8_t>> pieces,
                                           const OwnerRows& rows,
                                           const std::vector<CorrectionMark>& corrections) {
  const std::string owners_key = OwnersKey(keys);
  const std::string encoded = EncodeOwnerRows(rows);
  const std::string marks = EncodeCorrectionMarks(corrections);
  const std::string count = std::to_string(rows.size());
  std::vector<std::string> numbers;
  numbers.reserve(rows.size());
  for (const auto& row : rows) numbers.push_back(std::to_string(row.first));
  cluster::RedisArgs args = {"EVAL",  kAppendScript, "2",   keys.log, owners_key,
                             node_id, encoded,       marks, count};
  for (std::size_t i = 0; i < rows.size(); ++i) {
    args.push_back(numbers[i]);
    args.push_back(rows[i].second);
  }
  for (const auto& piece : pieces) {
    if (!piece.empty()) args.push_back(Text(piece));
  }
  auto reply = redis.Command(args);
  if (!reply.has_value()) return reply.error();
  if (reply->is_error()) return cluster::ErrorFromRedisError(reply->str);
  if (!reply->is_string()) return MakeError(ErrorCode::kIo, "owner append answered no ID");
  auto id = cluster::ParseStreamId(reply->str);
  if (!id.has_value()) return MakeError(ErrorCode::kIo, "owner append did not answer an ID");
  return *id;
}

ClaimResult RunClaim(cluster::RedisConnection& redis, const cluster::SceneKeys& keys,
                     std::string_view node_id, const ClaimJob& job) {
  ClaimResult result;
  const std::string owners_key = OwnersKey(keys);
  std::vector<std::string> numbers;
  numbers.reserve(job.numbers.size());
  for (const auto& n : job.numbers) numbers.push_back(std::to_string(n.first));
  cluster::RedisArgs args = {"EVAL",     kClaimScript, "2",          keys.log,
                             owners_key, node_id,      job.principal};
  for (std::size_t i = 0; i < job.numbers.size(); ++i) {
    args.push_back(numbers[i]);
    args.push_back(Text(job.numbers[i].second));
  }
  auto reply = redis.Command(args);
  if (!reply.has_value() || !reply->is_array() || reply->elements.size() != 2 ||
      !reply->elements[0].is_string() || !reply->elements[1].is_array()) {
    return result;  // not decided: ok = false
  }
  auto id = cluster::ParseStreamId(reply->elements[0].str);
  if (!id.has_value()) return result;
  const auto& lost = reply->elements[1].elements;
  for (std::size_t i = 0; i + 1 < lost.size(); i += 2) {
    uint32_t number = 0;
    if (!ParseOwnerNumber(lost[i].str, number)) return result;
    result.lost.emplace_back(number, lost[i + 1].str);
  }
  result.position = *id;
  result.ok = true;
  return result;
}

Result<OwnerRows> ReadOwners(cluster::RedisConnection& redis, const cluster::SceneKeys& keys) {
  const std::string owners_key = OwnersKey(keys);
  auto reply = redis.Command({"HGETALL", owners_key});
  if (!reply.has_value()) return reply.error();
  if (reply->is_error()) return cluster::ErrorFromRedisError(reply->str);
  OwnerRows rows;
  if (!reply->is_array()) return rows;
  const auto& e = reply->elements;
  for (std::size_t i = 0; i + 1 < e.size(); i += 2) {
    uint32_t number = 0;
    if (!ParseOwnerNumber(e[i].str, number) || e[i + 1].str.size() > kMaxPrincipalBytes) continue;
    rows.emplace_back(number, e[i + 1].str);
  }
  return rows;
}

// ---- ClusterNode's owner appends (cluster_node.h) ----

void ClusterNode::Claim(ClaimJob job) {
  {
    std::lock_guard lock(mu_);
    if (!stop_) {
      claims_.push_back(std::move(job));
      job.done = nullptr;
    }
  }
  if (job.done) {
    job.done(ClaimResult{});  // stopping: nothing is decided any more
    return;
  }
  append_cv_.notify_one();
}

Result<OwnerRows> ClusterNode::ReadSceneOwners(const std::string& name) {
  auto keys = cluster::MakeSceneKeys(config_.key_prefix, name);
  if (!keys.has_value()) return keys.error();
  return ReadOwners(control_connection_, *keys);
}

void ClusterNode::AppendOwned(std::vector<CommitJob>& jobs, std::vector<ClaimJob>& claims) {
  for (ClaimJob& job : claims) {
    ClaimResult result;
    auto keys = cluster::MakeSceneKeys(config_.key_prefix, job.scene);
    if (keys.has_value()) {
      // One script per piece of at most max_entry_bytes (a number's messages stay together).
      result.ok = true;
      ClaimJob piece;
      piece.principal = job.principal;
      std::size_t bytes = 0;
      const auto run = [&] {
        if (piece.numbers.empty()) return;
        ClaimResult r = RunClaim(append_connection_, *keys, config_.node_id, piece);
        result.ok = result.ok && r.ok;
        result.position = std::max(result.position, r.position);
        result.lost.insert(result.lost.end(), r.lost.begin(), r.lost.end());
        piece.numbers.clear();
        bytes = 0;
      };
      for (auto& n : job.numbers) {
        if (bytes + n.second.size() > config_.max_entry_bytes) run();
        bytes += n.second.size();
        piece.numbers.push_back(std::move(n));
      }
      run();
    }
    if (!result.ok) {
      append_failures_.fetch_add(1, std::memory_order_relaxed);
      Log("claim in scene " + job.scene + " failed: " + append_connection_.last_error_text());
    } else {
      appends_.fetch_add(1, std::memory_order_relaxed);
    }
    job.done(std::move(result));
  }
  std::erase_if(jobs, [&](CommitJob& job) {
    // Owner rows and correction marks need the script (an entry's extra fields).
    if (job.owners.empty() && job.corrections.empty()) return false;
    bool ok = false;
    cluster::StreamId last;
    if (auto keys = cluster::MakeSceneKeys(config_.key_prefix, job.scene); keys.has_value()) {
      const auto pieces = SplitChunk(job.dcl, config_.max_entry_bytes);
      auto id = AppendWithOwners(append_connection_, *keys, config_.node_id, pieces, job.owners,
                                 job.corrections);
      ok = id.has_value();
      if (ok) {
        last = *id;
      } else {
        Log("append to " + job.scene + " failed: " + id.error().detail);
      }
    }
    if (ok) {
      appends_.fetch_add(1, std::memory_order_relaxed);
      std::lock_guard lock(mu_);
      if (auto it = scenes_.find(job.scene); it != scenes_.end()) it->second->LogAppended(last);
    } else {
      append_failures_.fetch_add(1, std::memory_order_relaxed);
    }
    job.done(ok);
    return true;
  });
}

// ---- The read loop's owner re-read after a snapshot reload (cluster_node.h) ----

Result<void> ClusterNode::OnSnapshot(std::string_view name,
                                     const cluster::SceneSnapshot& snapshot) {
  // Authority on: the owner rows of the trimmed entries are in no entry any more. The owner
  // hash (the fold of every row of the stream, read now: at least as new as the snapshot; the
  // rows of the entries after it come again with them) replaces the scene's table after the
  // merge (docs/AUTHORITY.md "Cluster"), on this thread's own connection. Reserved first, so
  // that the hash is posted as soon as it is read.
  Reserve(snapshot.data.size());
  std::optional<OwnerRows> owners;
  if (authority_) {
    auto keys = cluster::MakeSceneKeys(config_.key_prefix, name);
    auto read =
        keys.has_value() ? ReadOwners(owners_connection_, *keys) : Result<OwnerRows>(keys.error());
    if (!read.has_value()) {
      Consumed(snapshot.data.size());  // nothing posted
      owner_reread_failures_.fetch_add(1, std::memory_order_relaxed);
      Log("scene " + std::string(name) + ": re-reading the owners after a trim failed: " +
          read.error().detail + " (" + owners_connection_.last_error_text() +
          "); the snapshot is not merged yet and the owner table stays as it is: the read "
          "loop retries both after the scene's backoff");
      return read.error();
    }
    owner_rereads_.fetch_add(1, std::memory_order_relaxed);
    owners = std::move(*read);
  }
  // Decoded once, outside the lock (ParseSnapshotFields checked it: a failure is not
  // expected; it is logged and the scene stays as it was).
  auto decoded = cluster::DecodeChunk(snapshot.data, config_.decode);
  if (!decoded.has_value()) {
    Log("scene " + std::string(name) + ": snapshot does not decode: " + decoded.error().detail);
  }
  {
    std::lock_guard lock(mu_);
    auto it = scenes_.find(name);
    if (it != scenes_.end() && decoded.has_value()) {
      Log("scene " + std::string(name) +
          ": entries trimmed before this node read them; merging the snapshot" +
          (owners ? " and the owner hash (" + std::to_string(owners->size()) + " rows)" : ""));
      std::vector<cluster::DecodedChunk> chunks;
      chunks.push_back(std::move(decoded).value());
      it->second->LogEntries(std::move(chunks), cluster::StreamId{}, snapshot.data.size(), {}, {});
      if (owners) it->second->LogOwners(std::move(*owners));
      return {};
    }
    posted_bytes_ -= std::min(posted_bytes_, snapshot.data.size());
    if (it == scenes_.end()) reader_->RemoveScene(name, /*wake=*/false);
  }
  posted_cv_.notify_all();
  return {};
}

}  // namespace scenecrdt::server
