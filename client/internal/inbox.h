// SPDX-License-Identifier: Apache-2.0
// Owns the client's inbox (internal: not installed): what the network strand received (frames
// as the connection verified and decoded them, and connection ends), handed to the caller's
// thread under one mutex, with the byte bound that pauses reading (ClientOptions::
// max_inbox_bytes: docs/CLIENT.md) until the caller takes what is there.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <mutex>
#include <vector>

#include "scenecrdt/protocol/result.h"
#include "scenecrdt/protocol/session/envelope.h"

namespace scenecrdt::client::internal {

// A frame as the connection verified and decoded it (one decode per frame: the caller's
// thread does not read it again), or the end of a connection. A Crdt frame's DCL bytes are
// copied into `dcl` (its `data` is re-pointed there when handled); the other frames own their
// fields.
struct InboxItem {
  using TimePoint = std::chrono::steady_clock::time_point;
  uint64_t connection = 0;
  session::Frame frame;         // unused when `closed`
  std::vector<uint8_t> dcl;     // a Crdt frame's data
  std::size_t frame_bytes = 0;  // the frame's size on the wire (the inbox's byte bound)
  bool closed = false;
  Error error{};
  TimePoint received{};
  std::chrono::system_clock::time_point received_wall{};
};

class Inbox {
 public:
  explicit Inbox(std::size_t max_bytes) : max_bytes_(max_bytes) {}

  // Network strand. True when this item took the inbox over its byte bound: the caller
  // pauses reading (once; until TakeAll says to resume).
  bool Push(InboxItem item);
  // Caller's thread: waits until something is there, at most `timeout`.
  void WaitFor(std::chrono::milliseconds timeout);
  // Caller's thread: moves everything into `out` (emptied first). True when reading was
  // paused and should resume.
  bool TakeAll(std::deque<InboxItem>& out);

 private:
  const std::size_t max_bytes_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<InboxItem> items_;
  std::size_t bytes_ = 0;
  bool paused_ = false;
};

}  // namespace scenecrdt::client::internal
