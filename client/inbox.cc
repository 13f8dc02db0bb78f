// SPDX-License-Identifier: Apache-2.0
// Owns Inbox (client/internal/inbox.h): the hand-over from the network strand to the
// caller's thread, and its byte bound.
#include "scenecrdt/client/internal/inbox.h"

#include <utility>

namespace scenecrdt::client::internal {

bool Inbox::Push(InboxItem item) {
  bool pause = false;
  {
    std::lock_guard<std::mutex> lock(mu_);
    bytes_ += item.frame_bytes;
    items_.push_back(std::move(item));
    if (!paused_ && bytes_ > max_bytes_) pause = paused_ = true;
  }
  cv_.notify_all();
  return pause;
}

void Inbox::WaitFor(std::chrono::milliseconds timeout) {
  std::unique_lock<std::mutex> lock(mu_);
  cv_.wait_for(lock, timeout, [&] { return !items_.empty(); });
}

bool Inbox::TakeAll(std::deque<InboxItem>& out) {
  out.clear();
  std::lock_guard<std::mutex> lock(mu_);
  out.swap(items_);
  bytes_ = 0;
  const bool resume = paused_;
  paused_ = false;
  return resume;
}

}  // namespace scenecrdt::client::internal
