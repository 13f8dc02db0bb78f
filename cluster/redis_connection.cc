// SPDX-License-Identifier: Apache-2.0
// Owns the hiredis connection lifecycle. A connection lost during a command is retried within
// the same call only when it was reused and Redis closed it (EOF, reset, broken pipe): that is
// a connection that went stale while idle (Redis restarted), found on use. Then the command
// may have reached the old Redis or not; it is sent once more on a new connection (appends
// may be duplicated, which LWW merges make harmless). Any other loss (a timeout, a connection
// made in this call) gives kUnavailable and the caller decides. The first reconnect after a
// loss is immediate; failed connects back off.
#include "scenecrdt/cluster/redis_connection.h"

#include <errno.h>
#include <hiredis/hiredis.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <sys/time.h>

#include <chrono>
#include <cstdio>
#include <string>

#include "scenecrdt/cluster/internal/hiredis_reply.h"

namespace scenecrdt::cluster {
namespace {

timeval ToTimeval(uint32_t ms) {
  timeval tv{};
  tv.tv_sec = static_cast<decltype(tv.tv_sec)>(ms / 1000);
  tv.tv_usec = static_cast<decltype(tv.tv_usec)>((ms % 1000) * 1000);
  return tv;
}

Error Unavailable(const char* detail) { return MakeError(ErrorCode::kUnavailable, detail); }

// hiredis writes with write(2), so a write to a socket Redis closed raises SIGPIPE, whose default
// action kills the process. A library must not change the process's signal handling; instead
// SIGPIPE is blocked on this thread while hiredis writes, and one raised meanwhile is consumed
// before the mask is restored (the write itself then fails with EPIPE, reported as usual).
class SigpipeGuard {
 public:
  SigpipeGuard() {
    sigemptyset(&pipe_);
    sigaddset(&pipe_, SIGPIPE);
    sigset_t pending;
    sigemptyset(&pending);
    was_pending_ = sigpending(&pending) == 0 && sigismember(&pending, SIGPIPE) == 1;
    blocked_ = pthread_sigmask(SIG_BLOCK, &pipe_, &old_) == 0;
  }
  ~SigpipeGuard() {
    if (!blocked_) return;
    sigset_t pending;
    sigemptyset(&pending);
    if (!was_pending_ && sigpending(&pending) == 0 && sigismember(&pending, SIGPIPE) == 1) {
      const timespec zero{0, 0};
      sigtimedwait(&pipe_, nullptr, &zero);
    }
    pthread_sigmask(SIG_SETMASK, &old_, nullptr);
  }
  SigpipeGuard(const SigpipeGuard&) = delete;
  SigpipeGuard& operator=(const SigpipeGuard&) = delete;

 private:
  sigset_t pipe_;
  sigset_t old_;
  bool was_pending_ = false;
  bool blocked_ = false;
};

}  // namespace

void RedisConnection::ContextDeleter::operator()(redisContext* c) const { redisFree(c); }

RedisConnection::RedisConnection(RedisOptions options)
    : options_(std::move(options)),
      backoff_ms_(options_.backoff_initial_ms > 0 ? options_.backoff_initial_ms : 1),
      jitter_(options_.jitter_seed != 0 ? options_.jitter_seed : std::random_device{}()) {
  if (options_.backoff_max_ms < backoff_ms_) options_.backoff_max_ms = backoff_ms_;
}

RedisConnection::~RedisConnection() = default;

int64_t RedisConnection::Now() const {
  if (options_.now_ms) return options_.now_ms();
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

void RedisConnection::Log(std::string_view line) const {
  if (options_.log) {
    options_.log(line);
    return;
  }
  std::fprintf(stderr, "scenecrdt cluster: %.*s\n", static_cast<int>(line.size()), line.data());
}

int64_t RedisConnection::retry_in_ms() const {
  if (context_) return 0;
  const int64_t wait = next_attempt_ms_ - Now();
  return wait > 0 ? wait : 0;
}

Result<void> RedisConnection::Connect() {
  if (context_) return {};
  const int64_t now = Now();
  if (now < next_attempt_ms_) {
    return Unavailable("redis unreachable: waiting before the next connect attempt");
  }
  const RedisEndpoint& e = options_.endpoint;
  const timeval tv = ToTimeval(options_.connect_timeout_ms);
  redisContext* c = e.kind == RedisEndpoint::Kind::kUnix
                        ? redisConnectUnixWithTimeout(e.path.c_str(), tv)
                        : redisConnectWithTimeout(e.host.c_str(), e.port, tv);
  if (c == nullptr) return FailConnect("cannot allocate a hiredis context");
  context_.reset(c);
  if (c->err != 0) {
    const std::string why = c->errstr;
    context_.reset();
    return FailConnect(why);
  }
  if (redisSetTimeout(c, ToTimeval(options_.command_timeout_ms)) != REDIS_OK) {
    context_.reset();
    return FailConnect("cannot set the command timeout");
  }
  if (e.kind == RedisEndpoint::Kind::kTcp) redisEnableKeepAlive(c);
  if (auto h = Handshake(); !h.has_value()) {
    context_.reset();
    // A refused AUTH or SELECT is a configuration error: back off as for a failed connect, but
    // keep its own code (kUnauthorized, kIo) so the caller can tell it from an outage.
    const Error failed = FailConnect(last_error_text_);
    return h.error().code == ErrorCode::kUnavailable ? failed : h.error();
  }
  if (connects_.fetch_add(1, std::memory_order_relaxed) > 0) {
    reconnects_.fetch_add(1, std::memory_order_relaxed);
  }
  ++epoch_;
  backoff_ms_ = options_.backoff_initial_ms > 0 ? options_.backoff_initial_ms : 1;
  next_attempt_ms_ = 0;
  Log("connected to " + FormatRedisUrl(e, false));
  return {};
}

Result<void> RedisConnection::Handshake() {
  const RedisEndpoint& e = options_.endpoint;
  auto run = [&](std::initializer_list<std::string_view> args) -> Result<void> {
    auto r = RawCommand(std::span<const std::string_view>(args.begin(), args.size()));
    if (!r.has_value()) return r.error();
    if (r->is_error()) {
      last_error_text_ = r->str;
      return ErrorFromRedisError(r->str);
    }
    return {};
  };
  if (!e.password.empty()) {
    auto r = e.user.empty() ? run({"AUTH", e.password}) : run({"AUTH", e.user, e.password});
    if (!r.has_value()) return r;
  }
  if (e.db != 0) {
    const std::string db = std::to_string(e.db);
    if (auto r = run({"SELECT", db}); !r.has_value()) return r;
  }
  if (!options_.client_name.empty()) {
    if (auto r = run({"CLIENT", "SETNAME", options_.client_name}); !r.has_value()) return r;
  }
  return {};
}

Error RedisConnection::FailConnect(std::string_view why) {
  errors_.fetch_add(1, std::memory_order_relaxed);
  last_error_text_ = std::string(why);
  // Equal jitter: half the backoff fixed, half random, so nodes that lost Redis together do
  // not all reconnect in the same millisecond.
  const uint32_t half = backoff_ms_ / 2;
  const uint32_t wait =
      half + static_cast<uint32_t>(jitter_() % (uint64_t{backoff_ms_ - half} + 1));
  next_attempt_ms_ = Now() + wait;
  backoff_ms_ =
      backoff_ms_ >= options_.backoff_max_ms / 2 ? options_.backoff_max_ms : backoff_ms_ * 2;
  Log("connect to " + FormatRedisUrl(options_.endpoint, false) + " failed: " + last_error_text_ +
      "; next attempt in " + std::to_string(wait) + " ms");
  return Unavailable("redis unreachable: connect failed");
}

Error RedisConnection::LoseConnection(std::string why) {
  errors_.fetch_add(1, std::memory_order_relaxed);
  last_error_text_ = std::move(why);
  context_.reset();
  next_attempt_ms_ = 0;
  Log("connection to " + FormatRedisUrl(options_.endpoint, false) + " lost: " + last_error_text_);
  return Unavailable("redis connection lost or command timed out");
}

void RedisConnection::PrepareArgs(std::span<const std::string_view> args) {
  argv_.clear();
  argv_len_.clear();
  for (const std::string_view a : args) {
    argv_.push_back(a.data());
    argv_len_.push_back(a.size());
  }
}

void RedisConnection::NoteFailure() {
  const int saved = errno;  // right after the failing hiredis call
  const redisContext* c = context_.get();
  closed_by_peer_ =
      c != nullptr && (c->err == REDIS_ERR_EOF ||
                       (c->err == REDIS_ERR_IO && (saved == ECONNRESET || saved == EPIPE)));
}

void* RedisConnection::ReadReply(std::size_t max_bytes) {
  redisContext* c = context_.get();
  void* reply = nullptr;
  if (redisGetReplyFromReader(c, &reply) != REDIS_OK) {
    NoteFailure();
    return nullptr;
  }
  if (reply != nullptr) return reply;  // already read with an earlier reply of a pipeline
  int done = 0;
  do {
    if (redisBufferWrite(c, &done) != REDIS_OK) {
      NoteFailure();
      return nullptr;
    }
  } while (done == 0);
  do {
    // redisBufferRead feeds what read(2) returned to the reader: its buffer grows by that much.
    const std::size_t before = c->reader->len;
    if (redisBufferRead(c) != REDIS_OK) {
      NoteFailure();
      return nullptr;
    }
    last_reply_bytes_ += c->reader->len - before;
    if (max_bytes > 0 && last_reply_bytes_ > max_bytes) {
      reply_over_ = true;
      return nullptr;
    }
    if (redisGetReplyFromReader(c, &reply) != REDIS_OK) {
      NoteFailure();
      return nullptr;
    }
  } while (reply == nullptr);
  return reply;
}

bool RedisConnection::PeerClosed() const {
  pollfd p{};
  p.fd = context_->fd;
  p.events = POLLIN | POLLRDHUP;
  if (poll(&p, 1, 0) <= 0) return false;  // nothing pending (a failed poll: the command tells)
  // Anything readable on an idle connection is Redis closing it (EOF, or an error line before
  // the close) or bytes out of step with our commands: either way it cannot be used as it is.
  return (p.revents & (POLLIN | POLLRDHUP | POLLHUP | POLLERR | POLLNVAL)) != 0;
}

Result<void> RedisConnection::ConnectFresh(bool& reused) {
  reused = context_ != nullptr;
  if (reused && PeerClosed()) {
    stale_.fetch_add(1, std::memory_order_relaxed);
    errors_.fetch_add(1, std::memory_order_relaxed);
    last_error_text_ = "closed by Redis while idle";
    context_.reset();
    next_attempt_ms_ = 0;
    reused = false;
    Log("connection to " + FormatRedisUrl(options_.endpoint, false) +
        " lost while idle (closed by Redis: a restart?); reconnecting");
  }
  return Connect();
}

Result<RedisReply> RedisConnection::RawCommand(std::span<const std::string_view> args) {
  PrepareArgs(args);
  commands_.fetch_add(1, std::memory_order_relaxed);
  last_reply_bytes_ = 0;
  closed_by_peer_ = false;
  reply_over_ = false;
  if (redisAppendCommandArgv(context_.get(), static_cast<int>(argv_.size()), argv_.data(),
                             argv_len_.data()) != REDIS_OK) {
    last_error_text_ = context_->errstr;
    return Unavailable("redis connection lost or command timed out");
  }
  const SigpipeGuard no_sigpipe;
  void* raw = ReadReply(0);
  if (raw == nullptr) {
    last_error_text_ = context_->errstr;
    return Unavailable("redis connection lost or command timed out");
  }
  auto* reply = static_cast<redisReply*>(raw);
  Result<RedisReply> converted = internal::ConvertReply(*reply);
  freeReplyObject(reply);
  if (!converted.has_value()) {
    last_error_text_ = "unexpected reply shape";
    closed_by_peer_ = false;
    return Unavailable("redis connection lost or command timed out");
  }
  return converted;  // an error reply is counted by the caller (once, even in the handshake)
}

Result<RedisReply> RedisConnection::Command(std::span<const std::string_view> args) {
  for (int attempt = 0;; ++attempt) {
    bool reused = false;
    if (auto c = ConnectFresh(reused); !c.has_value()) return c.error();
    Result<RedisReply> reply = RawCommand(args);
    if (!reply.has_value()) {
      const bool retry = attempt == 0 && reused && closed_by_peer_;
      const Error lost = LoseConnection(last_error_text_);
      if (!retry) return lost;
      retries_.fetch_add(1, std::memory_order_relaxed);
      Log(std::string("sending ") + std::string(args.empty() ? "" : args[0]) +
          " again on a new connection");
      continue;
    }
    if (reply->is_error()) {
      errors_.fetch_add(1, std::memory_order_relaxed);
      last_error_text_ = reply->str;
      Log(std::string("command ") + std::string(args.empty() ? "" : args[0]) +
          " failed: " + reply->str);
      return ErrorFromRedisError(reply->str);
    }
    return reply;
  }
}

bool RedisConnection::SendPipeline(std::span<const RedisArgs> commands, std::size_t max_reply_bytes,
                                   std::vector<RedisReply>& replies) {
  for (const RedisArgs& args : commands) {
    PrepareArgs(args);
    if (redisAppendCommandArgv(context_.get(), static_cast<int>(argv_.size()), argv_.data(),
                               argv_len_.data()) != REDIS_OK) {
      last_error_text_ = context_->errstr;
      return false;
    }
  }
  commands_.fetch_add(commands.size(), std::memory_order_relaxed);
  const SigpipeGuard no_sigpipe;  // the first read writes the whole pipeline
  replies.reserve(commands.size());
  for (std::size_t i = 0; i < commands.size(); ++i) {
    void* raw = ReadReply(max_reply_bytes);
    if (raw == nullptr) {
      if (!reply_over_) last_error_text_ = context_->errstr;
      return false;
    }
    auto* reply = static_cast<redisReply*>(raw);
    Result<RedisReply> converted = internal::ConvertReply(*reply);
    freeReplyObject(reply);
    if (!converted.has_value()) {
      last_error_text_ = "unexpected reply shape";
      closed_by_peer_ = false;
      return false;
    }
    if (converted->is_error()) {
      errors_.fetch_add(1, std::memory_order_relaxed);
      last_error_text_ = converted->str;
    }
    replies.push_back(std::move(converted).value());
  }
  return true;
}

Result<std::vector<RedisReply>> RedisConnection::Pipeline(std::span<const RedisArgs> commands,
                                                          std::size_t max_reply_bytes) {
  for (int attempt = 0;; ++attempt) {
    bool reused = false;
    if (auto c = ConnectFresh(reused); !c.has_value()) return c.error();
    last_reply_bytes_ = 0;
    closed_by_peer_ = false;
    reply_over_ = false;
    std::vector<RedisReply> replies;
    if (SendPipeline(commands, max_reply_bytes, replies)) return replies;
    if (reply_over_) return ReplyTooLarge(max_reply_bytes);
    const bool retry = attempt == 0 && reused && closed_by_peer_;
    const Error lost = LoseConnection(last_error_text_);
    if (!retry) return lost;
    retries_.fetch_add(1, std::memory_order_relaxed);
    Log("sending a pipeline of " + std::to_string(commands.size()) +
        " commands again on a new connection");
  }
}

Error RedisConnection::ReplyTooLarge(std::size_t max_bytes) {
  context_.reset();  // the rest of the replies is still on the socket: never read
  next_attempt_ms_ = 0;
  last_error_text_ = "replies over " + std::to_string(max_bytes) + " bytes";
  Log("replies over the budget of " + std::to_string(max_bytes) +
      " bytes: connection dropped, the rest not read");
  return MakeError(ErrorCode::kPayloadTooLarge, "redis replies over the read budget");
}

RedisCounters RedisConnection::counters() const {
  RedisCounters c;
  c.commands = commands_.load(std::memory_order_relaxed);
  c.errors = errors_.load(std::memory_order_relaxed);
  c.connects = connects_.load(std::memory_order_relaxed);
  c.reconnects = reconnects_.load(std::memory_order_relaxed);
  c.stale = stale_.load(std::memory_order_relaxed);
  c.retries = retries_.load(std::memory_order_relaxed);
  return c;
}

}  // namespace scenecrdt::cluster
