// SPDX-License-Identifier: Apache-2.0
// Owns PeerRateLimiter: a token bucket per source address for one kind of request (the scene
// listings of the viewer: web_routes.h). The table holds at most max_peers addresses: when it
// is full, the buckets that refilled completely are forgotten first (they hold no state), and
// if none did, the newcomer shares one overflow bucket. Time is passed in. Thread-safe.
#pragma once

#include <cstdint>
#include <map>
#include <mutex>

#include "scenecrdt/net/net.h"

namespace scenecrdt::server {

class PeerRateLimiter {
 public:
  // `per_second`: refill rate; `burst`: bucket size (both >= 1).
  PeerRateLimiter(double per_second, double burst, std::size_t max_peers);

  // Takes one token from `address`'s bucket; false when it is empty.
  bool Admit(const net::asio::ip::address& address, int64_t now_ms);
  std::size_t tracked() const;

 private:
  struct Bucket {
    double tokens = 0;
    int64_t at_ms = 0;
  };
  // Refills `b` to `now_ms`.
  void Refill(Bucket& b, int64_t now_ms) const;

  double per_second_;
  double burst_;
  std::size_t max_peers_;
  mutable std::mutex mu_;
  std::map<net::asio::ip::address, Bucket> buckets_;  // at most max_peers_ entries
  Bucket overflow_;
  bool overflow_used_ = false;
};

}  // namespace scenecrdt::server
