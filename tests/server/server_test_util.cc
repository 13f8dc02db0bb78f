// SPDX-License-Identifier: Apache-2.0
// Owns the server test fixtures.
#include "tests/server/server_test_util.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "scenecrdt/protocol/crdt_codec.h"
#include "scenecrdt/runtime/crdt_store.h"

namespace scenecrdt::testing {

TempDir::TempDir() {
  std::string tmpl = (std::filesystem::temp_directory_path() / "scenecrdt-test-XXXXXX").string();
  path_ = mkdtemp(tmpl.data()) ? tmpl : std::string();
}

TempDir::~TempDir() {
  std::error_code ec;
  if (!path_.empty()) std::filesystem::remove_all(path_, ec);
}

server::ServerConfig TestServer::Config() {
  server::ServerConfig c;
  c.tcp_listen = "127.0.0.1:0";
  c.http_listen = "127.0.0.1:0";
  c.threads = 2;
  c.fsync = false;  // tests check process-kill durability; fsync only slows them down
  return c;
}

TestServer::TestServer(server::ServerConfig config, const std::string& data_dir) {
  if (data_dir.empty()) {
    own_dir_.emplace();
    config.data_dir = own_dir_->path();
  } else {
    config.data_dir = data_dir;
  }
  server_ = std::make_unique<server::Server>(config);
  auto started = server_->Start(false);
  if (!started.has_value()) {
    std::fprintf(stderr, "TestServer: %s\n", started.error().detail);
    std::abort();
  }
}

TestServer::~TestServer() { Stop(); }

int TestServer::Stop() {
  if (stopped_) return 0;
  stopped_ = true;
  server_->RequestStop();
  return server_->Wait();
}

std::string TestServer::tcp_url() const {
  return "tcp://127.0.0.1:" + std::to_string(server_->tcp_port());
}
std::string TestServer::ws_url() const {
  return "ws://127.0.0.1:" + std::to_string(server_->http_port());
}

std::string TestServer::SceneHash(const std::string& scene) {
  std::string hash;
  server_->InspectScene(scene,
                        [&](const runtime::CrdtStore& s, uint64_t) { hash = s.StateHashHex(); });
  return hash;
}

// ---- ServerProcess ----

ServerProcess::ServerProcess(const std::string& data_dir, std::vector<std::string> extra_args,
                             int max_open_files) {
  // One log per process: a restarted server must not be read from its predecessor's log.
  static std::atomic<int> count{0};
  log_path_ = data_dir + "/serve-" + std::to_string(++count) + ".log";
#ifndef SCENECRDT_BINARY
#define SCENECRDT_BINARY "scenecrdt"
#endif
  std::vector<std::string> args = {SCENECRDT_BINARY, "serve",  "--tcp",
                                   "127.0.0.1:0",    "--http", "off",
                                   "--data",         data_dir, "--no-fsync"};
  args.insert(args.end(), extra_args.begin(), extra_args.end());
  pid_ = fork();
  if (pid_ == 0) {
    const int fd = open(log_path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    dup2(fd, STDERR_FILENO);
    const int null = open("/dev/null", O_RDWR);
    dup2(null, STDIN_FILENO);
    dup2(null, STDOUT_FILENO);
    if (max_open_files > 0) {
      const rlimit limit{static_cast<rlim_t>(max_open_files), static_cast<rlim_t>(max_open_files)};
      setrlimit(RLIMIT_NOFILE, &limit);
    }
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    execv(argv[0], argv.data());
    _exit(127);
  }
  // "tcp://" or, with --tls-cert, "tls://": the same length.
  constexpr std::string_view kListening = "listening tcp://127.0.0.1:";
  constexpr std::string_view kListeningTls = "listening tls://127.0.0.1:";
  WaitUntil(
      [&] {
        const std::string text = log();
        auto at = text.find(kListening);
        if (at == std::string::npos) at = text.find(kListeningTls);
        if (at != std::string::npos) {
          const auto digits = at + kListening.size();
          const auto end = text.find_first_not_of("0123456789", digits);
          if (end != std::string::npos && end > digits) {
            port_ = static_cast<uint16_t>(std::stoi(text.substr(digits, end - digits)));
            return true;
          }
        }
        int status = 0;
        if (waitpid(pid_, &status, WNOHANG) != pid_) return false;
        reaped_ = true;  // it exited before listening (a start error): keep its status
        exit_status_ = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
        return true;
      },
      std::chrono::seconds(60));
}

ServerProcess::~ServerProcess() {
  if (pid_ > 0 && !reaped_) {
    kill(pid_, SIGKILL);
    int status = 0;
    waitpid(pid_, &status, 0);
  }
}

void ServerProcess::Kill(int signal) { kill(pid_, signal); }

int ServerProcess::WaitExit(std::chrono::milliseconds timeout) {
  if (reaped_) return exit_status_;
  int status = 0;
  int result = -1;
  WaitUntil(
      [&] {
        if (waitpid(pid_, &status, WNOHANG) != pid_) return false;
        reaped_ = true;
        result = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
        exit_status_ = result;
        return true;
      },
      timeout);
  return result;
}

std::string ServerProcess::log() const {
  std::ifstream in(log_path_);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

uint16_t ServerProcess::http_port() const {
  // "listening ws://..." or, with --tls-cert, "listening wss://...".
  const std::string text = log();
  std::string_view listening = "listening ws://127.0.0.1:";
  auto at = text.find(listening);
  if (at == std::string::npos) {
    listening = "listening wss://127.0.0.1:";
    at = text.find(listening);
  }
  if (at == std::string::npos) return 0;
  const auto digits = at + listening.size();
  const auto end = text.find_first_not_of("0123456789", digits);
  if (end == std::string::npos || end == digits) return 0;
  return static_cast<uint16_t>(std::stoi(text.substr(digits, end - digits)));
}

CommandResult RunCommand(const std::string& command) {
  CommandResult result;
  FILE* pipe = popen((command + " 2>&1").c_str(), "r");
  if (!pipe) return result;
  char buf[4096];
  std::size_t n = 0;
  while ((n = std::fread(buf, 1, sizeof buf, pipe)) > 0) result.output.append(buf, n);
  const int status = pclose(pipe);
  result.status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return result;
}

// ---- RawConnection ----

RawConnection::RawConnection(uint16_t port, int receive_buffer_bytes) {
  fd_ = socket(AF_INET, SOCK_STREAM, 0);
  if (receive_buffer_bytes > 0) {
    setsockopt(fd_, SOL_SOCKET, SO_RCVBUF, &receive_buffer_bytes, sizeof receive_buffer_bytes);
  }
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(port);
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (connect(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    close(fd_);
    fd_ = -1;
  }
  const int one = 1;
  if (fd_ >= 0) setsockopt(fd_, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
}

RawConnection::~RawConnection() {
  if (fd_ >= 0) close(fd_);
}

bool RawConnection::Send(std::span<const uint8_t> bytes) {
  std::size_t sent = 0;
  while (sent < bytes.size()) {
    const ssize_t n = send(fd_, bytes.data() + sent, bytes.size() - sent, MSG_NOSIGNAL);
    if (n <= 0) return false;
    sent += static_cast<std::size_t>(n);
  }
  return true;
}

std::optional<std::vector<uint8_t>> RawConnection::ReadFrameBytes(
    std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  for (;;) {
    if (auto size = session::PeekFrameSize(in_); size && in_.size() >= *size) {
      std::vector<uint8_t> frame(in_.begin(), in_.begin() + static_cast<std::ptrdiff_t>(*size));
      in_.erase(in_.begin(), in_.begin() + static_cast<std::ptrdiff_t>(*size));
      return frame;
    }
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) return std::nullopt;
    pollfd p{fd_, POLLIN, 0};
    if (poll(&p, 1, static_cast<int>(left.count())) <= 0) return std::nullopt;
    uint8_t buf[65536];
    const ssize_t n = recv(fd_, buf, sizeof buf, 0);
    if (n <= 0) return std::nullopt;
    in_.insert(in_.end(), buf, buf + n);
  }
}

std::optional<session::ErrorFrame> RawConnection::ReadError(std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  for (;;) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    auto bytes = ReadFrameBytes(left);
    if (!bytes) return std::nullopt;
    auto frame = session::ReadFrame(*bytes, {64u << 20});
    if (!frame.has_value()) return std::nullopt;
    if (auto* e = std::get_if<session::ErrorFrame>(&frame.value())) return *e;
  }
}

bool RawConnection::WaitClosed(std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  for (;;) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) return false;
    pollfd p{fd_, POLLIN, 0};
    if (poll(&p, 1, static_cast<int>(left.count())) <= 0) return false;
    uint8_t buf[65536];
    const ssize_t n = recv(fd_, buf, sizeof buf, 0);
    if (n <= 0) return true;
  }
}

int RawConnection::FinishAndReadEnd(std::chrono::milliseconds timeout) {
  shutdown(fd_, SHUT_WR);
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  for (;;) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) return -1;
    pollfd p{fd_, POLLIN, 0};
    if (poll(&p, 1, static_cast<int>(left.count())) <= 0) return -1;
    uint8_t buf[65536];
    const ssize_t n = recv(fd_, buf, sizeof buf, 0);
    if (n == 0) return 0;
    if (n < 0) return errno;
  }
}

std::string RawConnection::ReadUntilClosed(std::chrono::milliseconds timeout) {
  std::string out(in_.begin(), in_.end());
  in_.clear();
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  for (;;) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) return out;
    pollfd p{fd_, POLLIN, 0};
    if (poll(&p, 1, static_cast<int>(left.count())) <= 0) return out;
    char buf[65536];
    const ssize_t n = recv(fd_, buf, sizeof buf, 0);
    if (n <= 0) return out;
    out.append(buf, static_cast<std::size_t>(n));
  }
}

std::optional<session::Welcome> RawConnection::Join(const std::string& scene,
                                                    const std::string& token) {
  session::Hello hello;
  hello.scene = scene;
  hello.token = token;
  if (!SendFrame(hello)) return std::nullopt;
  std::optional<session::Welcome> welcome;
  for (;;) {
    auto bytes = ReadFrameBytes(std::chrono::seconds(10));
    if (!bytes) return std::nullopt;
    auto frame = session::ReadFrame(*bytes, {64u << 20});
    if (!frame.has_value()) return std::nullopt;
    if (auto* w = std::get_if<session::Welcome>(&frame.value())) welcome = *w;
    if (auto* c = std::get_if<session::Crdt>(&frame.value())) {
      if (c->is_state && c->frame_sequence == 0) return welcome;
    }
    if (std::get_if<session::ErrorFrame>(&frame.value())) return std::nullopt;
  }
}

// ---- DclSocket ----

namespace websocket = net::beast::websocket;

DclSocket::DclSocket(uint16_t port, const std::string& target, std::chrono::milliseconds timeout,
                     const std::string& origin)
    : ws_(ioc_) {
  if (!origin.empty()) {
    ws_.set_option(websocket::stream_base::decorator([origin](websocket::request_type& req) {
      req.set(net::beast::http::field::origin, origin);
    }));
  }
  net::error_code ec;
  net::beast::get_lowest_layer(ws_).connect(
      net::tcp::endpoint(net::asio::ip::address_v4::loopback(), port), ec);
  if (ec) return;
  ws_.binary(true);
  ws_.read_message_max(64u << 20);
  // Handlers outlive a timed-out wait: they own what they write (never the caller's stack).
  auto response = std::make_shared<websocket::response_type>();
  auto done = std::make_shared<bool>(false);
  ws_.async_handshake(*response, "127.0.0.1", target,
                      [this, response, done](const net::error_code& e) {
                        *done = true;
                        connected_ = !e;
                        http_status_ = static_cast<int>(response->result_int());
                      });
  RunUntil([&] { return *done; }, timeout);
}

DclSocket::~DclSocket() {
  net::error_code ec;
  net::beast::get_lowest_layer(ws_).close(ec);
}

bool DclSocket::RunUntil(const std::function<bool()>& done, std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  ioc_.restart();
  while (!done()) {
    const auto now = std::chrono::steady_clock::now();
    if (now >= deadline) return false;
    ioc_.run_one_for(deadline - now);
    if (ioc_.stopped()) ioc_.restart();
  }
  return true;
}

void DclSocket::StartRead() {
  if (read_pending_ || read_error_ || !connected_) return;
  read_pending_ = true;
  ws_.async_read(buffer_, [this](const net::error_code& ec, std::size_t) {
    read_pending_ = false;
    if (ec) {
      read_error_ = ec;
      return;
    }
    const auto data = buffer_.cdata();
    const auto* bytes = static_cast<const uint8_t*>(data.data());
    inbox_.emplace_back(bytes, bytes + data.size());
    buffer_.consume(buffer_.size());
    StartRead();
  });
}

bool DclSocket::Send(std::span<const uint8_t> chunk, std::chrono::milliseconds timeout) {
  if (!connected_) return false;
  StartRead();  // keep reading meanwhile, as a transport does
  auto bytes = std::make_shared<std::vector<uint8_t>>(chunk.begin(), chunk.end());
  auto result = std::make_shared<std::optional<bool>>();
  ws_.async_write(net::asio::buffer(*bytes),
                  [bytes, result](const net::error_code& ec, std::size_t) { *result = !ec; });
  return RunUntil([&] { return result->has_value(); }, timeout) && **result;
}

std::optional<std::vector<uint8_t>> DclSocket::Receive(std::chrono::milliseconds timeout) {
  StartRead();
  RunUntil([&] { return !inbox_.empty() || read_error_.has_value(); }, timeout);
  if (inbox_.empty()) return std::nullopt;
  std::vector<uint8_t> message = std::move(inbox_.front());
  inbox_.pop_front();
  return message;
}

std::optional<uint16_t> DclSocket::WaitClose(std::chrono::milliseconds timeout,
                                             std::string* reason) {
  StartRead();
  if (!RunUntil(
          [&] {
            inbox_.clear();
            return read_error_.has_value();
          },
          timeout)) {
    return std::nullopt;
  }
  if (*read_error_ != websocket::error::closed) return std::nullopt;
  if (reason) *reason = std::string(ws_.reason().reason.data(), ws_.reason().reason.size());
  return static_cast<uint16_t>(ws_.reason().code);
}

void DclSocket::Close() {
  if (!connected_ || read_error_) return;
  auto done = std::make_shared<bool>(false);
  ws_.async_close(websocket::close_code::normal, [done](const net::error_code&) { *done = true; });
  RunUntil([&] { return *done; }, std::chrono::seconds(5));
}

void AppendPut(std::vector<uint8_t>& out, uint32_t entity, uint32_t timestamp, float x,
               uint32_t parent) {
  protocol::Transform t;
  t.position = {x, 1.0f, 2.0f};
  t.parent = parent;
  protocol::AppendTransformPut(entity, timestamp, t, out);
}

std::string ReplayHash(const std::vector<std::vector<uint8_t>>& streams) {
  runtime::CrdtStore store;
  for (const auto& s : streams) (void)store.MergeStream(s);
  return store.StateHashHex();
}

std::string HttpGet(uint16_t port, const std::string& path) {
  RawConnection raw(port);
  if (!raw.connected()) return {};
  const std::string request =
      "GET " + path + " HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n";
  if (!raw.Send({reinterpret_cast<const uint8_t*>(request.data()), request.size()})) return {};
  return raw.ReadUntilClosed(std::chrono::seconds(10));
}

double Metric(const std::string& text, const std::string& series) {
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind(series + " ", 0) == 0) return std::stod(line.substr(series.size() + 1));
  }
  return -1;
}

}  // namespace scenecrdt::testing
