// SPDX-License-Identifier: Apache-2.0
// Owns RedisConnection: one blocking hiredis connection (RAII) with connect and command
// timeouts, AUTH/SELECT after every connect, and reconnection with capped, jittered
// exponential backoff. Every failure is a Result: kUnavailable while Redis cannot be reached
// (nothing sent is known to have been applied), the ErrorFromRedisError code for an error reply.
//
// Stale connections: a connection that sat idle may have been closed by Redis meanwhile (a Redis
// restart). Before reusing one, the socket is checked (a zero-timeout poll); one found closed is
// re-established at once. A reused connection whose command then fails because Redis closed it
// is re-established and the command sent once more (at most one retry per call; never after a
// timeout): the command may run twice, which the cluster's commands tolerate (docs/CLUSTER.md).
// Reply budget: Pipeline() may bound the bytes its replies take (the read loop's round);
// replies read past it are not kept: the connection is dropped (kPayloadTooLarge).
//
// One thread uses a connection at a time (the cluster gives each thread its own: the append
// path, the read loop, the compactor); counters() may be read from any thread.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <memory>
#include <random>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "scenecrdt/cluster/redis_reply.h"
#include "scenecrdt/cluster/redis_url.h"
#include "scenecrdt/protocol/result.h"

struct redisContext;  // hiredis, kept out of this header

namespace scenecrdt::cluster {

// Receives one log line (no trailing newline), on the thread using the connection: a sink shared
// by several connections must be thread-safe. Empty: stderr, prefixed "scenecrdt cluster: ".
using LogSink = std::function<void(std::string_view line)>;
// Monotonic milliseconds. Empty: std::chrono::steady_clock. Tests inject a fake clock.
using MonotonicClock = std::function<int64_t()>;

struct RedisOptions {
  RedisEndpoint endpoint;
  uint32_t connect_timeout_ms = 1000;  // TCP/unix connect
  uint32_t command_timeout_ms = 2000;  // each reply (a blocking command adds its own wait)
  uint32_t backoff_initial_ms = 50;    // first wait after a failed connect
  uint32_t backoff_max_ms = 2000;      // the wait doubles up to this
  std::string client_name;             // CLIENT SETNAME after connect (empty: none)
  uint64_t jitter_seed = 0;            // backoff jitter PRNG seed (0: random)
  MonotonicClock now_ms;
  LogSink log;
};

struct RedisCounters {
  uint64_t commands = 0;    // commands sent (each command of a pipeline counts)
  uint64_t errors = 0;      // failed connects, lost connections, timeouts, error replies
  uint64_t connects = 0;    // successful connects, the first included
  uint64_t reconnects = 0;  // successful connects after the first
  uint64_t stale = 0;       // connections found closed by Redis on reuse (then re-established)
  uint64_t retries = 0;     // commands sent again after their reused connection was closed
};

// One command's arguments; binary safe (a DCL chunk is one argument).
using RedisArgs = std::vector<std::string_view>;

class RedisConnection {
 public:
  explicit RedisConnection(RedisOptions options);
  ~RedisConnection();
  RedisConnection(const RedisConnection&) = delete;
  RedisConnection& operator=(const RedisConnection&) = delete;

  // Connects unless connected. Within the backoff wait after a failure it returns kUnavailable
  // at once, without touching the network.
  Result<void> Connect();
  bool connected() const { return context_ != nullptr; }
  // +1 on every successful connect: state tied to one connection (CLIENT ID) must be refreshed.
  uint64_t connection_epoch() const { return epoch_; }
  // Milliseconds until Connect() may try again (0: now).
  int64_t retry_in_ms() const;

  // One command. An error reply becomes its Error (text in last_error_text() and the log).
  Result<RedisReply> Command(std::span<const std::string_view> args);
  Result<RedisReply> Command(std::initializer_list<std::string_view> args) {
    return Command(std::span<const std::string_view>(args.begin(), args.size()));
  }
  // Several commands in one round trip; error replies stay in the result as kError replies so
  // the caller can isolate them. Fails as a whole only when the connection does.
  // `max_reply_bytes` > 0: the replies together may take at most that many bytes of RESP; once
  // a socket read (at most 16 KiB, hiredis's) goes past it, reading stops, the connection is
  // dropped and the call fails with kPayloadTooLarge (not a Redis failure: not counted in
  // errors, the next call reconnects at once).
  Result<std::vector<RedisReply>> Pipeline(std::span<const RedisArgs> commands,
                                           std::size_t max_reply_bytes = 0);
  // RESP bytes read by the last Command() or Pipeline() (what its replies took).
  std::size_t last_reply_bytes() const { return last_reply_bytes_; }

  RedisCounters counters() const;
  const RedisOptions& options() const { return options_; }
  // Writes one line to options().log (or stderr): the cluster objects using this connection
  // log through it.
  void Log(std::string_view line) const;
  // Text of the last failure (connect error, error reply), for diagnostics.
  const std::string& last_error_text() const { return last_error_text_; }

 private:
  struct ContextDeleter {
    void operator()(redisContext* c) const;
  };

  int64_t Now() const;
  Result<void> Handshake();
  Result<RedisReply> RawCommand(std::span<const std::string_view> args);
  // Sends what is buffered and reads one reply, counting its bytes in last_reply_bytes_; null
  // on a connection failure (context_->err set) or past `max_bytes` (> 0; reply_over_ set).
  void* ReadReply(std::size_t max_bytes);
  // Connects; drops and re-establishes a reused connection Redis closed while it was idle.
  // `reused` tells whether the connection was already open (a retry is then allowed).
  Result<void> ConnectFresh(bool& reused);
  bool PeerClosed() const;
  // One pipeline on the open connection; false on a failure (closed_by_peer_ / reply_over_ say
  // which), the connection not dropped yet.
  bool SendPipeline(std::span<const RedisArgs> commands, std::size_t max_reply_bytes,
                    std::vector<RedisReply>& replies);
  // The failure just seen was Redis closing the connection (EOF, reset, broken pipe), not a
  // timeout: a reused connection may then be re-established and the command sent again.
  void NoteFailure();
  Error FailConnect(std::string_view why);
  Error LoseConnection(std::string why);
  Error ReplyTooLarge(std::size_t max_bytes);
  void PrepareArgs(std::span<const std::string_view> args);

  RedisOptions options_;
  std::unique_ptr<redisContext, ContextDeleter> context_;
  uint64_t epoch_ = 0;
  int64_t next_attempt_ms_ = 0;
  uint32_t backoff_ms_;
  std::mt19937_64 jitter_;
  std::string last_error_text_;
  std::vector<const char*> argv_;  // scratch for hiredis's argv form
  std::vector<std::size_t> argv_len_;
  std::size_t last_reply_bytes_ = 0;
  bool closed_by_peer_ = false;  // the last failure was Redis closing the connection
  bool reply_over_ = false;      // the last ReadReply stopped at its byte budget

  std::atomic<uint64_t> commands_{0};
  std::atomic<uint64_t> errors_{0};
  std::atomic<uint64_t> connects_{0};
  std::atomic<uint64_t> reconnects_{0};
  std::atomic<uint64_t> stale_{0};
  std::atomic<uint64_t> retries_{0};
};

}  // namespace scenecrdt::cluster
