// SPDX-License-Identifier: Apache-2.0
// Owns the registry of live sessions (session_registry.h).
#include "scenecrdt/server/sessions/session_registry.h"

namespace scenecrdt::server {

uint64_t SessionRegistry::Register(const std::shared_ptr<Session>& session) {
  std::lock_guard<std::mutex> lock(mu_);
  const uint64_t id = next_id_++;
  sessions_.emplace(id, session);
  return id;
}

void SessionRegistry::Unregister(uint64_t id) {
  bool empty = false;
  {
    std::lock_guard<std::mutex> lock(mu_);
    sessions_.erase(id);
    empty = sessions_.empty();
  }
  if (empty) emptied_.notify_all();
}

std::vector<std::shared_ptr<Session>> SessionRegistry::Live() {
  std::vector<std::shared_ptr<Session>> out;
  std::lock_guard<std::mutex> lock(mu_);
  for (auto& [id, weak] : sessions_) {
    if (auto session = weak.lock()) out.push_back(std::move(session));
  }
  return out;
}

bool SessionRegistry::WaitUntilEmpty(std::chrono::milliseconds timeout) {
  std::unique_lock<std::mutex> lock(mu_);
  return emptied_.wait_for(lock, timeout, [this] { return sessions_.empty(); });
}

}  // namespace scenecrdt::server
