// SPDX-License-Identifier: Apache-2.0
// Owns ServerContext: what scenes and sessions share (io_context, configuration, auth,
// metrics, persistence, registries), and the SharedFrame currency of the fan-out.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string_view>
#include <vector>

#include "scenecrdt/net/net.h"
#include "scenecrdt/server/auth/access_control.h"
#include "scenecrdt/server/auth/origin_policy.h"
#include "scenecrdt/server/config.h"
#include "scenecrdt/server/observability/event_log.h"
#include "scenecrdt/server/observability/metrics.h"

namespace scenecrdt::server {

class CommitLog;
class Persistence;
class Scene;
class SceneDirectory;
class Session;

// One encoded, size-prefixed envelope frame, built once and shared by every session queue
// that sends it (a broadcast is encoded once, never once per session).
using SharedFrame = std::shared_ptr<const std::vector<uint8_t>>;

inline SharedFrame MakeShared(std::vector<uint8_t> bytes) {
  return std::make_shared<const std::vector<uint8_t>>(std::move(bytes));
}

inline int64_t NowMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// What deleting a scene did (the admin API; Scene::Delete). `ok` false when its rows could not
// be erased (the commit failure is logged by the storage health; the rows stay, the members
// were closed and the scene left memory all the same).
struct SceneDeletion {
  bool ok = false;
  std::size_t entities = 0;  // in its state when it was deleted
  std::size_t sessions = 0;  // members closed
  uint64_t rows = 0;         // register, tombstone and append rows erased
};

class ServerContext {
 public:
  virtual ~ServerContext() = default;
  virtual net::asio::io_context& ioc() = 0;
  virtual const ServerConfig& config() const = 0;
  // Who may join which scene (the --auth table, signed access tokens, or open mode).
  virtual const AccessControl& auth() const = 0;
  // Which browser pages may send requests (--allowed-origins).
  virtual const OriginPolicy& origins() const = 0;
  virtual Metrics& metrics() = 0;
  virtual const EventLog& log() const = 0;
  virtual Persistence& persistence() = 0;
  // Where scenes send their flushes and, with --redis, where their state and other nodes'
  // changes come from: SQLite, or the cluster's Redis streams (storage/commit_log.h).
  virtual CommitLog& commits() = 0;
  // The stored scene names for the viewer's list, read off the network threads (SQLite or
  // Redis); nullptr: list the scenes in memory only.
  virtual SceneDirectory* scene_directory() { return nullptr; }
  virtual uint64_t incarnation() const = 0;
  // The bound listener ports (0: that listener is off); hints for peers on the wrong port.
  virtual uint16_t tcp_port() const = 0;
  virtual uint16_t http_port() const = 0;
  // The scene called `name`, created on first use and never evicted (server-side writers such
  // as the demo). Thread-safe. nullptr while stopping or when it cannot be loaded.
  virtual Scene* FindOrCreateScene(std::string_view name) = 0;
  // The scene called `name` for a session, loaded if stored, created only when `may_create`;
  // held in memory until ReleaseScene (scene/scene_registry.h has the errors). Thread-safe.
  virtual Result<Scene*> AcquireScene(std::string_view name, bool may_create) = 0;
  virtual void ReleaseScene(Scene* scene) = 0;
  // Deletes the scene (SQLite only; scene/scene_registry.h Delete): an error at once, or
  // `done` later on the scene's strand (post, do not block). Thread-safe.
  virtual Result<bool> DeleteScene(std::string_view name, std::function<void(SceneDeletion)> done) {
    (void)name;
    (void)done;
    return MakeError(ErrorCode::kUnavailable, "deleting scenes is not supported here");
  }
  // Every scene in memory, in name order, each referenced until ReleaseScene. Thread-safe.
  virtual std::vector<Scene*> ListScenes() = 0;
  // Session registry (shutdown walks it). Thread-safe.
  virtual uint64_t RegisterSession(const std::shared_ptr<Session>& s) = 0;
  virtual void UnregisterSession(uint64_t id) = 0;
};

}  // namespace scenecrdt::server
