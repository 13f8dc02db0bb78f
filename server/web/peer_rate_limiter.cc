// SPDX-License-Identifier: Apache-2.0
// Owns the per-address token buckets (see peer_rate_limiter.h).
#include "scenecrdt/server/web/peer_rate_limiter.h"

#include <algorithm>
#include <iterator>

namespace scenecrdt::server {

PeerRateLimiter::PeerRateLimiter(double per_second, double burst, std::size_t max_peers)
    : per_second_(std::max(per_second, 1e-3)),
      burst_(std::max(burst, 1.0)),
      max_peers_(std::max<std::size_t>(max_peers, 1)) {}

void PeerRateLimiter::Refill(Bucket& b, int64_t now_ms) const {
  if (now_ms > b.at_ms) {
    b.tokens =
        std::min(burst_, b.tokens + static_cast<double>(now_ms - b.at_ms) * per_second_ / 1000.0);
    b.at_ms = now_ms;
  }
}

bool PeerRateLimiter::Admit(const net::asio::ip::address& address, int64_t now_ms) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = buckets_.find(address);
  if (it == buckets_.end()) {
    if (buckets_.size() >= max_peers_) {
      for (auto at = buckets_.begin(); at != buckets_.end();) {
        Refill(at->second, now_ms);
        at = at->second.tokens >= burst_ ? buckets_.erase(at) : std::next(at);
      }
    }
    if (buckets_.size() >= max_peers_) {
      if (!overflow_used_) overflow_ = Bucket{burst_, now_ms};
      overflow_used_ = true;
      Refill(overflow_, now_ms);
      if (overflow_.tokens < 1.0) return false;
      overflow_.tokens -= 1.0;
      return true;
    }
    it = buckets_.emplace(address, Bucket{burst_, now_ms}).first;
  }
  Bucket& b = it->second;
  Refill(b, now_ms);
  if (b.tokens < 1.0) return false;
  b.tokens -= 1.0;
  return true;
}

std::size_t PeerRateLimiter::tracked() const {
  std::lock_guard<std::mutex> lock(mu_);
  return buckets_.size();
}

}  // namespace scenecrdt::server
