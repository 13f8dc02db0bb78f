// SPDX-License-Identifier: Apache-2.0
// Owns the server tests' fixtures: temporary data directories, an in-process Server on
// ephemeral loopback ports, a spawned `scenecrdt serve` process, a raw POSIX socket client
// for hostile input, and waiting on conditions with deadlines (never sleeping to synchronise).
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "scenecrdt/client/client.h"
#include "scenecrdt/net/net.h"
#include "scenecrdt/protocol/session/envelope.h"
#include "scenecrdt/server/server.h"
#include "tests/wait_until.h"

namespace scenecrdt::testing {

class TempDir {
 public:
  TempDir();
  ~TempDir();
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// An in-process server on 127.0.0.1 ephemeral ports (TCP and HTTP).
class TestServer {
 public:
  explicit TestServer(server::ServerConfig config = Config(), const std::string& data_dir = {});
  ~TestServer();
  static server::ServerConfig Config();

  server::Server& get() { return *server_; }
  std::string tcp_url() const;
  std::string ws_url() const;
  // The scene's state hash on its strand ("" when the scene does not exist).
  std::string SceneHash(const std::string& scene);
  int Stop();

 private:
  std::optional<TempDir> own_dir_;
  std::unique_ptr<server::Server> server_;
  bool stopped_ = false;
};

// `scenecrdt serve` as a child process (SCENECRDT_BINARY), stderr into a file.
class ServerProcess {
 public:
  // `max_open_files` > 0: the child's RLIMIT_NOFILE (soft and hard), as `ulimit -n` would.
  ServerProcess(const std::string& data_dir, std::vector<std::string> extra_args = {},
                int max_open_files = 0);
  ~ServerProcess();
  bool started() const { return port_ != 0; }
  uint16_t port() const { return port_; }
  std::string tcp_url() const { return "tcp://127.0.0.1:" + std::to_string(port_); }
  // The --http port from the "listening ws://" (or wss://) line (0 when the HTTP listener is off).
  uint16_t http_port() const;
  pid_t pid() const { return pid_; }
  void Kill(int signal);
  // Waits for the exit; the exit status, or -1 on timeout / killed by a signal.
  int WaitExit(std::chrono::milliseconds timeout);
  std::string log() const;

 private:
  pid_t pid_ = -1;
  uint16_t port_ = 0;
  std::string log_path_;
  bool reaped_ = false;
  int exit_status_ = -1;  // once reaped: the exit status, -1 when killed by a signal
};

// A blocking POSIX TCP client with deadlines, for bytes no real client would send.
class RawConnection {
 public:
  explicit RawConnection(uint16_t port, int receive_buffer_bytes = 0);
  ~RawConnection();
  bool connected() const { return fd_ >= 0; }
  bool Send(std::span<const uint8_t> bytes);
  bool SendFrame(const session::Frame& frame) { return Send(session::BuildFrame(frame)); }
  // Reads the next frame (nullopt on timeout or close).
  std::optional<std::vector<uint8_t>> ReadFrameBytes(std::chrono::milliseconds timeout);
  // Reads frames until an Error frame arrives; nullopt on timeout/close.
  std::optional<session::ErrorFrame> ReadError(
      std::chrono::milliseconds timeout = std::chrono::seconds(10));
  // Everything the server sends until it closes (or the timeout), as text.
  std::string ReadUntilClosed(std::chrono::milliseconds timeout = std::chrono::seconds(10));
  // Shuts this side's sending down, then reads to the end: 0 when the stream ended in the
  // server's FIN, the errno when it ended in an error (ECONNRESET: a reset), -1 on timeout.
  int FinishAndReadEnd(std::chrono::milliseconds timeout = std::chrono::seconds(10));
  // True once the server closed the connection (EOF) within the timeout.
  bool WaitClosed(std::chrono::milliseconds timeout = std::chrono::seconds(10));
  // Hello + Welcome + state frames; returns the Welcome (nullopt on failure).
  std::optional<session::Welcome> Join(const std::string& scene, const std::string& token = {});

 private:
  int fd_ = -1;
  std::vector<uint8_t> in_;
};

// A GET on the HTTP port (Connection: close); the whole response ("" when none came).
std::string HttpGet(uint16_t port, const std::string& path);
// The value of one series ("name{labels}") in Prometheus text; -1 when absent.
double Metric(const std::string& text, const std::string& series);

// A raw-DCL WebSocket client (ws://127.0.0.1:PORT/dcl/<scene>?token=...), like an @dcl/ecs
// transport: binary messages are plain DCL chunks. Single-threaded: every call runs its own
// io_context on the caller's thread until its condition or deadline.
class DclSocket {
 public:
  // Connects and upgrades (`target` is the path and query, e.g. "/dcl/lobby?token=w").
  // `origin`: an Origin header for the upgrade, as a browser sends (none when empty).
  DclSocket(uint16_t port, const std::string& target,
            std::chrono::milliseconds timeout = std::chrono::seconds(10),
            const std::string& origin = {});
  ~DclSocket();
  bool connected() const { return connected_; }
  // The HTTP status of a refused upgrade (401, 403, 400 ...); 101 when upgraded.
  int http_status() const { return http_status_; }
  bool Send(std::span<const uint8_t> chunk,
            std::chrono::milliseconds timeout = std::chrono::seconds(10));
  // The next binary message (nullopt on timeout or when the connection ended).
  std::optional<std::vector<uint8_t>> Receive(
      std::chrono::milliseconds timeout = std::chrono::seconds(10));
  // Reads (and discards) until the server closes; its close code, nullopt on timeout or an
  // end without a close frame. `reason` gets the close reason.
  std::optional<uint16_t> WaitClose(std::chrono::milliseconds timeout = std::chrono::seconds(10),
                                    std::string* reason = nullptr);
  // Later Sends go out as text messages (true) or binary ones (false, the default).
  void SetText(bool text) { ws_.text(text); }
  // Sends a close frame (1000) and waits for the server's.
  void Close();

 private:
  void StartRead();
  bool RunUntil(const std::function<bool()>& done, std::chrono::milliseconds timeout);

  net::asio::io_context ioc_;
  net::beast::websocket::stream<net::tcp::socket> ws_;
  net::beast::flat_buffer buffer_;
  bool connected_ = false;
  int http_status_ = 0;
  bool read_pending_ = false;
  std::optional<net::error_code> read_error_;
  std::deque<std::vector<uint8_t>> inbox_;
};

// Runs a shell command; its exit status (-1 when it did not exit normally) and its stdout and
// stderr together.
struct CommandResult {
  int status = -1;
  std::string output;
};
CommandResult RunCommand(const std::string& command);

// A Transform PUT for `entity` at `timestamp` with position x.
void AppendPut(std::vector<uint8_t>& out, uint32_t entity, uint32_t timestamp, float x,
               uint32_t parent = 0);
// State hash of applying `streams` in order to an empty store.
std::string ReplayHash(const std::vector<std::vector<uint8_t>>& streams);

}  // namespace scenecrdt::testing
