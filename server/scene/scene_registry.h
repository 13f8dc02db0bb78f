// SPDX-License-Identifier: Apache-2.0
// Owns SceneRegistry: the scenes held in memory (it implements Scenes, scenes.h), loaded from
// the database on first use and evicted when idle (their state is durable, so memory is a cache of
// SQLite), with a cap on how many are held (docs/SERVER.md "Memory bounds").
//
// - Acquire(name, may_create): the scene, loaded if stored; a name with nothing stored is
//   created only when `may_create` (a write role): a read-only token never creates scenes.
//   Each Acquire holds a reference until Release (a session releases when it has closed, so
//   no session ever holds a pointer to an evicted scene).
// - Eviction: a sweep (every second or faster) asks each unreferenced scene idle for
//   --scene-idle-evict-ms whether it is quiescent (no members, everything durable, no timer
//   armed: Scene::RetireIfQuiescent on its strand); if so, and still unreferenced, it is
//   dropped. A scene whose commits fail is never evicted (its state is not durable).
// - Cap: at --max-scenes-in-memory a join that needs one more scene is refused with
//   `scene_full` (retry later) and the least recently used unreferenced scenes are evicted at
//   once, whatever their idle time.
// - A scene loaded again after an eviction numbers its sequences with a fresh incarnation
//   (Persistence::NextIncarnation): no resume position of its earlier life is mistaken.
//
// - Cluster mode (docs/CLUSTER.md "Scenes in memory"): the same rules. "Nothing stored" is
//   checked in Redis (SharedLog::SceneStored, ClusterNode's: EXISTS on the scene's stream and
//   snapshot keys, outside the mutex; unreachable: kUnavailable, retry); the state loads
//   asynchronously (joins wait on the scene's strand). An evicted scene is dropped once its node
//   stopped following it (SharedLog::Unfollow) and the entries posted before are released on its
//   strand (Scene::Retire); acquiring it again loads it from Redis (snapshot + tail).
//
// - Delete (the admin API, SQLite only): the scene, loaded if only stored, refuses joins from
//   then on (kSceneDeleted) while Scene::Delete closes its members and erases its rows; then it
//   leaves the registry (a join of the name creates an empty scene with a fresh incarnation)
//   and lives on, unlisted, until its last reference is released (sessions closing).
//
// Thread-safe (one mutex). Loading a scene reads SQLite under the mutex: other joins wait for
// it (bounded by --max-scene-bytes).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "scenecrdt/protocol/result.h"
#include "scenecrdt/server/context.h"
#include "scenecrdt/server/scene/scenes.h"

namespace scenecrdt::server {

class SceneRegistry final : public Scenes {
 public:
  explicit SceneRegistry(ServerContext& ctx);
  ~SceneRegistry() override;
  SceneRegistry(const SceneRegistry&) = delete;
  SceneRegistry& operator=(const SceneRegistry&) = delete;

  // The scene, referenced until Release. Errors: kShuttingDown (stopping), kUnauthorized
  // (nothing stored and !may_create), kSceneFull (the in-memory cap), kCorruptData / kIo /
  // kStorageUnavailable (the scene cannot be read; logged with SQLite's text). Counted in the
  // refusal metrics as a session's join.
  Result<Scene*> Acquire(std::string_view name, bool may_create) override;
  // Acquire(name, true), never released; nullptr on an error.
  Scene* FindOrCreate(std::string_view name) override;
  void Release(Scene* scene) override;
  // Runs `fn` with the scene loaded (not created), referenced meanwhile. False when nothing
  // is stored under `name` or it cannot be loaded. Cluster mode: only a scene in memory (a
  // load from Redis is asynchronous).
  bool WithScene(std::string_view name, const std::function<void(Scene&)>& fn);

  // Starts deleting `name` (see above); `done` runs on the scene's strand once its rows are
  // erased (or the erase failed: Deletion::ok). Errors, at once: kUnauthorized (nothing
  // stored), kSceneDeleted (a delete of it runs), and Acquire's others.
  Result<bool> Delete(std::string_view name, std::function<void(SceneDeletion)> done) override;

  // Starts the eviction sweep (after the io threads run).
  void StartSweeper();
  // No new scenes, no evictions; every scene held (shutdown walks them).
  std::vector<Scene*> Freeze();
  std::size_t size() const;
  // Every scene in memory and not being evicted, in name order, each referenced until Release
  // (the scene list of GET /).
  std::vector<Scene*> AcquireLoaded() override;
  // One sweep now (tests; the timer calls it too).
  void Sweep();

 private:
  struct Entry {
    std::unique_ptr<Scene> scene;
    uint64_t refs = 0;
    int64_t idle_since_ms = 0;
    bool evicting = false;
    bool deleting = false;  // Delete runs: no join, not listed
  };
  // A deleted scene still referenced (sessions closing); destroyed on its strand at 0.
  struct Deleted {
    std::unique_ptr<Scene> scene;
    uint64_t refs = 0;
  };
  // Acquire; `from_client`: a session's join (counted in the refusal metrics), not a server
  // tool's.
  Result<Scene*> AcquireFor(std::string_view name, bool may_create, bool from_client);
  void FinishDelete(const std::string& name, Scene* scene);
  // Under mu_: loading `name` again takes a fresh incarnation.
  void NoteGoneLocked(const std::string& name);
  // Under mu_: `scene` (out of scenes_) is destroyed on its strand behind what is queued.
  void RetireLocked(std::unique_ptr<Scene> scene);
  void ArmSweep();     // under mu_
  void SweepLocked();  // under mu_
  Result<Scene*> AcquireCluster(std::string_view name, bool may_create, bool from_client);
  // Under mu_: the scene in memory (referenced), or an error (stopping, the cap), or nullptr
  // (not in memory, room for it).
  Result<Scene*> FindLocked(std::string_view name, bool from_client);
  // Cluster mode: an evicted scene's last handler on its strand destroys it.
  void DropRetired(Scene* scene);
  // Under mu_: starts the quiescence check of `entry`.
  void BeginEviction(const std::string& name, Entry& entry);
  void FinishEviction(const std::string& name, Scene* scene, bool quiescent);
  // Under mu_: evicts the least recently idle unreferenced scenes (up to `n`).
  void EvictForRoom(std::size_t n);

  ServerContext& ctx_;
  mutable std::mutex mu_;
  std::map<std::string, Entry, std::less<>> scenes_;
  // Cluster mode: evicted scenes waiting for their strand's last handler (DropRetired).
  std::vector<std::unique_ptr<Scene>> retiring_;
  // Deleted scenes still referenced (bounded by the sessions that held them).
  std::vector<Deleted> deleted_;
  // Names evicted in this run: loading one again takes a fresh incarnation. Bounded: past
  // kMaxEvictedNames every later load takes a fresh incarnation.
  std::set<std::string, std::less<>> evicted_names_;
  bool fresh_incarnation_always_ = false;
  bool frozen_ = false;
  net::asio::steady_timer sweep_timer_;
};

}  // namespace scenecrdt::server
