// SPDX-License-Identifier: Apache-2.0
// Owns the cumulative acks and the flush waiters of one scene.
#include "scenecrdt/server/scene/ack_book.h"

#include <algorithm>

namespace scenecrdt::server {

std::vector<std::pair<uint64_t, uint64_t>> AckBook::TakeDurable(uint64_t durable) {
  std::vector<std::pair<uint64_t, uint64_t>> acks;  // member, frame sequence
  while (!pending_.empty() && pending_.front().store_sequence <= durable) {
    const Pending& a = pending_.front();
    auto it =
        std::find_if(acks.begin(), acks.end(), [&](const auto& p) { return p.first == a.member; });
    if (it == acks.end()) {
      acks.emplace_back(a.member, a.frame_sequence);
    } else {
      it->second = std::max(it->second, a.frame_sequence);
    }
    pending_.pop_front();
  }
  return acks;
}

std::vector<uint64_t> AckBook::Waiting() const {
  std::vector<uint64_t> members;
  for (const Pending& a : pending_) {
    if (std::find(members.begin(), members.end(), a.member) == members.end()) {
      members.push_back(a.member);
    }
  }
  return members;
}

void AckBook::ReleaseWaiters() {
  std::vector<std::function<void()>> waiters;
  waiters.swap(waiters_);
  for (auto& w : waiters) w();
}

}  // namespace scenecrdt::server
