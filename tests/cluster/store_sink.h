// SPDX-License-Identifier: Apache-2.0
// Owns StoreSink, the cluster tests' StreamReader::Sink: merges what a reader delivers into one
// CrdtStore per scene (as a node would), records entry IDs, snapshots (or refuses some: a sink
// that cannot take one now) and faults, and lets a test wait for a condition with a deadline
// (condition variable, no sleeping).
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "scenecrdt/cluster/stream_reader.h"
#include "scenecrdt/runtime/crdt_store.h"

namespace scenecrdt::testing {

class StoreSink : public cluster::StreamReader::Sink {
 public:
  struct Fault {
    std::string scene;
    cluster::SceneFault fault;
  };

  void OnEntries(std::string_view scene, std::span<cluster::StreamEntry> entries) override {
    std::lock_guard lock(mutex_);
    runtime::CrdtStore& store = stores_[std::string(scene)];
    for (const cluster::StreamEntry& e : entries) {
      auto merged = store.MergeStream(e.bytes());
      if (!merged.has_value()) ++merge_errors_;
      ids_[std::string(scene)].push_back(e.id);
      nodes_[std::string(scene)].push_back(e.node);
    }
    changed_.notify_all();
  }
  Result<void> OnSnapshot(std::string_view scene, const cluster::SceneSnapshot& snapshot) override {
    std::lock_guard lock(mutex_);
    if (refuse_snapshots_ > 0) {
      --refuse_snapshots_;
      ++refused_snapshots_;
      return MakeError(ErrorCode::kUnavailable, "the test's sink refuses this snapshot");
    }
    auto merged = stores_[std::string(scene)].MergeStream(snapshot.bytes());
    if (!merged.has_value()) ++merge_errors_;
    ++snapshots_;
    changed_.notify_all();
    return {};
  }
  void OnFault(std::string_view scene, const cluster::SceneFault& fault) override {
    std::lock_guard lock(mutex_);
    faults_.push_back(Fault{std::string(scene), fault});
    changed_.notify_all();
  }

  // Merges `bytes` as the node's own write (what a node does before appending).
  void MergeOwn(const std::string& scene, std::span<const uint8_t> bytes) {
    std::lock_guard lock(mutex_);
    auto merged = stores_[scene].MergeStream(bytes);
    if (!merged.has_value()) ++merge_errors_;
  }

  std::string Hash(const std::string& scene) {
    std::lock_guard lock(mutex_);
    return stores_[scene].StateHashHex();
  }
  std::vector<cluster::StreamId> Ids(const std::string& scene) {
    std::lock_guard lock(mutex_);
    return ids_[scene];
  }
  std::vector<std::string> Nodes(const std::string& scene) {
    std::lock_guard lock(mutex_);
    return nodes_[scene];
  }
  std::vector<Fault> Faults() {
    std::lock_guard lock(mutex_);
    return faults_;
  }
  int snapshots() {
    std::lock_guard lock(mutex_);
    return snapshots_;
  }
  // The next `n` snapshots are refused (OnSnapshot's error: the reader retries them).
  void RefuseSnapshots(int n) {
    std::lock_guard lock(mutex_);
    refuse_snapshots_ = n;
  }
  int refused_snapshots() {
    std::lock_guard lock(mutex_);
    return refused_snapshots_;
  }
  int merge_errors() {
    std::lock_guard lock(mutex_);
    return merge_errors_;
  }
  // Waits until `done` (called with the lock held) is true; false after the deadline.
  bool WaitFor(const std::function<bool()>& done,
               std::chrono::milliseconds timeout = std::chrono::seconds(20)) {
    std::unique_lock lock(mutex_);
    return changed_.wait_for(lock, timeout, done);
  }
  // For WaitFor predicates (the lock is held there).
  std::size_t CountLocked(const std::string& scene) { return ids_[scene].size(); }

 private:
  std::mutex mutex_;
  std::condition_variable changed_;
  std::map<std::string, runtime::CrdtStore> stores_;
  std::map<std::string, std::vector<cluster::StreamId>> ids_;
  std::map<std::string, std::vector<std::string>> nodes_;
  std::vector<Fault> faults_;
  int snapshots_ = 0;
  int refuse_snapshots_ = 0;
  int refused_snapshots_ = 0;
  int merge_errors_ = 0;
};

// Merges every chunk into a fresh store: the state every replica must reach.
inline std::string ReferenceHash(const std::vector<std::vector<uint8_t>>& chunks) {
  runtime::CrdtStore store;
  for (const auto& c : chunks) {
    auto merged = store.MergeStream(c);
    (void)merged;
  }
  return store.StateHashHex();
}

}  // namespace scenecrdt::testing
