// SPDX-License-Identifier: Apache-2.0
// Owns the cumulative acks and the flush waiters of one scene.
#include "scenecrdt/server/scene/ack_book.h"

#include <algorithm>

namespace scenecrdt::server {

int AckBook::ClassOf(uint64_t store_sequence) const {
  if (store_sequence <= durable_) return 0;
  return store_sequence <= submitted_ ? 1 : 2;
}

void AckBook::Add(uint64_t store_sequence, uint64_t member, uint64_t frame_sequence) {
  auto [it, fresh] = members_.try_emplace(member);
  Waiter& w = it->second;
  if (fresh) {
    w.member = member;
    w.order = next_order_++;
  }
  if (!w.checkpoints.empty()) {
    Checkpoint& last = w.checkpoints.back();
    if (ClassOf(last.store_sequence) == ClassOf(store_sequence)) {
      last.store_sequence = std::max(last.store_sequence, store_sequence);
      last.frame_sequence = std::max(last.frame_sequence, frame_sequence);
      return;
    }
  }
  w.checkpoints.push_back({store_sequence, frame_sequence});
}

void AckBook::Submitted(uint64_t target) {
  submitted_ = std::max(submitted_, target);
  // What was after the previous commit is covered by this one: fold it into one checkpoint.
  for (auto& [member, w] : members_) {
    auto& cps = w.checkpoints;
    std::vector<Checkpoint> kept;
    for (const Checkpoint& c : cps) {
      if (!kept.empty() && ClassOf(kept.back().store_sequence) == ClassOf(c.store_sequence)) {
        kept.back().store_sequence = std::max(kept.back().store_sequence, c.store_sequence);
        kept.back().frame_sequence = std::max(kept.back().frame_sequence, c.frame_sequence);
      } else {
        kept.push_back(c);
      }
    }
    cps.swap(kept);
  }
}

std::vector<const AckBook::Waiter*> AckBook::InOrder() const {
  std::vector<const Waiter*> order;
  order.reserve(members_.size());
  for (const auto& [member, w] : members_) order.push_back(&w);
  std::sort(order.begin(), order.end(),
            [](const Waiter* a, const Waiter* b) { return a->order < b->order; });
  return order;
}

std::vector<std::pair<uint64_t, uint64_t>> AckBook::TakeDurable(uint64_t durable) {
  durable_ = std::max(durable_, durable);
  std::vector<std::pair<uint64_t, uint64_t>> acks;  // member, frame sequence
  std::vector<uint64_t> done;
  for (const Waiter* cw : InOrder()) {
    Waiter& w = members_.at(cw->member);
    auto& cps = w.checkpoints;
    const auto durable_end = std::find_if(
        cps.begin(), cps.end(), [&](const Checkpoint& c) { return c.store_sequence > durable_; });
    if (durable_end == cps.begin()) continue;
    uint64_t highest = 0;
    for (auto c = cps.begin(); c != durable_end; ++c)
      highest = std::max(highest, c->frame_sequence);
    acks.emplace_back(w.member, highest);
    cps.erase(cps.begin(), durable_end);
    if (cps.empty()) done.push_back(w.member);
  }
  for (const uint64_t member : done) members_.erase(member);
  return acks;
}

std::vector<uint64_t> AckBook::Waiting() const {
  std::vector<uint64_t> members;
  for (const Waiter* w : InOrder()) members.push_back(w->member);
  return members;
}

std::size_t AckBook::checkpoints() const {
  std::size_t n = 0;
  for (const auto& [member, w] : members_) n += w.checkpoints.size();
  return n;
}

void AckBook::ReleaseWaiters() {
  std::vector<std::function<void()>> waiters;
  waiters.swap(waiters_);
  for (auto& w : waiters) w();
}

}  // namespace scenecrdt::server
