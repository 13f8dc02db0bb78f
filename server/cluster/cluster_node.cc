// SPDX-License-Identifier: Apache-2.0
// Owns the cluster node's threads: group appends, the read loop's delivery to scene strands,
// scene loads and periodic compaction, and the node's metrics.
#include "scenecrdt/server/cluster/cluster_node.h"

#include <algorithm>
#include <chrono>
#include <cstdio>

#include "scenecrdt/protocol/crdt_codec.h"
#include "scenecrdt/server/cluster/cluster_owners.h"
#include "scenecrdt/server/observability/prometheus_text.h"

namespace scenecrdt::server {

namespace {

constexpr std::array<double, 10> kBuckets = {0.0005, 0.001, 0.002, 0.005, 0.01,
                                             0.02,   0.05,  0.1,   0.5,   2.0};

int64_t WallMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

}  // namespace

// `dcl` cut at message boundaries into pieces of at most `max` bytes (a message bigger than
// `max` stays alone; Append then refuses it and the flush fails, logged).
std::vector<std::span<const uint8_t>> SplitChunk(std::span<const uint8_t> dcl, std::size_t max) {
  std::vector<std::span<const uint8_t>> out;
  if (dcl.size() <= max) {
    out.push_back(dcl);
    return out;
  }
  std::size_t start = 0;
  std::size_t pos = 0;
  (void)protocol::DecodeStream(dcl, {}, [&](const protocol::CrdtMessage& m) {
    const std::size_t size = protocol::EncodedSize(m);
    if (pos + size - start > max && pos > start) {
      out.push_back(dcl.subspan(start, pos - start));
      start = pos;
    }
    pos += size;
  });
  out.push_back(dcl.subspan(start));
  return out;
}

Result<std::unique_ptr<ClusterNode>> ClusterNode::Open(const ServerConfig& config, Metrics& metrics,
                                                       cluster::LogSink log) {
  auto endpoint = cluster::ParseRedisUrl(config.redis_url, config.redis_password);
  if (!endpoint.has_value()) return endpoint.error();
  cluster::RedisOptions redis;
  redis.endpoint = endpoint.value();
  redis.client_name = "scenecrdt-node";
  redis.log = std::move(log);
  std::unique_ptr<ClusterNode> node(new ClusterNode(config, redis, metrics));
  if (auto v = cluster::ValidateClusterConfig(node->config_); !v.has_value()) return v.error();
  // Fail fast at start: a wrong URL or password is a configuration error, not an outage.
  auto pong = node->control_connection_.Command({"PING"});
  if (!pong.has_value()) {
    const std::string url = cluster::FormatRedisUrl(redis.endpoint, false);
    const std::string text = node->control_connection_.last_error_text();
    if (pong.error().code == ErrorCode::kUnauthorized) {
      // NOAUTH / WRONGPASS: Redis's credentials, nothing to do with the server's own --auth.
      node->Log("Redis at " + url + " refused the credentials (" + text +
                "): check the password (and user) in the --redis URL or "
                "--redis-password-file against the Redis server's requirepass or ACL user");
      return MakeError(ErrorCode::kInvalidArgument,
                       "Redis refused the password: check the password in the --redis URL or "
                       "--redis-password-file against the Redis server's requirepass");
    }
    if (text.find("without any password configured") != std::string::npos) {
      node->Log("Redis at " + url + " has no password but one was given (" + text + ")");
      return MakeError(ErrorCode::kInvalidArgument,
                       "Redis has no password (requirepass) but one was given: remove it from "
                       "the --redis URL / --redis-password-file or set requirepass in Redis");
    }
    node->Log("Redis at " + url + " does not answer: " + text);
    return MakeError(pong.error().code,
                     "Redis does not answer: start redis-server or fix --redis / "
                     "--redis-password-file");
  }
  return node;
}

namespace {

cluster::RedisOptions ProbeOptions(cluster::RedisOptions redis) {
  redis.connect_timeout_ms = std::min(redis.connect_timeout_ms, ClusterNode::kProbeTimeoutMs);
  redis.command_timeout_ms = std::min(redis.command_timeout_ms, ClusterNode::kProbeTimeoutMs);
  return redis;
}

}  // namespace

ClusterNode::ClusterNode(const ServerConfig& server, cluster::RedisOptions redis, Metrics& metrics)
    : redis_(std::move(redis)),
      config_([] {
        cluster::ClusterConfig c;
        c.node_id = cluster::GenerateNodeId();
        return c;
      }()),
      compact_interval_ms_(server.compact_interval_ms),
      authority_(server.authority != AuthorityMode::kOpen),
      metrics_(metrics),
      append_connection_(redis_),
      append_log_(append_connection_, config_),
      control_connection_(redis_),
      control_log_(control_connection_, config_),
      compactor_(control_connection_, config_,
                 [&] {
                   cluster::CompactionOptions o;
                   o.retain_ms = server.compact_retain_ms;
                   return o;
                 }()),
      probe_connection_(ProbeOptions(redis_)),
      owners_connection_(redis_),
      scene_labels_(server.access.auth_file.empty() && server.access.jwt_secret_files.empty() &&
                    server.access.jwt_public_keys.empty()) {
  cluster::ReaderOptions reader;
  reader.skip_own = false;     // own entries' IDs move the resume marks (ClusterSceneSync)
  reader.keep_decoded = true;  // the read loop's one decode; the scene merges its messages
  reader_ = std::make_unique<cluster::StreamReader>(redis_, config_, reader, *this);
}

ClusterNode::~ClusterNode() { Stop(); }

std::string ClusterNode::redis_url_for_logs() const {
  return cluster::FormatRedisUrl(redis_.endpoint, false);
}

void ClusterNode::Log(const std::string& line) const { control_connection_.Log(line); }

void ClusterNode::Start() {
  std::lock_guard lock(mu_);
  if (started_) return;
  started_ = true;
  append_thread_ = std::thread([this] { AppendLoop(); });
  control_thread_ = std::thread([this] { ControlLoop(); });
  reader_->Start();
}

void ClusterNode::Stop() {
  std::deque<CommitJob> left;
  std::deque<ClaimJob> left_claims;
  {
    std::lock_guard lock(mu_);
    if (stop_) return;
    stop_ = true;
    left.swap(jobs_);
    left_claims.swap(claims_);
  }
  for (ClaimJob& j : left_claims) j.done(ClaimResult{});
  append_cv_.notify_all();
  control_cv_.notify_all();
  posted_cv_.notify_all();
  reader_->Stop();
  if (append_thread_.joinable()) append_thread_.join();
  if (control_thread_.joinable()) control_thread_.join();
  for (CommitJob& j : left) j.done(false);
}

void ClusterNode::Follow(LoggedScene& scene) {
  {
    std::lock_guard lock(mu_);
    scenes_.insert_or_assign(scene.name(), &scene);
  }
  RequestLoad(scene);
}

void ClusterNode::Unfollow(LoggedScene& scene) {
  std::lock_guard lock(mu_);
  auto it = scenes_.find(scene.name());
  if (it == scenes_.end() || it->second != &scene) return;
  scenes_.erase(it);
  read_lag_ms_.erase(scene.name());
  stream_length_.erase(scene.name());
  // Under mu_, so it is ordered with a load's AddScene (Load); no wake: a removed scene only
  // costs its place in the XREAD until the next round.
  reader_->RemoveScene(scene.name(), /*wake=*/false);
}

Result<bool> ClusterNode::SceneStored(std::string_view scene, std::string* why) {
  auto keys = cluster::MakeSceneKeys(config_.key_prefix, scene);
  if (!keys.has_value()) return false;  // no key can hold it
  const std::vector<cluster::RedisArgs> commands = {{"EXISTS", keys->snapshot},
                                                    {"XLEN", keys->log}};
  std::lock_guard lock(probe_mu_);
  auto replies = probe_connection_.Pipeline(commands);
  if (!replies.has_value()) {
    if (why) *why = "Redis: " + probe_connection_.last_error_text();
    return replies.error();
  }
  for (const cluster::RedisReply& r : *replies) {
    if (r.type != cluster::RedisReply::Type::kInteger) {
      if (why) *why = "Redis: " + (r.is_error() ? r.str : std::string("unexpected reply"));
      return r.is_error() ? cluster::ErrorFromRedisError(r.str)
                          : MakeError(ErrorCode::kIo, "redis: unexpected reply");
    }
  }
  return (*replies)[0].integer > 0 || (*replies)[1].integer > 0;
}

void ClusterNode::RequestLoad(LoggedScene& scene) {
  {
    std::lock_guard lock(mu_);
    loads_.push_back(&scene);
  }
  control_cv_.notify_all();
}

void ClusterNode::Submit(CommitJob job) {
  {
    std::lock_guard lock(mu_);
    if (!stop_) {
      jobs_.push_back(std::move(job));
      job.done = nullptr;
    }
  }
  if (job.done) {
    job.done(false);  // stopping: nothing is appended any more
    return;
  }
  append_cv_.notify_one();
}

void ClusterNode::AppendLoop() {
  for (;;) {
    std::vector<CommitJob> jobs;
    std::vector<ClaimJob> claims;
    {
      std::unique_lock lock(mu_);
      append_cv_.wait(lock, [&] { return stop_ || !jobs_.empty() || !claims_.empty(); });
      if (stop_) return;
      // Every flush ready now goes into one batch: one round trip, fsynced together.
      while (!jobs_.empty()) {
        jobs.push_back(std::move(jobs_.front()));
        jobs_.pop_front();
      }
      claims.assign(std::make_move_iterator(claims_.begin()),
                    std::make_move_iterator(claims_.end()));
      claims_.clear();
    }
    // Authority on: claims and flushes with owner rows go through their scripts first.
    if (authority_) AppendOwned(jobs, claims);
    std::vector<cluster::SceneLog::SceneChunk> chunks;
    std::vector<std::size_t> last_piece(jobs.size());
    for (std::size_t i = 0; i < jobs.size(); ++i) {
      for (auto piece : SplitChunk(jobs[i].dcl, config_.max_entry_bytes)) {
        if (!piece.empty()) chunks.push_back({jobs[i].scene, piece});
      }
      last_piece[i] = chunks.size();  // one past this job's last piece
    }
    const auto start = std::chrono::steady_clock::now();
    auto results = chunks.empty() ? Result<std::vector<Result<cluster::StreamId>>>(
                                        std::vector<Result<cluster::StreamId>>{})
                                  : append_log_.AppendBatch(chunks);
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    ObserveAppend(seconds);
    // The server's generic commit series count Redis appends in cluster mode.
    if (results.has_value()) {
      metrics_.ObserveCommit(seconds, chunks.size());
    } else {
      Metrics::Add(metrics_.commit_failures);
    }
    std::size_t first = 0;
    for (std::size_t i = 0; i < jobs.size(); ++i) {
      bool ok = results.has_value();
      cluster::StreamId last;
      for (std::size_t k = first; ok && k < last_piece[i]; ++k) {
        const Result<cluster::StreamId>& r = results.value()[k];
        if (!r.has_value()) {
          ok = false;
          Log("append to " + jobs[i].scene + " failed: " + r.error().detail);
        } else {
          last = r.value();
          appends_.fetch_add(1, std::memory_order_relaxed);
        }
      }
      first = last_piece[i];
      if (ok && !last.is_zero()) {
        std::lock_guard lock(mu_);  // posts only; a hosted scene is never destroyed under mu_
        if (auto it = scenes_.find(jobs[i].scene); it != scenes_.end()) {
          it->second->LogAppended(last);
        }
      }
      if (!ok) append_failures_.fetch_add(1, std::memory_order_relaxed);
      jobs[i].done(ok);  // posts to the scene strand after LogAppended: ordered
    }
  }
}

void ClusterNode::ObserveAppend(double seconds) {
  std::size_t b = 0;
  while (b < kBuckets.size() && seconds > kBuckets[b]) ++b;
  append_buckets_[b].fetch_add(1, std::memory_order_relaxed);
  append_micros_.fetch_add(static_cast<uint64_t>(seconds * 1e6), std::memory_order_relaxed);
  append_batches_.fetch_add(1, std::memory_order_relaxed);
}

void ClusterNode::ControlLoop() {
  auto next_compaction = std::chrono::steady_clock::now();
  for (;;) {
    std::vector<LoggedScene*> loads;
    {
      std::unique_lock lock(mu_);
      control_cv_.wait_until(lock, next_compaction, [&] { return stop_ || !loads_.empty(); });
      if (stop_) return;
      loads.assign(loads_.begin(), loads_.end());
      loads_.clear();
    }
    for (LoggedScene* scene : loads) Load(scene);
    if (compact_interval_ms_ > 0 && std::chrono::steady_clock::now() >= next_compaction) {
      CompactAll();
      next_compaction =
          std::chrono::steady_clock::now() + std::chrono::milliseconds(compact_interval_ms_);
    } else if (compact_interval_ms_ == 0) {
      next_compaction = std::chrono::steady_clock::now() + std::chrono::hours(1);
    }
  }
}

void ClusterNode::Load(LoggedScene* scene) {
  // `scene` lives until its LogLoaded / LogLoadFailed ran (a scene waiting for its load
  // is never evicted), not after: its name is kept.
  const std::string name = scene->name();
  auto loaded = control_log_.LoadScene(name);
  if (!loaded.has_value()) {
    load_failures_.fetch_add(1, std::memory_order_relaxed);
    Log("load of scene " + name + " failed: " + loaded.error().detail + " (" +
        control_connection_.last_error_text() + ")");
    scene->LogLoadFailed(loaded.error().detail);
    return;
  }
  std::vector<std::string> chunks;
  std::vector<cluster::StreamId> ids;
  chunks.reserve(loaded->tail.size() + 1);
  ids.reserve(loaded->tail.size() + 1);
  // Without a snapshot the tail is the whole history: the empty state before it (ID 0-0) is a
  // resume point too (clients that joined the scene while its stream was empty).
  chunks.push_back(loaded->snapshot.exists ? std::move(loaded->snapshot.data) : std::string());
  ids.push_back(loaded->snapshot.exists ? loaded->snapshot.covers : cluster::StreamId{});
  for (cluster::StreamEntry& e : loaded->tail) {
    chunks.push_back(std::move(e.chunk));
    ids.push_back(e.id);
  }
  const cluster::StreamId last = loaded->last_id;
  OwnerRows owners;
  if (authority_) {
    // Read after the state: at least as new; the rows of entries after `last` come again.
    auto read = ReadSceneOwners(name);
    if (!read.has_value()) {
      load_failures_.fetch_add(1, std::memory_order_relaxed);
      Log("load of the owners of scene " + name + " failed: " + read.error().detail);
      scene->LogLoadFailed(read.error().detail);
      return;
    }
    owners = std::move(*read);
  }
  // Posted before the reader follows the scene: its entries merge after the loaded state.
  scene->LogLoaded(std::move(chunks), std::move(ids), last, std::move(owners));
  // Followed only while still hosted: an eviction may have come since (Unfollow, under mu_).
  Result<void> followed;
  bool added = false;
  {
    std::lock_guard lock(mu_);
    if (auto it = scenes_.find(name); it != scenes_.end() && it->second == scene) {
      followed = reader_->AddScene(name, last, /*wake=*/false);
      added = followed.has_value();
    }
  }
  if (added) reader_->Wake();
  if (!followed.has_value()) Log("cannot follow scene " + name + ": " + followed.error().detail);
  loads_done_.fetch_add(1, std::memory_order_relaxed);
}

void ClusterNode::CompactAll() {
  std::vector<std::string> names;
  {
    std::lock_guard lock(mu_);
    for (const auto& [name, scene] : scenes_) names.push_back(name);
  }
  for (const std::string& name : names) {
    auto r = compactor_.CompactScene(name);
    if (!r.has_value()) {
      compaction_failures_.fetch_add(1, std::memory_order_relaxed);
      continue;  // logged by the compactor's connection
    }
    if (r->outcome == cluster::CompactionResult::Outcome::kCompacted) {
      compactions_.fetch_add(1, std::memory_order_relaxed);
      std::lock_guard lock(mu_);
      if (scenes_.count(name) != 0) stream_length_[name] = r->stream_length;  // still hosted
    }
  }
}

void ClusterNode::Reserve(std::size_t bytes) {
  std::unique_lock lock(mu_);
  posted_cv_.wait(lock, [&] {
    return stop_ || posted_bytes_ == 0 || posted_bytes_ + bytes <= kMaxPostedBytes;
  });
  posted_bytes_ += bytes;
}

void ClusterNode::HoldEntriesForTest(bool hold) {
  {
    std::lock_guard lock(mu_);
    hold_entries_ = hold;
  }
  posted_cv_.notify_all();
}

bool ClusterNode::EntriesHeldForTest() const {
  std::lock_guard lock(mu_);
  return entries_held_;
}

void ClusterNode::Consumed(std::size_t bytes) {
  {
    std::lock_guard lock(mu_);
    posted_bytes_ -= std::min(posted_bytes_, bytes);
  }
  posted_cv_.notify_all();
}

void ClusterNode::OnEntries(std::string_view name, std::span<cluster::StreamEntry> entries) {
  if (entries.empty()) return;
  std::vector<cluster::DecodedChunk> chunks;
  std::size_t bytes = 0;
  OwnerRows owners;
  std::vector<CorrectionMark> corrections;
  for (cluster::StreamEntry& e : entries) {
    if (!e.owners.empty() && authority_ && !DecodeOwnerRows(e.owners, owners)) {
      Log("scene " + std::string(name) + ": entry " + e.id.ToString() + " has bad owner rows");
    }
    // Merged before it was appended (kOwn: its chunk was not even decoded).
    if (e.kind != cluster::StreamEntry::Kind::kData) continue;
    if (!e.corrections.empty() && authority_ &&
        !DecodeCorrectionMarks(e.corrections, static_cast<uint32_t>(chunks.size()), corrections)) {
      // Merged all the same: only its corrections are not recognised as such.
      Metrics::Add(metrics_.authority_bad_correction_marks);
      Log("scene " + std::string(name) + ": entry " + e.id.ToString() +
          " has bad correction marks");
    }
    bytes += e.decoded.size();
    chunks.push_back(std::move(e.decoded));
  }
  {
    // Test hook (HoldEntriesForTest): the entries wait here, the read loop with them.
    std::unique_lock lock(mu_);
    entries_held_ = hold_entries_;
    posted_cv_.wait(lock, [&] { return stop_ || !hold_entries_; });
    entries_held_ = false;
  }
  Reserve(bytes);
  {
    std::lock_guard lock(mu_);
    if (auto it = scenes_.find(name); it != scenes_.end()) {
      entries_applied_.fetch_add(chunks.size(), std::memory_order_relaxed);
      read_lag_ms_[std::string(name)] = WallMs() - static_cast<int64_t>(entries.back().id.ms);
      // Posted under mu_: after Unfollow (under mu_) nothing reaches the scene any more.
      it->second->LogEntries(std::move(chunks), entries.back().id, bytes, std::move(owners),
                             std::move(corrections));
      return;
    }
    // Not hosted (evicted while this round read it): stop following it.
    posted_bytes_ -= std::min(posted_bytes_, bytes);
    reader_->RemoveScene(name, /*wake=*/false);
  }
  posted_cv_.notify_all();
}

void ClusterNode::OnFault(std::string_view name, const cluster::SceneFault& fault) {
  Log("scene " + std::string(name) +
      (fault.stream_failed ? ": stream unreadable: "
                           : ": bad entry " + fault.id.ToString() + ": ") +
      fault.error.detail);
}

ClusterCounters ClusterNode::counters() const {
  ClusterCounters c;
  c.appends = appends_.load();
  c.append_failures = append_failures_.load();
  c.entries_applied = entries_applied_.load();
  c.loads = loads_done_.load();
  c.load_failures = load_failures_.load();
  c.compactions = compactions_.load();
  c.owner_rereads = owner_rereads_.load();
  c.owner_reread_failures = owner_reread_failures_.load();
  return c;
}

void ClusterNode::RenderPrometheus(PrometheusText& out) const {
  const auto metric = [&](const char* name, const char* type, const char* help, uint64_t v) {
    if (std::string_view(type) == "counter") {
      out.Counter(name, help, static_cast<double>(v));
    } else {
      out.Gauge(name, help, static_cast<double>(v));
    }
  };
  const cluster::RedisCounters a = append_connection_.counters();
  const cluster::RedisCounters c = control_connection_.counters();
  const cluster::RedisCounters r = reader_->redis_counters();
  const cluster::RedisCounters p = probe_connection_.counters();
  const cluster::RedisCounters o = owners_connection_.counters();
  const cluster::ReaderCounters rc = reader_->counters();
  metric("scenecrdt_cluster_appends_total", "counter", "entries appended to scene streams",
         appends_.load());
  metric("scenecrdt_cluster_append_failures_total", "counter",
         "flushes not appended (held, not acknowledged)", append_failures_.load());
  metric("scenecrdt_cluster_entries_applied_total", "counter",
         "other nodes' entries merged into local scenes", entries_applied_.load());
  metric("scenecrdt_cluster_bad_entries_total", "counter", "unusable entries skipped",
         rc.bad_entries);
  metric("scenecrdt_cluster_snapshot_reloads_total", "counter",
         "snapshots merged after a trim the reader missed", rc.snapshot_reloads);
  metric("scenecrdt_cluster_owner_rereads_total", "counter",
         "owner hashes re-read after a snapshot reload (authority on)", owner_rereads_.load());
  metric("scenecrdt_cluster_owner_reread_failures_total", "counter",
         "owner hash re-reads that failed (the reload is retried after a backoff)",
         owner_reread_failures_.load());
  metric("scenecrdt_cluster_scene_loads_total", "counter", "scenes loaded from Redis",
         loads_done_.load());
  metric("scenecrdt_cluster_scene_load_failures_total", "counter", "scene loads that failed",
         load_failures_.load());
  metric("scenecrdt_cluster_compactions_total", "counter", "compactions this node performed",
         compactions_.load());
  metric("scenecrdt_cluster_compaction_failures_total", "counter", "compactions that failed",
         compaction_failures_.load());
  metric("scenecrdt_cluster_redis_errors_total", "counter",
         "Redis failures (connects, lost connections, timeouts, error replies)",
         a.errors + c.errors + r.errors + p.errors + o.errors);
  metric("scenecrdt_cluster_redis_reconnects_total", "counter", "Redis reconnects",
         a.reconnects + c.reconnects + r.reconnects + p.reconnects + o.reconnects);
  metric("scenecrdt_cluster_redis_stale_total", "counter",
         "connections found closed by Redis on reuse (a restart), re-established",
         a.stale + c.stale + r.stale + p.stale + o.stale);
  metric("scenecrdt_cluster_redis_retries_total", "counter",
         "commands sent again after Redis closed their reused connection",
         a.retries + c.retries + r.retries + p.retries + o.retries);
  metric("scenecrdt_cluster_read_bytes_max", "gauge",
         "the most RESP bytes one read of the read loop took (bounded by its round budget)",
         rc.largest_read_bytes);
  metric("scenecrdt_cluster_read_overflows_total", "counter",
         "reads stopped at the round budget (followed by sized rounds)", rc.round_overflows);
  metric("scenecrdt_cluster_oversized_entries_total", "counter",
         "entries larger than the round budget, skipped", rc.oversized_entries);
  std::array<uint64_t, kAppendBuckets + 1> counts{};
  for (std::size_t i = 0; i < counts.size(); ++i) {
    counts[i] = append_buckets_[i].load(std::memory_order_relaxed);
  }
  out.Histogram("scenecrdt_cluster_append_seconds", "AppendBatch round trips", kBuckets, counts,
                static_cast<double>(append_micros_.load()) / 1e6);
  metric("scenecrdt_cluster_streams_read", "gauge",
         "scene streams in the read loop (published after each round)", reader_->Cursors().size());
  std::lock_guard lock(mu_);
  int64_t lag_max = 0;
  for (const auto& [scene, lag] : read_lag_ms_) lag_max = std::max(lag_max, lag);
  uint64_t length_max = 0;
  for (const auto& [scene, length] : stream_length_) length_max = std::max(length_max, length);
  metric("scenecrdt_cluster_scenes_followed", "gauge", "scenes this node hosts and follows",
         scenes_.size());
  metric("scenecrdt_cluster_read_lag_ms_max", "gauge",
         "the largest read_lag_ms over the scenes (entry ID time to delivery)",
         static_cast<uint64_t>(std::max<int64_t>(lag_max, 0)));
  metric("scenecrdt_cluster_stream_length_max", "gauge",
         "the largest stream_length over the scenes this node compacted", length_max);
  // Per-scene series name scenes: shown only where every caller may list every scene (open
  // mode; /metrics carries no token). At most one series per hosted scene, so at most
  // --max-scenes-in-memory of each (docs/SERVER.md "Metric labels and cardinality").
  if (!scene_labels_) return;
  out.Begin("scenecrdt_cluster_read_lag_ms", "entry ID time to delivery, last read per scene",
            PrometheusText::Type::kGauge);
  for (const auto& [scene, lag] : read_lag_ms_) {
    out.Sample(static_cast<double>(lag), {{"scene", scene}});
  }
  out.Begin("scenecrdt_cluster_stream_length", "entries after this node's last compaction",
            PrometheusText::Type::kGauge);
  for (const auto& [scene, length] : stream_length_) {
    out.Sample(static_cast<double>(length), {{"scene", scene}});
  }
}

}  // namespace scenecrdt::server
