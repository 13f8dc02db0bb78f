// SPDX-License-Identifier: Apache-2.0
// Owns the redis-server child process and the chunk helpers of the cluster tests.
#include "tests/cluster/redis_test_server.h"

#include <gtest/gtest.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>

#include "scenecrdt/protocol/transform.h"

#ifndef SCENECRDT_REDIS_SERVER
#define SCENECRDT_REDIS_SERVER "redis-server"
#endif

namespace scenecrdt::testing {

RedisTestServer::RedisTestServer(std::vector<std::string> extra_args)
    : extra_args_(std::move(extra_args)) {
  std::string tmpl = (std::filesystem::temp_directory_path() / "scenecrdt-redis-XXXXXX").string();
  if (mkdtemp(tmpl.data()) == nullptr) return;
  dir_ = tmpl;
  socket_path_ = dir_ + "/redis.sock";
  Spawn();
}

RedisTestServer::~RedisTestServer() {
  Kill(SIGKILL);
  std::error_code ec;
  if (!dir_.empty()) std::filesystem::remove_all(dir_, ec);
}

bool RedisTestServer::Spawn() {
  int fds[2];
  if (pipe(fds) != 0) return false;
  std::vector<std::string> args = {SCENECRDT_REDIS_SERVER,
                                   "--port",
                                   "0",
                                   "--unixsocket",
                                   socket_path_,
                                   "--unixsocketperm",
                                   "700",
                                   "--appendonly",
                                   "yes",
                                   "--appendfsync",
                                   "always",
                                   "--save",
                                   "",
                                   "--dir",
                                   dir_,
                                   "--daemonize",
                                   "no",
                                   "--loglevel",
                                   "notice"};
  args.insert(args.end(), extra_args_.begin(), extra_args_.end());
  const pid_t parent = getpid();
  const pid_t pid = fork();
  if (pid < 0) {
    close(fds[0]);
    close(fds[1]);
    return false;
  }
  if (pid == 0) {
    // If the test process dies (a crash, an abort), Redis dies with it instead of lingering.
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent) _exit(127);
    dup2(fds[1], STDOUT_FILENO);
    dup2(fds[1], STDERR_FILENO);
    close(fds[0]);
    close(fds[1]);
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    execvp(argv[0], argv.data());
    _exit(127);
  }
  close(fds[1]);
  log_fd_ = fds[0];
  // Read the log until Redis says it is ready (or exits, or 30 s pass): waiting on the pipe,
  // not polling the socket.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  std::string text;
  bool ready = false;
  while (!ready) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) break;
    pollfd p{log_fd_, POLLIN, 0};
    if (poll(&p, 1, static_cast<int>(left.count())) <= 0) break;
    char buf[4096];
    const ssize_t n = read(log_fd_, buf, sizeof(buf));
    if (n <= 0) break;
    text.append(buf, static_cast<std::size_t>(n));
    // "Ready to accept connections" (TCP) or "ready to accept connections at <socket>".
    ready = text.find("eady to accept connections") != std::string::npos;
  }
  {
    std::lock_guard lock(log_mutex_);
    log_ += text;
  }
  pid_ = pid;
  if (!ready) {
    std::fprintf(stderr, "redis-server did not start:\n%s\n", text.c_str());
    Kill(SIGKILL);
    return false;
  }
  // Keep draining the pipe so Redis never blocks on a full one.
  drain_ = std::thread([this, fd = log_fd_] {
    char buf[4096];
    while (true) {
      const ssize_t n = read(fd, buf, sizeof(buf));
      if (n <= 0) break;
      std::lock_guard lock(log_mutex_);
      log_.append(buf, static_cast<std::size_t>(n));
    }
  });
  return true;
}

void RedisTestServer::Reap() {
  if (pid_ > 0) {
    int status = 0;
    waitpid(pid_, &status, 0);
    pid_ = -1;
  }
  if (drain_.joinable()) drain_.join();
  if (log_fd_ >= 0) {
    close(log_fd_);
    log_fd_ = -1;
  }
}

void RedisTestServer::Kill(int signal) {
  if (pid_ > 0) kill(pid_, signal);
  Reap();
}

bool RedisTestServer::Restart() {
  Kill(SIGKILL);
  return Spawn();
}

std::string RedisTestServer::log() const {
  std::lock_guard lock(log_mutex_);
  return log_;
}

bool LogCapture::Contains(std::string_view text) const {
  std::lock_guard lock(mutex_);
  for (const std::string& line : lines_) {
    if (line.find(text) != std::string::npos) return true;
  }
  return false;
}

std::vector<std::string> LogCapture::lines() const {
  std::lock_guard lock(mutex_);
  return lines_;
}

cluster::RedisOptions TestRedisOptions(const std::string& url, FakeClock* clock, LogCapture* log) {
  cluster::RedisOptions options;
  auto endpoint = cluster::ParseRedisUrl(url);
  if (endpoint.has_value()) options.endpoint = *endpoint;
  options.connect_timeout_ms = 2000;
  options.command_timeout_ms = 5000;
  options.backoff_initial_ms = 100;
  options.backoff_max_ms = 1000;
  options.jitter_seed = 42;
  if (clock != nullptr) options.now_ms = clock->fn();
  if (log != nullptr) {
    options.log = log->sink();
  } else {
    options.log = [](std::string_view) {};
  }
  return options;
}

std::vector<uint8_t> TransformChunk(runtime::CrdtStore& writer, uint32_t first, uint32_t count,
                                    float x) {
  std::vector<uint8_t> out;
  for (uint32_t i = 0; i < count; ++i) {
    protocol::Transform t;
    t.position = {x, static_cast<float>(first + i), 0.0f};
    auto r = writer.WriteTransform(protocol::MakeEntityId(first + i, 0), t, out);
    if (!r.has_value()) ADD_FAILURE() << "WriteTransform: " << r.error().detail;
  }
  return out;
}

std::vector<uint8_t> DeleteEntityChunk(runtime::CrdtStore& writer, protocol::EntityId entity) {
  std::vector<uint8_t> out;
  auto r = writer.WriteDeleteEntity(entity, out);
  if (!r.has_value()) ADD_FAILURE() << "WriteDeleteEntity: " << r.error().detail;
  return out;
}

}  // namespace scenecrdt::testing
