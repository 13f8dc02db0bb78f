// SPDX-License-Identifier: Apache-2.0
// Owns the connection caps' bookkeeping and the file-descriptor arithmetic behind their
// defaults.
#include "scenecrdt/server/connection_limiter.h"

#include <sys/resource.h>

#include <algorithm>

namespace scenecrdt::server {

uint32_t ConnectionsForFds(uint64_t nofile, uint32_t http_reserve) {
  const uint64_t overhead = uint64_t{ConnectionLimiter::kOwnFds} + http_reserve;
  if (nofile <= overhead) return 1;
  return static_cast<uint32_t>(std::min<uint64_t>(nofile - overhead, UINT32_MAX));
}

uint64_t OpenFileLimit() {
  rlimit limit{};
  if (getrlimit(RLIMIT_NOFILE, &limit) != 0 || limit.rlim_cur == RLIM_INFINITY) return 1u << 20;
  return limit.rlim_cur;
}

ConnectionLimiter::ConnectionLimiter(ConnectionCaps caps)
    : caps_(caps), state_(std::make_shared<State>()) {}

std::shared_ptr<ConnectionTicket> ConnectionLimiter::TryAdmit(const net::asio::ip::address& address,
                                                              bool http, Verdict& verdict) {
  std::lock_guard<std::mutex> lock(state_->mu);
  auto it = state_->per_ip.find(address);
  if (it != state_->per_ip.end() && it->second >= caps_.max_per_ip) {
    verdict = Verdict::kPerIp;
    return nullptr;
  }
  bool reserve = false;
  if (state_->total >= caps_.max_total) {
    if (!http || state_->reserve >= caps_.http_reserve) {
      verdict = Verdict::kTotal;
      return nullptr;
    }
    reserve = true;
    ++state_->reserve;
  } else {
    ++state_->total;
  }
  ++state_->per_ip[address];
  verdict = reserve ? Verdict::kReserve : Verdict::kAdmitted;
  return std::shared_ptr<ConnectionTicket>(new ConnectionTicket(state_, address, reserve));
}

uint32_t ConnectionLimiter::open() const {
  std::lock_guard<std::mutex> lock(state_->mu);
  return state_->total + state_->reserve;
}

ConnectionTicket::~ConnectionTicket() {
  std::lock_guard<std::mutex> lock(state_->mu);
  if (reserve_) {
    --state_->reserve;
  } else {
    --state_->total;
  }
  auto it = state_->per_ip.find(address_);
  if (it != state_->per_ip.end() && --it->second == 0) state_->per_ip.erase(it);
}

}  // namespace scenecrdt::server
