// SPDX-License-Identifier: Apache-2.0
// Owns the read loop. Failure isolation works in two steps: the shared XREAD covers only the
// healthy scenes; if Redis refuses it as a whole (one scene's key has the wrong type, and
// Redis fails the whole command for it), the same round re-reads every healthy scene with its
// own non-blocking XREAD in one pipeline, which tells the failing scenes from the others. The
// failing ones wait out a per-scene backoff and are retried alone; the others never wait.
// Every read is bounded by max_round_bytes (the connection stops past it); a read that went
// over switches the loop to sized rounds (stream_reader_sized.cc) until every scene caught up.
#include "scenecrdt/cluster/stream_reader.h"

#include <algorithm>
#include <chrono>
#include <utility>

namespace scenecrdt::cluster {
namespace {

RedisOptions ExtendTimeout(RedisOptions options, uint32_t block_ms) {
  options.command_timeout_ms += block_ms;
  return options;
}

}  // namespace

StreamReader::StreamReader(RedisOptions redis, ClusterConfig config, ReaderOptions options,
                           Sink& sink)
    : config_(std::move(config)),
      options_(options),
      sink_(sink),
      connection_(ExtendTimeout(redis, options.block_ms)),
      log_(connection_, config_),
      control_(redis) {
  if (options_.count == 0) options_.count = 1;
  if (options_.retry_initial_ms == 0) options_.retry_initial_ms = 1;
  options_.retry_max_ms = std::max(options_.retry_max_ms, options_.retry_initial_ms);
}

StreamReader::~StreamReader() { Stop(); }

int64_t StreamReader::Now() const {
  if (connection_.options().now_ms) return connection_.options().now_ms();
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

Result<void> StreamReader::AddScene(std::string_view scene, StreamId cursor, bool wake) {
  auto keys = MakeSceneKeys(config_.key_prefix, scene);
  if (!keys.has_value()) return keys.error();
  {
    std::lock_guard lock(mutex_);
    pending_.push_back(PendingChange{std::string(scene), cursor, false});
  }
  wake_.notify_all();
  if (wake) Wake();
  return {};
}

void StreamReader::RemoveScene(std::string_view scene, bool wake) {
  {
    std::lock_guard lock(mutex_);
    pending_.push_back(PendingChange{std::string(scene), StreamId{}, true});
  }
  wake_.notify_all();
  if (wake) Wake();
}

void StreamReader::ApplyPending() {
  std::vector<PendingChange> changes;
  {
    std::lock_guard lock(mutex_);
    changes.swap(pending_);
  }
  for (PendingChange& change : changes) {
    if (change.remove) {
      scenes_.erase(change.scene);
      continue;
    }
    auto keys = MakeSceneKeys(config_.key_prefix, change.scene);
    if (!keys.has_value()) continue;  // AddScene refused it already
    SceneState state;
    state.scene = change.scene;
    state.log_key = std::move(keys->log);
    state.cursor = change.cursor;
    scenes_.insert_or_assign(change.scene, std::move(state));
  }
}

Result<void> StreamReader::EnsureClientId() {
  if (auto c = connection_.Connect(); !c.has_value()) return c.error();
  if (client_id_epoch_ == connection_.connection_epoch()) return {};
  auto id = connection_.Command({"CLIENT", "ID"});
  if (!id.has_value() && id.error().code == ErrorCode::kUnavailable) return id.error();
  // Without CLIENT ID (an ACL may forbid it) the loop still works; wakes wait for block_ms.
  client_id_.store(id.has_value() && id->type == RedisReply::Type::kInteger ? id->integer : -1);
  client_id_epoch_ = connection_.connection_epoch();
  return {};
}

void StreamReader::Wake() {
  if (!blocked_.load()) return;
  const int64_t id = client_id_.load();
  if (id < 0) return;
  std::lock_guard lock(control_mutex_);
  // Best effort: if it fails (or lands before the XREAD blocks) the read ends after block_ms.
  auto unblocked = control_.Command({"CLIENT", "UNBLOCK", std::to_string(id)});
  (void)unblocked;
}

RedisArgs StreamReader::ReadArgs(std::span<SceneState* const> scenes, uint32_t block_ms,
                                 std::vector<std::string>& storage) const {
  storage.clear();
  storage.reserve(scenes.size() + 2);
  storage.push_back(std::to_string(options_.count));
  storage.push_back(std::to_string(block_ms));
  RedisArgs args{"XREAD", "COUNT", storage[0]};
  if (block_ms > 0) {
    args.push_back("BLOCK");
    args.push_back(storage[1]);
  }
  args.push_back("STREAMS");
  for (const SceneState* s : scenes) args.push_back(s->log_key);
  for (const SceneState* s : scenes) {
    storage.push_back(s->cursor.ToString());
    args.push_back(storage.back());
  }
  return args;
}

void StreamReader::MarkFailed(SceneState& state, const Error& error) {
  stream_failures_.fetch_add(1, std::memory_order_relaxed);
  state.retry_delay_ms = state.failing ? std::min(state.retry_delay_ms * 2, options_.retry_max_ms)
                                       : options_.retry_initial_ms;
  state.failing = true;
  state.retry_at_ms = Now() + state.retry_delay_ms;
  connection_.Log("scene " + state.scene + ": stream read failed (" + ErrorCodeName(error.code) +
                  ": " + error.detail + "; " + connection_.last_error_text() + "); retry in " +
                  std::to_string(state.retry_delay_ms) + " ms, other scenes unaffected");
  sink_.OnFault(state.scene, SceneFault{StreamId{}, error, true});
}

void StreamReader::MarkHealthy(SceneState& state) {
  if (state.failing) connection_.Log("scene " + state.scene + ": stream readable again");
  state.failing = false;
  state.retry_delay_ms = 0;
}

Result<void> StreamReader::ReadEach(std::span<SceneState* const> scenes, ReadRound& round) {
  std::vector<std::vector<std::string>> storage(scenes.size());
  std::vector<RedisArgs> commands;
  commands.reserve(scenes.size());
  for (std::size_t i = 0; i < scenes.size(); ++i) {
    commands.push_back(ReadArgs(std::span<SceneState* const>(&scenes[i], 1), 0, storage[i]));
  }
  auto replies = connection_.Pipeline(commands, options_.max_round_bytes);
  NoteReadBytes();
  if (!replies.has_value()) {
    if (replies.error().code != ErrorCode::kPayloadTooLarge) return replies.error();
    round_overflows_.fetch_add(1, std::memory_order_relaxed);
    bool caught_up = false;
    return ReadSized(scenes, round, caught_up);
  }
  for (std::size_t i = 0; i < scenes.size(); ++i) {
    SceneState& state = *scenes[i];
    RedisReply& reply = (*replies)[i];
    if (reply.is_error()) {
      MarkFailed(state, ErrorFromRedisError(reply.str));
      continue;
    }
    auto batches = ParseXreadReply(std::move(reply), entry_options());
    if (!batches.has_value()) {
      MarkFailed(state, batches.error());
      continue;
    }
    MarkHealthy(state);
    ++round.scenes;
    for (StreamBatch& batch : *batches) {
      if (batch.key == state.log_key) {
        const bool caught_up = batch.entries.size() < options_.count;
        HandleEntries(state, std::move(batch.entries), round, caught_up);
      }
    }
  }
  return {};
}

void StreamReader::NoteReadBytes() {
  const uint64_t bytes = connection_.last_reply_bytes();
  uint64_t seen = largest_read_bytes_.load(std::memory_order_relaxed);
  while (bytes > seen && !largest_read_bytes_.compare_exchange_weak(seen, bytes)) {
  }
}

void StreamReader::HandleEntries(SceneState& state, std::vector<StreamEntry>&& entries,
                                 ReadRound& round, bool caught_up) {
  if (entries.empty()) return;
  state.gaps.NoteRead(state.cursor, entries.front().id);
  std::size_t kept = 0;
  for (std::size_t i = 0; i < entries.size(); ++i) {
    StreamEntry& e = entries[i];
    state.cursor = e.id;
    switch (e.kind) {
      case StreamEntry::Kind::kOwn:
        if (options_.skip_own) {
          own_skipped_.fetch_add(1, std::memory_order_relaxed);
          break;
        }
        [[fallthrough]];
      case StreamEntry::Kind::kData:
        if (kept != i) entries[kept] = std::move(e);
        ++kept;
        break;
      case StreamEntry::Kind::kTrim:
        if (state.gaps.MissedByTrim(e.trimmed_through)) state.reload_pending = true;
        break;
      case StreamEntry::Kind::kBad:
      default:
        bad_entries_.fetch_add(1, std::memory_order_relaxed);
        connection_.Log("scene " + state.scene + ": skipped entry " + e.id.ToString() + " (" +
                        e.error.detail + ")");
        sink_.OnFault(state.scene, SceneFault{e.id, e.error, false});
        break;
    }
  }
  if (caught_up) state.gaps.NoteCaughtUp();
  if (kept > 0) {
    entries_.fetch_add(kept, std::memory_order_relaxed);
    round.entries += kept;
    sink_.OnEntries(state.scene, std::span<StreamEntry>(entries.data(), kept));
  }
}

Result<void> StreamReader::ReloadSnapshots() {
  for (auto& [name, state] : scenes_) {
    if (!state.reload_pending || state.failing || state.reload_at_ms > Now()) continue;
    auto snapshot = log_.ReadSnapshot(state.scene);
    if (!snapshot.has_value()) {
      if (snapshot.error().code == ErrorCode::kUnavailable) return snapshot.error();
      MarkFailed(state, snapshot.error());
      continue;
    }
    connection_.Log("scene " + state.scene + ": entries were trimmed before this node read " +
                    "them; merging the snapshot at " + snapshot->covers.ToString());
    if (auto taken = sink_.OnSnapshot(state.scene, *snapshot); !taken.has_value()) {
      // reload_pending stays: retried after the backoff.
      state.reload_delay_ms = state.reload_delay_ms == 0
                                  ? options_.retry_initial_ms
                                  : std::min(state.reload_delay_ms * 2, options_.retry_max_ms);
      state.reload_at_ms = Now() + state.reload_delay_ms;
      connection_.Log("scene " + state.scene + ": the snapshot was not taken (" +
                      ErrorCodeName(taken.error().code) + ": " + taken.error().detail +
                      "); retry in " + std::to_string(state.reload_delay_ms) + " ms");
      continue;
    }
    state.reload_delay_ms = 0;
    state.reload_at_ms = 0;
    snapshot_reloads_.fetch_add(1, std::memory_order_relaxed);
    state.reload_pending = false;
    state.gaps.Reset();
  }
  return {};
}

Result<ReadRound> StreamReader::RunOnce(uint32_t block_ms) {
  ApplyPending();
  ReadRound round;
  auto fail = [&](const Error& e) -> Result<ReadRound> {
    read_errors_.fetch_add(1, std::memory_order_relaxed);
    Publish();
    return e;
  };
  if (scenes_.empty()) {
    Publish();
    return round;
  }
  if (auto c = EnsureClientId(); !c.has_value()) return fail(c.error());
  rounds_.fetch_add(1, std::memory_order_relaxed);

  int64_t now = Now();
  std::vector<SceneState*> due, healthy;
  for (auto& [name, state] : scenes_) {
    if (!state.failing) {
      healthy.push_back(&state);
    } else if (state.retry_at_ms <= now) {
      due.push_back(&state);
    }
  }
  if (!due.empty()) {
    if (auto r = ReadEach(due, round); !r.has_value()) return fail(r.error());
  }
  if (auto r = ReloadSnapshots(); !r.has_value()) return fail(r.error());

  if (!healthy.empty() && sized_) {
    // A read went over max_round_bytes: sized rounds (no blocking) until every scene caught up.
    bool caught_up = false;
    if (auto r = ReadSized(healthy, round, caught_up); !r.has_value()) return fail(r.error());
    if (caught_up) {
      sized_ = false;
      connection_.Log("every scene caught up: back to the shared XREAD");
    }
    if (auto r = ReloadSnapshots(); !r.has_value()) return fail(r.error());
  } else if (!healthy.empty()) {
    // Block only when nothing is ready, and never past the next failing scene's retry.
    uint32_t block = round.entries > 0 ? 0 : block_ms;
    now = Now();
    for (const auto& [name, state] : scenes_) {
      if (state.failing && block > 0) {
        const int64_t until = std::max<int64_t>(state.retry_at_ms - now, 1);
        block = static_cast<uint32_t>(std::min<int64_t>(block, until));
      }
    }
    if (block > 0) {
      blocked_.store(true);
      std::lock_guard lock(mutex_);
      if (!pending_.empty() || stop_) block = 0;
    }
    if (block == 0) blocked_.store(false);
    std::vector<std::string> storage;
    const RedisArgs args = ReadArgs(healthy, block, storage);
    auto replies =
        connection_.Pipeline(std::span<const RedisArgs>(&args, 1), options_.max_round_bytes);
    blocked_.store(false);
    NoteReadBytes();
    if (!replies.has_value() && replies.error().code == ErrorCode::kPayloadTooLarge) {
      // More than the budget was new: nothing of it is kept; read what fits, scene by scene.
      round_overflows_.fetch_add(1, std::memory_order_relaxed);
      sized_ = true;
      connection_.Log("the shared XREAD went over " + std::to_string(options_.max_round_bytes) +
                      " bytes: reading in sized rounds until every scene caught up");
      bool caught_up = false;
      if (auto r = ReadSized(healthy, round, caught_up); !r.has_value()) return fail(r.error());
      if (auto r = ReloadSnapshots(); !r.has_value()) return fail(r.error());
    } else {
      if (!replies.has_value()) return fail(replies.error());
      RedisReply& reply = replies->front();
      std::string refusal = reply.is_error() ? reply.str : std::string();
      Result<std::vector<StreamBatch>> batches =
          reply.is_error() ? Result<std::vector<StreamBatch>>(ErrorFromRedisError(refusal))
                           : ParseXreadReply(std::move(reply), entry_options());
      if (!batches.has_value()) {
        // Redis refused the shared read as a whole: find the culprits scene by scene.
        const uint32_t failing_before = CountFailing();
        if (auto r = ReadEach(healthy, round); !r.has_value()) return fail(r.error());
        round.shared_read_refused = CountFailing() == failing_before;
        if (round.shared_read_refused && !shared_read_refused_) {
          connection_.Log("the shared XREAD is refused though each scene reads alone (" +
                          (refusal.empty() ? std::string(batches.error().detail) : refusal) +
                          "); reading scene by scene");
        }
      } else {
        round.scenes += static_cast<uint32_t>(healthy.size());
        for (StreamBatch& batch : *batches) {
          for (SceneState* state : healthy) {
            if (state->log_key == batch.key) {
              const bool caught_up = batch.entries.size() < options_.count;
              HandleEntries(*state, std::move(batch.entries), round, caught_up);
              break;
            }
          }
        }
      }
      if (auto r = ReloadSnapshots(); !r.has_value()) return fail(r.error());
    }
  }

  if (shared_read_refused_ && !round.shared_read_refused) {
    connection_.Log("the shared XREAD works again");
  }
  shared_read_refused_ = round.shared_read_refused;
  now = Now();
  for (const auto& [name, state] : scenes_) {
    if (!state.failing) continue;
    ++round.failing_scenes;
    const int64_t wait = std::max<int64_t>(state.retry_at_ms - now, 0);
    if (round.next_retry_in_ms < 0 || wait < round.next_retry_in_ms) round.next_retry_in_ms = wait;
  }
  Publish();
  return round;
}

uint32_t StreamReader::CountFailing() const {
  uint32_t failing = 0;
  for (const auto& [name, state] : scenes_) failing += state.failing ? 1 : 0;
  return failing;
}

void StreamReader::Publish() {
  std::vector<SceneCursor> cursors;
  cursors.reserve(scenes_.size());
  for (const auto& [name, state] : scenes_) {
    cursors.push_back(SceneCursor{state.scene, state.cursor, state.failing});
  }
  std::lock_guard lock(mutex_);
  published_ = std::move(cursors);
}

std::vector<StreamReader::SceneCursor> StreamReader::Cursors() const {
  std::lock_guard lock(mutex_);
  return published_;
}

ReaderCounters StreamReader::counters() const {
  ReaderCounters c;
  c.rounds = rounds_.load(std::memory_order_relaxed);
  c.entries = entries_.load(std::memory_order_relaxed);
  c.own_skipped = own_skipped_.load(std::memory_order_relaxed);
  c.bad_entries = bad_entries_.load(std::memory_order_relaxed);
  c.stream_failures = stream_failures_.load(std::memory_order_relaxed);
  c.snapshot_reloads = snapshot_reloads_.load(std::memory_order_relaxed);
  c.read_errors = read_errors_.load(std::memory_order_relaxed);
  c.round_overflows = round_overflows_.load(std::memory_order_relaxed);
  c.oversized_entries = oversized_entries_.load(std::memory_order_relaxed);
  c.largest_read_bytes = largest_read_bytes_.load(std::memory_order_relaxed);
  return c;
}

void StreamReader::Start() {
  std::lock_guard lock(mutex_);
  if (thread_.joinable()) return;
  stop_ = false;
  thread_ = std::thread([this] { Loop(); });
}

void StreamReader::Stop() {
  {
    std::lock_guard lock(mutex_);
    if (!thread_.joinable()) return;
    stop_ = true;
  }
  wake_.notify_all();
  Wake();
  thread_.join();
}

void StreamReader::Loop() {
  std::unique_lock lock(mutex_);
  while (!stop_) {
    if (scenes_.empty() && pending_.empty()) {
      wake_.wait(lock, [&] { return stop_ || !pending_.empty(); });
      continue;
    }
    lock.unlock();
    Result<ReadRound> round = RunOnce(options_.block_ms);
    int64_t wait_ms = 0;
    if (!round.has_value()) {
      // Redis unreachable: the connection's backoff paces the retries.
      wait_ms = std::max<int64_t>(connection_.retry_in_ms(), 1);
    } else if (round->scenes == 0 && round->next_retry_in_ms > 0) {
      wait_ms = round->next_retry_in_ms;  // every scene is failing: wait for the first retry
    } else if (round->shared_read_refused) {
      wait_ms = options_.retry_initial_ms;  // per-scene reads do not block: pace them
    } else if (sized_ && round->entries == 0) {
      wait_ms = options_.retry_initial_ms;  // sized rounds do not block either
    }
    lock.lock();
    if (wait_ms > 0) {
      wake_.wait_for(lock, std::chrono::milliseconds(wait_ms),
                     [&] { return stop_ || !pending_.empty(); });
    }
  }
}

}  // namespace scenecrdt::cluster
