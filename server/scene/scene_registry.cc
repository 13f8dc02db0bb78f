// SPDX-License-Identifier: Apache-2.0
// Owns loading scenes on demand, their references, the idle sweep and eviction.
#include "scenecrdt/server/scene/scene_registry.h"

#include <algorithm>

#include "scenecrdt/protocol/session/envelope.h"
#include "scenecrdt/server/scene/scene.h"
#include "scenecrdt/server/storage/persistence.h"

namespace scenecrdt::server {

namespace {

constexpr std::size_t kMaxEvictedNames = 65536;

}  // namespace

SceneRegistry::SceneRegistry(ServerContext& ctx) : ctx_(ctx), sweep_timer_(ctx.ioc()) {}

SceneRegistry::~SceneRegistry() = default;

Result<Scene*> SceneRegistry::FindLocked(std::string_view name, bool from_client) {
  if (frozen_) return MakeError(ErrorCode::kShuttingDown, "the server is stopping");
  if (auto it = scenes_.find(name); it != scenes_.end()) {
    if (it->second.deleting) {
      return MakeError(ErrorCode::kSceneDeleted, "the scene is being deleted; join again");
    }
    ++it->second.refs;
    return it->second.scene.get();
  }
  const Limits& limits = ctx_.config().limits;
  if (scenes_.size() >= limits.max_scenes_in_memory) {
    EvictForRoom(std::max<std::size_t>(1, limits.max_scenes_in_memory / 16));
    if (from_client) Metrics::Add(ctx_.metrics().scene_cap_refusals);
    return MakeError(ErrorCode::kSceneFull,
                     "the server holds its maximum number of scenes in memory; retry later");
  }
  return static_cast<Scene*>(nullptr);
}

Result<Scene*> SceneRegistry::AcquireCluster(std::string_view name, bool may_create,
                                             bool from_client) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto found = FindLocked(name, from_client);
    if (!found.has_value() || found.value() != nullptr) return found;
  }
  if (!may_create) {
    // A read-only token never creates a scene: one with nothing in Redis is refused. Checked
    // outside the mutex (a Redis round trip; its timeouts bound it).
    std::string why;
    auto stored = ctx_.commits().shared()->SceneStored(name, &why);
    if (!stored.has_value()) {
      ctx_.log().Write(LogLevel::kError, "scene_load_failed", "scene=%.*s error=\"%s\"",
                       static_cast<int>(name.size()), name.data(), why.c_str());
      return MakeError(ErrorCode::kUnavailable,
                       "the cluster's Redis cannot tell whether the scene exists now; retry");
    }
    if (!stored.value()) {
      if (from_client) Metrics::Add(ctx_.metrics().scene_create_refusals);
      return MakeError(ErrorCode::kUnauthorized,
                       "no such scene, and a read-only token may not create one");
    }
  }
  std::lock_guard<std::mutex> lock(mu_);
  auto found = FindLocked(name, from_client);  // another join may have created it meanwhile
  if (!found.has_value() || found.value() != nullptr) return found;
  // The scene loads itself from Redis before welcoming anyone (docs/CLUSTER.md).
  const std::string key(name);
  Entry entry;
  entry.scene = std::make_unique<Scene>(ctx_, key);
  entry.refs = 1;
  Scene* raw = entry.scene.get();
  scenes_.emplace(key, std::move(entry));
  Metrics::Add(ctx_.metrics().scenes, 1);
  return raw;
}

Result<Scene*> SceneRegistry::Acquire(std::string_view name, bool may_create) {
  return AcquireFor(name, may_create, /*from_client=*/true);
}

Scene* SceneRegistry::FindOrCreate(std::string_view name) {
  auto scene = Acquire(name, /*may_create=*/true);
  return scene.has_value() ? scene.value() : nullptr;
}

Result<Scene*> SceneRegistry::AcquireFor(std::string_view name, bool may_create, bool from_client) {
  if (ctx_.commits().shared()) return AcquireCluster(name, may_create, from_client);
  std::lock_guard<std::mutex> lock(mu_);
  auto found = FindLocked(name, from_client);
  if (!found.has_value() || found.value() != nullptr) return found;
  const std::string key(name);
  std::string why;
  auto stored = ctx_.persistence().LoadScene(key, &why);
  if (!stored.has_value()) {
    ctx_.log().Write(LogLevel::kError, "scene_load_failed", "scene=%s error=\"%s\"", key.c_str(),
                     why.c_str());
    return stored.error();
  }
  if (stored->rows == 0 && !may_create) {
    if (from_client) Metrics::Add(ctx_.metrics().scene_create_refusals);
    return MakeError(ErrorCode::kUnauthorized,
                     "no such scene, and a read-only token may not create one");
  }
  std::optional<uint64_t> incarnation;
  if (fresh_incarnation_always_ || evicted_names_.count(key) > 0) {
    auto next = ctx_.persistence().NextIncarnation(&why);
    if (!next.has_value()) {
      ctx_.log().Write(LogLevel::kError, "scene_load_failed", "scene=%s error=\"%s\"", key.c_str(),
                       why.c_str());
      return MakeError(ErrorCode::kStorageUnavailable, "the scene cannot be loaded now");
    }
    incarnation = next.value();
    evicted_names_.erase(key);
  }
  Entry entry;
  entry.scene =
      std::make_unique<Scene>(ctx_, key, stored->dcl, incarnation, std::move(stored->owners));
  entry.refs = 1;
  Scene* raw = entry.scene.get();
  scenes_.emplace(key, std::move(entry));
  Metrics::Add(ctx_.metrics().scenes, 1);
  if (stored->rows > 0) Metrics::Add(ctx_.metrics().scene_loads);
  return raw;
}

void SceneRegistry::Release(Scene* scene) {
  if (!scene) return;
  std::lock_guard<std::mutex> lock(mu_);
  auto it = scenes_.find(scene->name());
  if (it == scenes_.end() || it->second.scene.get() != scene) {
    auto d = std::find_if(deleted_.begin(), deleted_.end(),
                          [&](const Deleted& x) { return x.scene.get() == scene; });
    if (d == deleted_.end() || d->refs == 0 || --d->refs > 0) return;
    std::unique_ptr<Scene> gone = std::move(d->scene);
    deleted_.erase(d);
    RetireLocked(std::move(gone));
    return;
  }
  if (it->second.refs == 0) return;
  if (--it->second.refs == 0) it->second.idle_since_ms = NowMs();
}

Result<bool> SceneRegistry::Delete(std::string_view name, std::function<void(SceneDeletion)> done) {
  auto held = AcquireFor(name, /*may_create=*/false, /*from_client=*/false);
  if (!held.has_value()) return held.error();
  Scene* scene = held.value();
  {
    std::lock_guard<std::mutex> lock(mu_);
    // Acquire refuses a name being deleted, so this entry is ours to mark.
    scenes_.find(name)->second.deleting = true;
  }
  const std::string key(name);
  scene->Delete([this, key, scene, done = std::move(done)](SceneDeletion d) {
    FinishDelete(key, scene);
    done(d);
  });
  return true;
}

void SceneRegistry::FinishDelete(const std::string& name, Scene* scene) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = scenes_.find(name);
  if (it == scenes_.end() || it->second.scene.get() != scene) return;
  Entry entry = std::move(it->second);
  scenes_.erase(it);
  Metrics::Add(ctx_.metrics().scenes, -1);
  NoteGoneLocked(name);
  if (--entry.refs == 0) {  // Delete's own reference
    RetireLocked(std::move(entry.scene));
  } else {
    deleted_.push_back({std::move(entry.scene), entry.refs});
  }
}

void SceneRegistry::NoteGoneLocked(const std::string& name) {
  if (evicted_names_.size() >= kMaxEvictedNames) {
    evicted_names_.clear();
    fresh_incarnation_always_ = true;
  }
  if (!fresh_incarnation_always_) evicted_names_.insert(name);
}

void SceneRegistry::RetireLocked(std::unique_ptr<Scene> scene) {
  Scene* raw = scene.get();
  retiring_.push_back(std::move(scene));
  // Posted: DropRetired takes mu_. Whatever the sessions posted before runs first.
  raw->AfterPending([this, raw] { DropRetired(raw); });
}

bool SceneRegistry::WithScene(std::string_view name, const std::function<void(Scene&)>& fn) {
  Result<Scene*> scene = static_cast<Scene*>(nullptr);
  if (ctx_.commits().shared()) {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = scenes_.find(name);
    if (frozen_ || it == scenes_.end()) return false;
    ++it->second.refs;
    scene = it->second.scene.get();
  } else {
    scene = AcquireFor(name, /*may_create=*/false, /*from_client=*/false);
  }
  if (!scene.has_value()) return false;
  fn(*scene.value());
  Release(scene.value());
  return true;
}

std::vector<Scene*> SceneRegistry::AcquireLoaded() {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<Scene*> out;
  if (frozen_) return out;
  out.reserve(scenes_.size());
  for (auto& [name, entry] : scenes_) {
    if (entry.evicting || entry.deleting) continue;
    ++entry.refs;
    out.push_back(entry.scene.get());
  }
  return out;
}

void SceneRegistry::StartSweeper() {
  std::lock_guard<std::mutex> lock(mu_);  // every use of the timer is under mu_
  ArmSweep();
}

void SceneRegistry::ArmSweep() {
  const int64_t idle_ms = ctx_.config().limits.scene_idle_evict_ms;
  sweep_timer_.expires_after(std::chrono::milliseconds(std::clamp<int64_t>(idle_ms / 4, 10, 1000)));
  sweep_timer_.async_wait([this](const net::error_code& ec) {
    if (ec) return;
    std::lock_guard<std::mutex> lock(mu_);
    if (frozen_) return;
    SweepLocked();
    ArmSweep();
  });
}

void SceneRegistry::Sweep() {
  std::lock_guard<std::mutex> lock(mu_);
  if (!frozen_) SweepLocked();
}

void SceneRegistry::SweepLocked() {
  const int64_t now = NowMs();
  const int64_t idle_ms = ctx_.config().limits.scene_idle_evict_ms;
  for (auto& [name, entry] : scenes_) {
    if (entry.refs == 0 && !entry.evicting && now - entry.idle_since_ms >= idle_ms) {
      BeginEviction(name, entry);
    }
  }
}

void SceneRegistry::EvictForRoom(std::size_t n) {
  std::vector<std::pair<int64_t, std::string>> idle;
  for (auto& [name, entry] : scenes_) {
    if (entry.refs == 0 && !entry.evicting) idle.emplace_back(entry.idle_since_ms, name);
  }
  std::sort(idle.begin(), idle.end());
  if (idle.size() > n) idle.resize(n);
  for (const auto& [since, name] : idle) BeginEviction(name, scenes_.find(name)->second);
}

void SceneRegistry::BeginEviction(const std::string& name, Entry& entry) {
  entry.evicting = true;
  Scene* scene = entry.scene.get();
  scene->RetireIfQuiescent(
      [this, name, scene](bool quiescent) { FinishEviction(name, scene, quiescent); });
}

void SceneRegistry::FinishEviction(const std::string& name, Scene* scene, bool quiescent) {
  std::unique_ptr<Scene> dropped;
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = scenes_.find(name);
    if (it == scenes_.end() || it->second.scene.get() != scene) return;
    Entry& entry = it->second;
    entry.evicting = false;
    // A join that came meanwhile keeps it; so does a stop (shutdown flushes every scene).
    if (!quiescent || entry.refs > 0 || frozen_) return;
    dropped = std::move(entry.scene);
    // Counted before the scene leaves the map: whoever sees it gone sees it counted.
    Metrics::Add(ctx_.metrics().scenes, -1);
    Metrics::Add(ctx_.metrics().scene_evictions);
    scenes_.erase(it);
    if (SharedLog* log = ctx_.commits().shared()) {
      // Under mu_: a later Acquire of the name hosts its own scene after this one is gone
      // from the node. The read loop stops following it and posts nothing more to it.
      log->Unfollow(*scene);
      retiring_.push_back(std::move(dropped));
    } else {
      NoteGoneLocked(name);
    }
  }
  if (ctx_.commits().shared()) {
    // We are on its strand: entries the read loop posted before Unfollow are released, then
    // the scene goes.
    scene->Retire([this, scene] { DropRetired(scene); });
    return;
  }
  // `dropped` is destroyed here, on its strand: nothing of it is pending (quiescent: no
  // member, no armed timer, no commit in flight), and the running handler holds its own
  // reference to the strand.
}

void SceneRegistry::DropRetired(Scene* scene) {
  std::unique_ptr<Scene> dropped;
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = std::find_if(retiring_.begin(), retiring_.end(),
                           [&](const std::unique_ptr<Scene>& s) { return s.get() == scene; });
    if (it == retiring_.end()) return;
    dropped = std::move(*it);
    retiring_.erase(it);
  }
  // Destroyed here, on its strand, by the last handler queued there.
}

std::vector<Scene*> SceneRegistry::Freeze() {
  std::lock_guard<std::mutex> lock(mu_);
  frozen_ = true;
  sweep_timer_.cancel();
  std::vector<Scene*> out;
  for (auto& [name, entry] : scenes_) out.push_back(entry.scene.get());
  return out;
}

std::size_t SceneRegistry::size() const {
  std::lock_guard<std::mutex> lock(mu_);
  return scenes_.size();
}

}  // namespace scenecrdt::server
