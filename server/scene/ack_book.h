// SPDX-License-Identifier: Apache-2.0
// Owns AckBook: what waits for a scene's durable point (docs/SERVER.md "Persistence"). Each
// submitted frame that merged waits, with the store sequence it reached, until a commit makes
// that sequence durable; then each member gets one cumulative Ack (its highest frame
// sequence). Flush waiters (Scene::Flush: shutdown, tools) wait until everything merged is
// durable and acked. One pending entry per merged frame until a commit covers it (the
// sessions' token buckets bound how fast they come). Used on the scene's strand only.
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <utility>
#include <vector>

namespace scenecrdt::server {

class AckBook {
 public:
  // A frame of `member` merged at `store_sequence`.
  void Add(uint64_t store_sequence, uint64_t member, uint64_t frame_sequence) {
    pending_.push_back({store_sequence, member, frame_sequence});
  }
  // The acks for everything durable at `durable`: one (member, highest frame sequence) per
  // member, in the order they first appear; they are no longer pending.
  std::vector<std::pair<uint64_t, uint64_t>> TakeDurable(uint64_t durable);
  // The members with frames waiting for an ack, each once, in the order they first appear.
  std::vector<uint64_t> Waiting() const;
  bool empty() const { return pending_.empty(); }

  void AddWaiter(std::function<void()> waiter) { waiters_.push_back(std::move(waiter)); }
  bool has_waiters() const { return !waiters_.empty(); }
  // Runs and forgets every flush waiter.
  void ReleaseWaiters();

 private:
  struct Pending {
    uint64_t store_sequence;
    uint64_t member;
    uint64_t frame_sequence;
  };
  std::deque<Pending> pending_;
  std::vector<std::function<void()>> waiters_;
};

}  // namespace scenecrdt::server
