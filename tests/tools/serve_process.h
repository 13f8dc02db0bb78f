// SPDX-License-Identifier: Apache-2.0
// Owns ServeProcess: the built `scenecrdt serve` as a child process on free loopback ports,
// for the tests of the network commands (send, pull, load, ...), which must see the server a
// user runs. Startup is read from its stderr ("listening" lines) through a pipe; it is stopped
// with SIGTERM when the object goes away.
#pragma once

#include <sys/types.h>

#include <filesystem>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace scenecrdt::tools::test {

class ServeProcess {
 public:
  // Starts `cli serve --tcp 127.0.0.1:0 --http 127.0.0.1:0 --data <data_dir> --no-fsync`
  // followed by `extra_args` and waits (at most 30 s) until both listeners are up.
  ServeProcess(const std::string& cli, const std::filesystem::path& data_dir,
               const std::vector<std::string>& extra_args = {});
  ~ServeProcess();
  ServeProcess(const ServeProcess&) = delete;
  ServeProcess& operator=(const ServeProcess&) = delete;

  bool started() const { return tcp_port_ != 0 && http_port_ != 0; }
  std::string tcp_url() const { return "tcp://127.0.0.1:" + std::to_string(tcp_port_); }
  std::string ws_url() const { return "ws://127.0.0.1:" + std::to_string(http_port_); }
  unsigned http_port() const { return http_port_; }
  unsigned tcp_port() const { return tcp_port_; }
  // Everything the server wrote to stderr so far.
  std::string log() const;
  // Sends `signal` to the server (kill -HUP ...); false when it is not running.
  bool Signal(int signal) const;
  // Waits (at most `timeout_ms`) until the log holds `text` `count` times.
  bool WaitForLog(const std::string& text, int count = 1, int timeout_ms = 10000) const;

 private:
  void Drain();

  pid_t pid_ = -1;
  int pidfd_ = -1;
  int err_fd_ = -1;
  unsigned tcp_port_ = 0;
  unsigned http_port_ = 0;
  mutable std::mutex mu_;
  std::string log_;
  std::thread drain_;
};

}  // namespace scenecrdt::tools::test
