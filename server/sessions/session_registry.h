// SPDX-License-Identifier: Apache-2.0
// Owns SessionRegistry: every session alive, held weakly, for what walks them all (the graceful
// stop, the access reload). A session registers when it starts and unregisters when it has
// closed (session.cc); the Server owns the one registry.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <vector>

namespace scenecrdt::server {

class Session;

// Thread-safe (one mutex).
class SessionRegistry {
 public:
  // Holds `session` weakly; the id to unregister it with.
  uint64_t Register(const std::shared_ptr<Session>& session);
  void Unregister(uint64_t id);
  // The registered sessions still alive, in registration order.
  std::vector<std::shared_ptr<Session>> Live();
  // Waits until no session is registered, at most `timeout`; true when none is.
  bool WaitUntilEmpty(std::chrono::milliseconds timeout);

 private:
  std::mutex mu_;
  std::condition_variable emptied_;
  std::map<uint64_t, std::weak_ptr<Session>> sessions_;
  uint64_t next_id_ = 1;
};

}  // namespace scenecrdt::server
