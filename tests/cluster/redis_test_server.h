// SPDX-License-Identifier: Apache-2.0
// Owns the cluster tests' fixtures: a real redis-server child process (unix socket in a temp
// dir, AOF with appendfsync always, no RDB), readiness read from its log pipe (no polling), kill
// and restart from the same AOF; plus a fake monotonic clock and helpers that make DCL chunks
// with a writer's CrdtStore, so tests compare state hashes.
#pragma once

#include <sys/types.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "scenecrdt/cluster/redis_connection.h"
#include "scenecrdt/protocol/entity_id.h"
#include "scenecrdt/runtime/crdt_store.h"
#include "tests/wait_until.h"

namespace scenecrdt::testing {

class RedisTestServer {
 public:
  // Starts at once; started() tells whether it is ready. `extra_args` are appended
  // (e.g. {"--port", "6390", "--requirepass", "pw"}).
  explicit RedisTestServer(std::vector<std::string> extra_args = {});
  ~RedisTestServer();
  RedisTestServer(const RedisTestServer&) = delete;
  RedisTestServer& operator=(const RedisTestServer&) = delete;

  bool started() const { return pid_ > 0; }
  // Kills the process with `signal` and reaps it.
  void Kill(int signal);
  // Starts again on the same directory (the AOF is replayed) and socket; true when ready.
  bool Restart();

  const std::string& dir() const { return dir_; }
  const std::string& socket_path() const { return socket_path_; }
  std::string url() const { return "unix://" + socket_path_; }
  std::string log() const;

 private:
  bool Spawn();
  void Reap();

  std::vector<std::string> extra_args_;
  std::string dir_;
  std::string socket_path_;
  pid_t pid_ = -1;
  int log_fd_ = -1;
  std::thread drain_;
  mutable std::mutex log_mutex_;
  std::string log_;
};

// A monotonic clock the test advances by hand (RedisOptions::now_ms).
class FakeClock {
 public:
  int64_t now() const { return ms_.load(); }
  void Advance(int64_t ms) { ms_.fetch_add(ms); }
  cluster::MonotonicClock fn() {
    return [this] { return now(); };
  }

 private:
  std::atomic<int64_t> ms_{1'000'000};
};

// Collects log lines (thread-safe) so tests can check that failures are reported.
class LogCapture {
 public:
  cluster::LogSink sink() {
    return [this](std::string_view line) {
      std::lock_guard lock(mutex_);
      lines_.emplace_back(line);
    };
  }
  bool Contains(std::string_view text) const;
  std::vector<std::string> lines() const;

 private:
  mutable std::mutex mutex_;
  std::vector<std::string> lines_;
};

// Options for `url` with small timeouts and backoff, an optional fake clock and log capture.
cluster::RedisOptions TestRedisOptions(const std::string& url, FakeClock* clock = nullptr,
                                       LogCapture* log = nullptr);

// A chunk of Transform writes made by `writer` (a node's local replica): entity numbers
// `first..first+count-1` (version 0) at x = `x`.
std::vector<uint8_t> TransformChunk(runtime::CrdtStore& writer, uint32_t first, uint32_t count,
                                    float x);
// A DELETE_ENTITY chunk made by `writer`.
std::vector<uint8_t> DeleteEntityChunk(runtime::CrdtStore& writer, protocol::EntityId entity);

}  // namespace scenecrdt::testing
