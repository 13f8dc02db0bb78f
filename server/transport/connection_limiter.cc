// SPDX-License-Identifier: Apache-2.0
// Owns the connection caps' bookkeeping and the file-descriptor arithmetic behind their
// defaults.
#include "scenecrdt/server/transport/connection_limiter.h"

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
  std::function<void()> evict;
  std::shared_ptr<ConnectionTicket> ticket;
  // Tickets locked from the queue: released after the lock (the last reference runs the
  // destructor, which takes the lock).
  std::vector<std::shared_ptr<ConnectionTicket>> seen;
  {
    std::lock_guard<std::mutex> lock(state_->mu);
    auto it = state_->per_ip.find(address);
    if (it != state_->per_ip.end() && it->second >= caps_.max_per_ip) {
      verdict = Verdict::kPerIp;
      return nullptr;
    }
    const bool reserve = state_->total >= caps_.max_total;
    verdict = Verdict::kAdmitted;
    if (!reserve) {
      ++state_->total;
    } else if (!http) {
      verdict = Verdict::kTotal;
      return nullptr;
    } else if (state_->reserve < caps_.http_reserve) {
      ++state_->reserve;
      verdict = Verdict::kReserve;
    } else if (ConnectionTicket* oldest = TakeUnconfirmedLocked(seen)) {
      // Its place passes to this connection (the count stays); its close frees nothing.
      evict = std::move(oldest->evict_);
      verdict = Verdict::kReserveEvicting;
    } else {
      verdict = Verdict::kTotal;
      return nullptr;
    }
    ++state_->per_ip[address];
    ticket.reset(new ConnectionTicket(state_, address, reserve));
    if (reserve) {
      auto& queue = state_->unconfirmed;
      if (queue.size() > 2u * caps_.http_reserve) {
        // Drop confirmed and closed ones: at most http_reserve live entries stay.
        std::erase_if(queue, [&](const std::weak_ptr<ConnectionTicket>& w) {
          auto t = w.lock();
          const bool stale = !t || t->confirmed_ || t->evicted_;
          if (t) seen.push_back(std::move(t));
          return stale;
        });
      }
      queue.push_back(ticket);
    }
  }
  if (evict) evict();  // outside the lock: it posts a close to the evicted connection
  return ticket;
}

ConnectionTicket* ConnectionLimiter::TakeUnconfirmedLocked(
    std::vector<std::shared_ptr<ConnectionTicket>>& seen) {
  auto& queue = state_->unconfirmed;
  while (!queue.empty()) {
    std::shared_ptr<ConnectionTicket> oldest = queue.front().lock();
    queue.pop_front();
    if (!oldest) continue;
    ConnectionTicket* t = oldest.get();
    seen.push_back(std::move(oldest));
    if (!t->confirmed_ && !t->evicted_) {
      t->evicted_ = true;
      return t;
    }
  }
  return nullptr;
}

uint32_t ConnectionLimiter::open() const {
  std::lock_guard<std::mutex> lock(state_->mu);
  return state_->total + state_->reserve;
}

bool ConnectionTicket::Confirm() {
  std::lock_guard<std::mutex> lock(state_->mu);
  if (evicted_) return false;
  confirmed_ = true;
  evict_ = nullptr;
  return true;
}

void ConnectionTicket::OnEvict(std::function<void()> evict) {
  {
    std::lock_guard<std::mutex> lock(state_->mu);
    if (!evicted_) {
      if (!confirmed_) evict_ = std::move(evict);
      return;
    }
  }
  evict();
}

ConnectionTicket::~ConnectionTicket() {
  std::lock_guard<std::mutex> lock(state_->mu);
  if (evicted_) {
    // Its reserve place already belongs to the connection that evicted it.
  } else if (reserve_) {
    --state_->reserve;
  } else {
    --state_->total;
  }
  auto it = state_->per_ip.find(address_);
  if (it != state_->per_ip.end() && --it->second == 0) state_->per_ip.erase(it);
}

}  // namespace scenecrdt::server
