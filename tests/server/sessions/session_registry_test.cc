// SPDX-License-Identifier: Apache-2.0
// The registry of live sessions (server/sessions/session_registry.h): what the graceful stop
// waits on. Sessions are stood in for by owners without a Session (never dereferenced here).
#include "scenecrdt/server/sessions/session_registry.h"

#include <gtest/gtest.h>

#include <chrono>
#include <memory>
#include <thread>

namespace scenecrdt::server {
namespace {

// A registration that is alive while `owner` is, with no Session behind it.
std::shared_ptr<Session> StandIn(const std::shared_ptr<int>& owner) {
  return std::shared_ptr<Session>(owner, nullptr);
}

TEST(SessionRegistryTest, EmptyOnlyOnceEveryRegistrationLeft) {
  SessionRegistry registry;
  EXPECT_TRUE(registry.WaitUntilEmpty(std::chrono::milliseconds(0)));
  auto owner = std::make_shared<int>(0);
  const uint64_t a = registry.Register(StandIn(owner));
  const uint64_t b = registry.Register(StandIn(owner));
  EXPECT_NE(a, b);
  EXPECT_FALSE(registry.WaitUntilEmpty(std::chrono::milliseconds(1)));
  registry.Unregister(a);
  EXPECT_FALSE(registry.WaitUntilEmpty(std::chrono::milliseconds(1)));
  registry.Unregister(b);
  EXPECT_TRUE(registry.WaitUntilEmpty(std::chrono::milliseconds(0)));
  // A registration whose session is gone still counts until it unregisters (OnClosed does).
  const uint64_t c = registry.Register(StandIn(owner));
  owner.reset();
  EXPECT_TRUE(registry.Live().empty());
  EXPECT_FALSE(registry.WaitUntilEmpty(std::chrono::milliseconds(1)));
  registry.Unregister(c);
  EXPECT_TRUE(registry.WaitUntilEmpty(std::chrono::milliseconds(0)));
}

TEST(SessionRegistryTest, TheLastUnregisterWakesTheWaiter) {
  SessionRegistry registry;
  auto owner = std::make_shared<int>(0);
  const uint64_t id = registry.Register(StandIn(owner));
  std::thread closer([&] { registry.Unregister(id); });
  const auto start = std::chrono::steady_clock::now();
  EXPECT_TRUE(registry.WaitUntilEmpty(std::chrono::seconds(30)));
  closer.join();
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(10));
}

}  // namespace
}  // namespace scenecrdt::server
