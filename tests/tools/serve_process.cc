// SPDX-License-Identifier: Apache-2.0
// Owns starting, watching and stopping the `scenecrdt serve` child of the network CLI tests.
#include "tests/tools/serve_process.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <vector>

#include "tests/tools/subprocess.h"

namespace scenecrdt::tools::test {
namespace {

// The port of "scenecrdt serve: listening <scheme>://HOST:PORT..." in `log`, or 0.
unsigned ListeningPort(const std::string& log, const std::string& scheme) {
  const std::string marker = "listening " + scheme + "://";
  const auto at = log.find(marker);
  if (at == std::string::npos) return 0;
  const auto line_end = log.find('\n', at);
  if (line_end == std::string::npos) return 0;  // the line is not complete yet
  const std::string line = log.substr(at, line_end - at);
  const auto space = line.find(' ', marker.size());
  const std::string host_port = line.substr(marker.size(), space - marker.size());
  const auto colon = host_port.rfind(':');
  if (colon == std::string::npos) return 0;
  return static_cast<unsigned>(std::strtoul(host_port.c_str() + colon + 1, nullptr, 10));
}

}  // namespace

ServeProcess::ServeProcess(const std::string& cli, const std::filesystem::path& data_dir,
                           const std::vector<std::string>& extra_args) {
  int err_pipe[2];
  if (pipe2(err_pipe, O_CLOEXEC) != 0) {
    ADD_FAILURE() << "pipe2: " << std::strerror(errno);
    return;
  }
  std::vector<std::string> argv_storage = {cli,           "serve",           "--tcp",
                                           "127.0.0.1:0", "--http",          "127.0.0.1:0",
                                           "--data",      data_dir.string(), "--no-fsync"};
  argv_storage.insert(argv_storage.end(), extra_args.begin(), extra_args.end());
  std::vector<char*> argv;
  for (std::string& a : argv_storage) argv.push_back(a.data());
  argv.push_back(nullptr);
  std::vector<std::string> env_storage = ChildEnvironment({});
  std::vector<char*> envp;
  for (std::string& e : env_storage) envp.push_back(e.data());
  envp.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_adddup2(&actions, err_pipe[1], STDERR_FILENO);
  const int spawned = posix_spawn(&pid_, argv[0], &actions, nullptr, argv.data(), envp.data());
  posix_spawn_file_actions_destroy(&actions);
  close(err_pipe[1]);
  err_fd_ = err_pipe[0];
  if (spawned != 0) {
    ADD_FAILURE() << "posix_spawn " << cli << ": " << std::strerror(spawned);
    pid_ = -1;
    return;
  }
  pidfd_ = static_cast<int>(syscall(SYS_pidfd_open, pid_, 0));

  // Read stderr until both "listening" lines are there (or the server gave up).
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  char buf[4096];
  while (!started()) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) break;
    pollfd p{err_fd_, POLLIN, 0};
    const int ready = poll(&p, 1, static_cast<int>(left.count()));
    if (ready < 0 && errno == EINTR) continue;
    if (ready <= 0) break;
    const ssize_t n = read(err_fd_, buf, sizeof buf);
    if (n <= 0) break;  // the server exited
    std::lock_guard<std::mutex> lock(mu_);
    log_.append(buf, static_cast<std::size_t>(n));
    tcp_port_ = ListeningPort(log_, "tcp");
    http_port_ = ListeningPort(log_, "ws");
  }
  if (!started()) ADD_FAILURE() << "scenecrdt serve did not start:\n" << log();
  // Keep reading, so that the server never blocks on a full pipe.
  drain_ = std::thread([this] { Drain(); });
}

ServeProcess::~ServeProcess() {
  if (pid_ > 0) {
    kill(pid_, SIGTERM);
    pollfd p{pidfd_, POLLIN, 0};
    if (pidfd_ < 0 || poll(&p, 1, 10000) <= 0) {
      ADD_FAILURE() << "scenecrdt serve did not stop on SIGTERM within 10 s:\n" << log();
      kill(pid_, SIGKILL);
    }
    int status = 0;
    while (waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
    }
  }
  if (drain_.joinable()) drain_.join();  // the pipe ends with the process
  if (err_fd_ >= 0) close(err_fd_);
  if (pidfd_ >= 0) close(pidfd_);
}

std::string ServeProcess::log() const {
  std::lock_guard<std::mutex> lock(mu_);
  return log_;
}

void ServeProcess::Drain() {
  char buf[4096];
  while (true) {
    const ssize_t n = read(err_fd_, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;
    std::lock_guard<std::mutex> lock(mu_);
    log_.append(buf, static_cast<std::size_t>(n));
  }
}

bool ServeProcess::Signal(int signal) const { return pid_ > 0 && kill(pid_, signal) == 0; }

bool ServeProcess::WaitForLog(const std::string& text, int count, int timeout_ms) const {
  for (int waited = 0;; waited += 20) {
    const std::string now = log();
    int seen = 0;
    for (auto at = now.find(text); at != std::string::npos; at = now.find(text, at + 1)) ++seen;
    if (seen >= count) return true;
    if (waited >= timeout_ms) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

}  // namespace scenecrdt::tools::test
