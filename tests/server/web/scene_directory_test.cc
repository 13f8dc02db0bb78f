// SPDX-License-Identifier: Apache-2.0
// Owner: server/web/scene_directory.*, server/web/peer_rate_limiter.*. Listings asked while a read
// of the stored names runs share it, the read runs on the directory's thread (never the caller's,
// a network thread in the server), a fresh read is reused, a failing source is logged,
// counted and answered as incomplete; the per-address buckets refill and stay bounded.
#include "scenecrdt/server/web/scene_directory.h"

#include <gtest/gtest.h>

#include <atomic>
#include <condition_variable>
#include <mutex>
#include <thread>
#include <vector>

#include "tests/wait_until.h"

namespace scenecrdt::testing {
namespace {

using namespace std::chrono_literals;
using server::SceneDirectory;
using server::StoredScenes;
using server::StoredScenesPtr;

TEST(SceneDirectoryTest, WaitingListingsShareOneReadOffTheCallersThread) {
  std::mutex mu;
  std::condition_variable cv;
  bool release = false;
  std::vector<std::thread::id> read_on;
  server::Metrics metrics;
  server::EventLog log([](std::string_view) {});
  SceneDirectory directory(
      [&](std::size_t max) -> Result<StoredScenes> {
        std::unique_lock<std::mutex> lock(mu);
        read_on.push_back(std::this_thread::get_id());
        cv.wait(lock, [&] { return release; });  // a slow store: listings pile up meanwhile
        EXPECT_EQ(max, server::kMaxListedScenes);
        StoredScenes out;
        out.names = {"a", "b"};
        return out;
      },
      metrics, log);
  directory.Start();
  std::atomic<int> answered{0};
  std::vector<std::thread::id> answered_on(5);
  for (int i = 0; i < 5; ++i) {
    directory.List([&, i](StoredScenesPtr s) {
      ASSERT_TRUE(s);
      EXPECT_EQ(s->names.size(), 2u);
      EXPECT_TRUE(s->complete);
      answered_on[static_cast<std::size_t>(i)] = std::this_thread::get_id();
      ++answered;
    });
  }
  ASSERT_TRUE(WaitUntil([&] {
    std::lock_guard<std::mutex> lock(mu);
    return !read_on.empty();
  }));
  EXPECT_EQ(answered.load(), 0);  // List returned at once, before the store answered
  {
    std::lock_guard<std::mutex> lock(mu);
    release = true;
  }
  cv.notify_all();
  ASSERT_TRUE(WaitUntil([&] { return answered.load() == 5; }));
  EXPECT_EQ(directory.reads(), 1u);
  EXPECT_NE(read_on[0], std::this_thread::get_id());
  for (const auto& id : answered_on) EXPECT_EQ(id, read_on[0]);
  // Fresh for kFreshMs: the next listing reuses it.
  directory.List([&](StoredScenesPtr) { ++answered; });
  ASSERT_TRUE(WaitUntil([&] { return answered.load() == 6; }));
  EXPECT_EQ(directory.reads(), 1u);
  directory.Stop();
  // After Stop: answered at once, incomplete.
  bool stopped = false;
  directory.List([&](StoredScenesPtr s) { stopped = !s->complete && !s->error.empty(); });
  EXPECT_TRUE(stopped);
}

TEST(SceneDirectoryTest, FailingSourceIsLoggedCountedAndIncomplete) {
  server::Metrics metrics;
  std::mutex mu;
  std::string lines;
  server::EventLog log([&](std::string_view line) {
    std::lock_guard<std::mutex> lock(mu);
    lines.append(line);
  });
  SceneDirectory directory(
      [](std::size_t) -> Result<StoredScenes> {
        return MakeError(ErrorCode::kUnavailable, "redis connection lost");
      },
      metrics, log);
  directory.Start();
  std::atomic<bool> done{false};
  StoredScenesPtr got;
  directory.List([&](StoredScenesPtr s) {
    got = s;
    done = true;
  });
  ASSERT_TRUE(WaitUntil([&] { return done.load(); }));
  EXPECT_FALSE(got->complete);
  EXPECT_EQ(got->error, "redis connection lost");
  EXPECT_EQ(metrics.scene_list_failures.load(), 1u);
  std::lock_guard<std::mutex> lock(mu);
  EXPECT_NE(lines.find("scene_list_failed"), std::string::npos) << lines;
}

TEST(PeerRateLimiterTest, BucketsRefillAndTheTableStaysBounded) {
  server::PeerRateLimiter rate(/*per_second=*/5, /*burst=*/3, /*max_peers=*/2);
  const auto a = net::asio::ip::make_address("10.0.0.1");
  const auto b = net::asio::ip::make_address("10.0.0.2");
  const auto c = net::asio::ip::make_address("10.0.0.3");
  for (int i = 0; i < 3; ++i) EXPECT_TRUE(rate.Admit(a, 1000));
  EXPECT_FALSE(rate.Admit(a, 1000));
  for (int i = 0; i < 3; ++i) EXPECT_TRUE(rate.Admit(b, 1000));  // a bucket of its own
  EXPECT_FALSE(rate.Admit(a, 1100));
  EXPECT_TRUE(rate.Admit(a, 1200));  // 200 ms at 5 a second: one token
  // The table is full (a, b) and neither bucket is full again: c shares the overflow bucket.
  EXPECT_TRUE(rate.Admit(c, 1200));
  EXPECT_EQ(rate.tracked(), 2u);
  // Later both refilled: forgotten, c gets its own.
  EXPECT_TRUE(rate.Admit(c, 10000));
  EXPECT_EQ(rate.tracked(), 1u);
}

}  // namespace
}  // namespace scenecrdt::testing
