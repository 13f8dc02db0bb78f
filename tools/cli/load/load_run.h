// SPDX-License-Identifier: Apache-2.0
// Owns the state of one `scenecrdt load` run (tools/cli/load/cmd_load.cc drives it): the clients
// and the shards (a thread and an io_context each) that drive them, the movers with their
// rings of send stamps, the latency histogram and counters, and where each client connects
// from (source addresses spread over 127.0.0.0/8 so no address meets a server's per-address
// cap).
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include "scenecrdt/client/internal/connection.h"

namespace scenecrdt::cli::load {

inline constexpr uint32_t kFirstMover = 1000;
// --world-size: the static entity of client i (a client without movers) is kFirstStatic + i.
inline constexpr uint32_t kFirstStatic = kFirstMover + 10000;
inline constexpr std::size_t kRing = 256;
// Latency histogram: 1 us buckets up to 200 ms, plus the exact maximum.
inline constexpr std::size_t kHistogramBuckets = 200000;
// Clients per source address by default: under `serve`'s default --max-connections-per-ip
// (1024), with room for a few other connections from the same address.
inline constexpr uint32_t kDefaultClientsPerAddress = 1000;

struct Mover {
  uint32_t owner = 0;
  uint32_t timestamp = 0;  // last timestamp sent (touched by the owner's thread only)
  // (timestamp << 32) | microseconds since the run's epoch, per timestamp % kRing: written
  // by the owner's thread, read by every other thread (one atomic word: no torn pairs).
  std::array<std::atomic<uint64_t>, kRing> ring{};
  // --world-size: where it is (x, z; y = 0), a random walk (owner's thread only).
  float x = 0, z = 0;
  uint32_t walk = 0;  // the walk's random state
};

// Written by one shard thread, read by the main thread for the progress line.
struct Totals {
  std::atomic<uint64_t> sent_frames{0};
  std::atomic<uint64_t> sent_messages{0};
  std::atomic<uint64_t> received_frames{0};
  std::atomic<uint64_t> received_messages{0};
  std::atomic<uint64_t> acks{0};
  std::atomic<uint64_t> refusals{0};
  std::atomic<uint64_t> samples{0};
  std::atomic<int64_t> max_ns{0};
};

struct LoadClient {
  uint32_t index = 0;
  std::shared_ptr<client::Connection> connection;
  bool ready = false;
  bool closed = false;
  uint64_t next_frame = 1;
  std::vector<uint32_t> movers;  // owned mover indices
};

// One thread, one io_context and the clients it drives (client index % threads).
struct Shard {
  net::asio::io_context ioc{1};
  std::vector<LoadClient*> clients;
  std::vector<std::atomic<uint32_t>> histogram =
      std::vector<std::atomic<uint32_t>>(kHistogramBuckets + 1);
  Totals totals;
  std::string last_refusal;      // read after the thread ended
  std::string last_close_error;  // a connection that ended in error (same)
  net::asio::steady_timer timer{ioc};
  std::thread thread;
};

struct Run {
  // Declared before the clients: members are destroyed in reverse order, and each client's
  // connection (its timers and sockets) must go before the io_context of its shard.
  std::vector<std::unique_ptr<Shard>> shards;
  std::vector<std::unique_ptr<LoadClient>> clients;
  std::vector<Mover> movers;
  std::atomic<bool> measuring{false};
  std::atomic<uint32_t> ready{0};
  // Clients whose connection ended before their state arrived (refused, cut): the join phase
  // ends as soon as every client is ready or gone.
  std::atomic<uint32_t> gone_before_ready{0};
  bool kernel_stamps = false;
  int64_t epoch_ns = 0;  // on the stamping clock
  // --world-size S (0: off, movers circle the origin): movers walk over an S x S square, each
  // client without movers has a static entity at its own spot (static_spots, x and z).
  double world_size = 0;
  std::vector<std::array<float, 2>> static_spots;

  int64_t Now() const;
  // On the client's shard thread.
  void OnFrame(Shard& shard, LoadClient& c, const session::Frame& frame);
  void OnClosed(LoadClient& c);
  void Send(Shard& shard, LoadClient& c, std::span<const uint32_t> mover_indices, uint64_t tick);
  uint64_t Sum(std::atomic<uint64_t> Totals::*field) const;
  int64_t MaxNs() const;
  double Percentile(double p) const;  // ms
  // --world-size: the entity a client's interest follows (its first mover, else its static
  // entity) and where it is now.
  uint32_t OwnEntity(const LoadClient& c) const;
  std::array<float, 2> Spot(const LoadClient& c) const;
};

// Where clients connect from: client i binds first + i / per_address (IPv4, host order).
struct SourceAddresses {
  bool enabled = false;         // off: the kernel picks (an IPv6 or mixed server list)
  uint32_t first = 0x7f000001;  // 127.0.0.1
  uint32_t per_address = kDefaultClientsPerAddress;

  // The dotted address of client `index`; empty when not enabled.
  std::string For(uint32_t index) const;
  // Source addresses the run uses for `clients` clients.
  uint32_t Count(uint32_t clients) const;
};

// Reads "127.A.B.C" into host order; nullopt unless it is in 127.0.0.0/8.
std::optional<uint32_t> ParseLoopbackV4(const std::string& text);

// utime + stime of this process, in seconds.
double CpuSecondsSelf();
// utime + stime of another process from /proc/PID/stat, in seconds; negative when unknown.
double CpuSecondsOf(uint64_t pid);
// Raises the soft RLIMIT_NOFILE towards the hard one (at most 65536): each client is a file
// descriptor, and a soft limit of 1024 would stop `--clients 2000` before any server cap.
void RaiseOpenFileLimit();

}  // namespace scenecrdt::cli::load
