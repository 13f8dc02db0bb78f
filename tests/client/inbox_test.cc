// SPDX-License-Identifier: Apache-2.0
// Tests the client's inbox (client/internal/inbox.h): the byte bound pauses reading once, a
// take resumes it once, the order is kept, and a wait returns on the first item.
#include "scenecrdt/client/internal/inbox.h"

#include <gtest/gtest.h>

#include <chrono>
#include <deque>
#include <future>
#include <thread>

namespace scenecrdt::client::internal {
namespace {

InboxItem Item(uint64_t connection, std::size_t bytes) {
  InboxItem item;
  item.connection = connection;
  item.frame_bytes = bytes;
  return item;
}

TEST(InboxTest, TheByteBoundPausesOnceAndATakeResumesOnce) {
  Inbox inbox(100);
  EXPECT_FALSE(inbox.Push(Item(1, 60)));
  EXPECT_FALSE(inbox.Push(Item(2, 40)));   // at the bound, not over it
  EXPECT_TRUE(inbox.Push(Item(3, 1)));     // over it: pause
  EXPECT_FALSE(inbox.Push(Item(4, 500)));  // paused already: said once
  std::deque<InboxItem> out{Item(99, 0)};
  EXPECT_TRUE(inbox.TakeAll(out));  // resume
  ASSERT_EQ(out.size(), 4u);        // emptied first, then every item in order
  for (uint64_t i = 0; i < 4; ++i) EXPECT_EQ(out[i].connection, i + 1);
  EXPECT_FALSE(inbox.TakeAll(out));
  EXPECT_TRUE(out.empty());
  // The count starts again from zero after a take.
  EXPECT_FALSE(inbox.Push(Item(5, 100)));
  EXPECT_TRUE(inbox.Push(Item(6, 1)));
}

TEST(InboxTest, AWaitReturnsOnTheFirstItemAndTimesOutWhenEmpty) {
  Inbox inbox(1 << 20);
  const auto t0 = std::chrono::steady_clock::now();
  inbox.WaitFor(std::chrono::milliseconds(20));
  EXPECT_GE(std::chrono::steady_clock::now() - t0, std::chrono::milliseconds(20));
  auto waiter = std::async(std::launch::async, [&] {
    inbox.WaitFor(std::chrono::seconds(30));
    std::deque<InboxItem> out;
    inbox.TakeAll(out);
    return out.size();
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(10));
  inbox.Push(Item(1, 8));
  ASSERT_EQ(waiter.wait_for(std::chrono::seconds(10)), std::future_status::ready);
  EXPECT_EQ(waiter.get(), 1u);
}

}  // namespace
}  // namespace scenecrdt::client::internal
