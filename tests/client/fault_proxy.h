// SPDX-License-Identifier: Apache-2.0
// Owns FaultProxy (test support, client resilience tests): a loopback TCP proxy between
// clients and a server that injects what a bad network does to a byte stream: connections
// cut, bytes stalled or delayed, bytes dropped (which corrupts the stream from there on), new
// connections refused. On command, or at random from a seed (yojimbo's network simulator,
// applied to TCP). It runs its own io_context thread; every method is thread-safe.
//
// Bounded: each direction of a link buffers at most 1 MiB, then stops reading (TCP
// backpressure reaches the sender); the number of links is whatever the tests open.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <thread>

#include "scenecrdt/net/net.h"

namespace scenecrdt::client::test {

enum class Direction : uint8_t { kToServer = 0, kToClient = 1 };

// Applied to every chunk read from either side (a chunk is what one read returned).
struct RandomFaults {
  double cut_probability = 0.0;   // cut the link (both sides closed)
  double drop_probability = 0.0;  // drop 1..3 bytes of the chunk (corrupts the stream)
  uint32_t min_delay_ms = 0;      // hold the chunk for a delay drawn in [min, max]; order kept
  uint32_t max_delay_ms = 0;
};

struct FaultProxyStats {
  uint64_t links_accepted = 0;  // forwarded to the server
  uint64_t links_refused = 0;   // closed at once while not accepting
  uint64_t cuts = 0;            // links cut (commands, random faults, either side closing)
  uint64_t random_cuts = 0;
  uint64_t chunks_dropped = 0;
  uint64_t bytes_dropped = 0;
  uint64_t bytes_forwarded[2] = {0, 0};  // by Direction
};

class FaultProxy {
 public:
  // Listens on 127.0.0.1 (ephemeral port) and forwards to 127.0.0.1:upstream_port.
  FaultProxy(uint16_t upstream_port, uint64_t seed);
  ~FaultProxy();
  FaultProxy(const FaultProxy&) = delete;
  FaultProxy& operator=(const FaultProxy&) = delete;

  uint16_t port() const { return port_; }
  std::string url() const { return "tcp://127.0.0.1:" + std::to_string(port_); }

  // Where new links go (a restarted server on another port).
  void SetUpstream(uint16_t port);
  // Cuts every link now (both sockets closed; buffered bytes lost).
  void CutAll();
  // Off: new connections are accepted and closed at once (a server that is down).
  void SetAccepting(bool on);
  // On: bytes in that direction are held (buffered up to the bound) until turned off.
  void Stall(Direction direction, bool on);
  // The next `bytes` bytes read in that direction (on any link) are discarded.
  void DropNext(Direction direction, std::size_t bytes);
  void SetRandomFaults(const RandomFaults& faults);

  FaultProxyStats stats() const;
  // Links currently open (blocks until the proxy thread answers).
  std::size_t live_links();

 private:
  struct Link;
  struct Pipe;
  void Accept();
  void StartLink(std::shared_ptr<Link> link);
  void Read(const std::shared_ptr<Link>& link, int dir);
  void Pump(const std::shared_ptr<Link>& link, int dir);
  void Cut(const std::shared_ptr<Link>& link);
  double Unit();

  net::asio::io_context ioc_;
  std::optional<net::asio::executor_work_guard<net::asio::io_context::executor_type>> work_;
  net::tcp::acceptor acceptor_;
  uint16_t port_ = 0;
  std::thread thread_;

  // Proxy thread only.
  std::set<std::shared_ptr<Link>> links_;
  uint16_t upstream_port_;
  bool accepting_ = true;
  bool stalled_[2] = {false, false};
  std::size_t drop_next_[2] = {0, 0};
  RandomFaults faults_;
  std::mt19937_64 random_;

  // Any thread.
  std::atomic<uint64_t> links_accepted_{0};
  std::atomic<uint64_t> links_refused_{0};
  std::atomic<uint64_t> cuts_{0};
  std::atomic<uint64_t> random_cuts_{0};
  std::atomic<uint64_t> chunks_dropped_{0};
  std::atomic<uint64_t> bytes_dropped_{0};
  std::atomic<uint64_t> bytes_forwarded_[2] = {0, 0};
};

}  // namespace scenecrdt::client::test
