// SPDX-License-Identifier: Apache-2.0
// Owns AckBook: what waits for a scene's durable point (docs/SERVER.md "Persistence"). Each
// submitted frame that merged waits, with the store sequence it reached, until a commit makes
// that sequence durable; then each member gets one cumulative Ack (its highest frame
// sequence). Flush waiters (Scene::Flush: shutdown, tools) wait until everything merged is
// durable and acked. Used on the scene's strand only.
//
// Memory: at most three checkpoints per member with frames waiting, however long commits fail.
// Acks are cumulative, so a member's frames that become durable at the same moment need one
// checkpoint: those already durable, those the submitted commit covers (Submitted: a commit
// covers everything merged before it), and those after it (the next commit covers them all).
// Merging within one of these classes never acks a frame early and never late.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <unordered_map>
#include <utility>
#include <vector>

namespace scenecrdt::server {

class AckBook {
 public:
  // A frame of `member` merged at `store_sequence` (never below an earlier Add's).
  void Add(uint64_t store_sequence, uint64_t member, uint64_t frame_sequence);
  // A commit of everything up to `target` (the store sequence now) was submitted.
  void Submitted(uint64_t target);
  // The acks for everything durable at `durable` (a submitted target, or the last durable
  // point again): one (member, highest frame sequence) per member, in the order the members
  // first appear; they are no longer pending.
  std::vector<std::pair<uint64_t, uint64_t>> TakeDurable(uint64_t durable);
  // The members with frames waiting for an ack, each once, in the order they first appear.
  std::vector<uint64_t> Waiting() const;
  bool empty() const { return members_.empty(); }
  // Checkpoints held (at most 3 per waiting member).
  std::size_t checkpoints() const;

  void AddWaiter(std::function<void()> waiter) { waiters_.push_back(std::move(waiter)); }
  bool has_waiters() const { return !waiters_.empty(); }
  // Runs and forgets every flush waiter.
  void ReleaseWaiters();

 private:
  struct Checkpoint {
    uint64_t store_sequence;
    uint64_t frame_sequence;  // the member's highest frame at or below store_sequence
  };
  struct Waiter {
    uint64_t member;
    uint64_t order;  // when it first appeared (Waiting and TakeDurable keep this order)
    std::vector<Checkpoint> checkpoints;  // ascending store sequences, one per class
  };
  // 0: durable already, 1: covered by the submitted commit, 2: after it.
  int ClassOf(uint64_t store_sequence) const;
  std::vector<const Waiter*> InOrder() const;

  std::unordered_map<uint64_t, Waiter> members_;
  uint64_t next_order_ = 0;
  uint64_t durable_ = 0;
  uint64_t submitted_ = 0;
  std::vector<std::function<void()>> waiters_;
};

}  // namespace scenecrdt::server
