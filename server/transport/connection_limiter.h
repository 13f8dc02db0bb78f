// SPDX-License-Identifier: Apache-2.0
// Owns ConnectionLimiter: the caps on open connections, total (--max-connections) and per
// source address (--max-connections-per-ip), and the small HTTP reserve above the total so
// /healthz and /metrics still answer when the cap is reached. A reserve place is lent before
// the request is read: until its request names /healthz or /metrics (Confirm) it is the
// first to go, the oldest unconfirmed one closed for a newer connection when the reserve is
// full, so half-open TLS handshakes and slow headers cannot hold it. A connection holds a
// ConnectionTicket for its lifetime (through the HTTP -> WebSocket hand-over); dropping the
// ticket frees its place. Thread-safe.
// Bounds and defaults: docs/SERVER.md "Connections and file descriptors".
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <vector>

#include "scenecrdt/net/net.h"

namespace scenecrdt::server {

struct ConnectionCaps {
  uint32_t max_total = 0;     // sessions and HTTP connections together
  uint32_t max_per_ip = 0;    // from one source address
  uint32_t http_reserve = 0;  // extra HTTP connections above max_total (health, metrics)
};

// Connections the server may hold with `nofile` file descriptors: nofile minus the
// server's own (database, listeners, epoll ...: kOwnFds) and the HTTP reserve. At least 1.
uint32_t ConnectionsForFds(uint64_t nofile, uint32_t http_reserve);
// The soft RLIMIT_NOFILE of this process.
uint64_t OpenFileLimit();

class ConnectionTicket;

class ConnectionLimiter {
 public:
  // kReserveEvicting: admitted into the reserve in the place of its oldest unconfirmed
  // connection, which is being closed.
  enum class Verdict : uint8_t { kAdmitted, kReserve, kReserveEvicting, kTotal, kPerIp };
  static constexpr uint32_t kOwnFds = 64;

  explicit ConnectionLimiter(ConnectionCaps caps);

  // A ticket for a new connection from `address` on the HTTP listener (`http`) or the framed
  // TCP one; nullptr when refused, `verdict` says why (kReserve: admitted into the HTTP
  // reserve, plain requests only).
  std::shared_ptr<ConnectionTicket> TryAdmit(const net::asio::ip::address& address, bool http,
                                             Verdict& verdict);
  const ConnectionCaps& caps() const { return caps_; }
  uint32_t open() const;

 private:
  friend class ConnectionTicket;
  struct State {
    std::mutex mu;
    uint32_t total = 0;
    uint32_t reserve = 0;
    std::map<net::asio::ip::address, uint32_t> per_ip;  // at most max_total + reserve entries
    // Reserve tickets in admission order, the unconfirmed ones first to go; stale entries are
    // pruned on admission (at most 2 x http_reserve + 1 entries).
    std::deque<std::weak_ptr<ConnectionTicket>> unconfirmed;
  };
  // The oldest live unconfirmed reserve ticket, marked evicted; nullptr when none. Under the
  // lock; every ticket it locked is added to `seen`, released by the caller after unlocking.
  ConnectionTicket* TakeUnconfirmedLocked(std::vector<std::shared_ptr<ConnectionTicket>>& seen);
  ConnectionCaps caps_;
  std::shared_ptr<State> state_;
};

class ConnectionTicket {
 public:
  ~ConnectionTicket();
  ConnectionTicket(const ConnectionTicket&) = delete;
  ConnectionTicket& operator=(const ConnectionTicket&) = delete;
  // Admitted into the HTTP reserve: only /healthz and /metrics are answered, once Confirmed;
  // never a WebSocket session.
  bool reserve() const { return reserve_; }
  // A reserve connection whose request names /healthz or /metrics keeps its place. False
  // when it was evicted meanwhile (close it).
  bool Confirm();
  // Runs (once, on the admitting thread, or at once if already evicted) when this
  // unconfirmed reserve connection is evicted for a newer one: it must close the connection.
  void OnEvict(std::function<void()> evict);

 private:
  friend class ConnectionLimiter;
  ConnectionTicket(std::shared_ptr<ConnectionLimiter::State> state, net::asio::ip::address address,
                   bool reserve)
      : state_(std::move(state)), address_(address), reserve_(reserve) {}
  std::shared_ptr<ConnectionLimiter::State> state_;
  net::asio::ip::address address_;
  bool reserve_;
  // Guarded by state_->mu.
  bool confirmed_ = false;
  bool evicted_ = false;  // its reserve place went to another ticket
  std::function<void()> evict_;
};

}  // namespace scenecrdt::server
