// SPDX-License-Identifier: Apache-2.0
// Owns Departures: a scene's memory of its members' abnormal ends (the peer gone, a failed
// write, an idle or slow-consumer drop), so that a join from the same address and session kind
// within kReconnectWindowMs counts as a reconnect (docs/SERVER.md "Metrics": reconnects by
// evidence). Bounded: kMaxDepartures, the oldest forgotten first. Used on the scene's strand
// only.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>

#include "scenecrdt/net/net.h"
#include "scenecrdt/server/observability/metrics.h"

namespace scenecrdt::server {

class Departures {
 public:
  static constexpr int64_t kReconnectWindowMs = 30000;
  static constexpr std::size_t kMaxDepartures = 64;

  // Whether a session that ended with `reason` may come back as a reconnect: the ends the
  // client did not choose (and the server did not choose for a bad client).
  static bool Abnormal(CloseReason reason) {
    return reason == CloseReason::kPeerGone || reason == CloseReason::kWriteFailed ||
           reason == CloseReason::kIdleTimeout || reason == CloseReason::kSlowConsumer;
  }
  // A member from `address` of `kind` ended abnormally at `now_ms`.
  void Note(const net::asio::ip::address& address, SessionKind kind, int64_t now_ms);
  // Whether one from `address` of `kind` ended abnormally within the window before `now_ms`;
  // that end is forgotten (a later join is no reconnect of it).
  bool Take(const net::asio::ip::address& address, SessionKind kind, int64_t now_ms);

 private:
  struct Departure {
    net::asio::ip::address address;
    SessionKind kind;
    int64_t left_ms;
  };
  std::deque<Departure> departures_;
};

}  // namespace scenecrdt::server
