// SPDX-License-Identifier: Apache-2.0
// Owns the directory thread: one read of the stored scene names serves every listing that
// waits for it (see scene_directory.h).
#include "scenecrdt/server/web/scene_directory.h"

#include "scenecrdt/server/context.h"

namespace scenecrdt::server {

SceneDirectory::SceneDirectory(SceneNameSource source, Metrics& metrics, const EventLog& log)
    : source_(std::move(source)),
      metrics_(metrics),
      log_(log),
      rate_(kListingsPerSecond, kListingBurst, kMaxListingPeers) {}

SceneDirectory::~SceneDirectory() { Stop(); }

void SceneDirectory::Start() {
  std::lock_guard<std::mutex> lock(mu_);
  if (thread_.joinable() || stop_) return;
  thread_ = std::thread([this] { Loop(); });
}

void SceneDirectory::Stop() {
  std::vector<std::function<void(StoredScenesPtr)>> left;
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
  {
    std::lock_guard<std::mutex> lock(mu_);
    left.swap(waiting_);
  }
  if (left.empty()) return;
  auto none = std::make_shared<StoredScenes>();
  none->complete = false;
  none->error = "the server is stopping";
  for (auto& done : left) done(none);
}

void SceneDirectory::List(std::function<void(StoredScenesPtr)> done) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!stop_) {
      waiting_.push_back(std::move(done));
      cv_.notify_one();
      return;
    }
  }
  auto none = std::make_shared<StoredScenes>();
  none->complete = false;
  none->error = "the server is stopping";
  done(none);
}

void SceneDirectory::NoteLimited(const std::string& peer) {
  Metrics::Add(metrics_.scene_listings_limited);
  uint64_t suppressed = 0;
  bool write = false;
  {
    std::lock_guard<std::mutex> lock(mu_);
    write = limited_log_.Allow(NowMs(), suppressed);
  }
  if (write) {
    log_.Write(LogLevel::kWarn, "refusal",
               "scene=- session=- kind=http peer=%s reason=rate_limited fatal=no messages=0 "
               "detail=\"scene listings above %g a second from one address\" http=429 "
               "suppressed=%llu",
               peer.c_str(), kListingsPerSecond, static_cast<unsigned long long>(suppressed));
  }
}

uint64_t SceneDirectory::reads() const {
  std::lock_guard<std::mutex> lock(mu_);
  return reads_;
}

void SceneDirectory::Loop() {
  for (;;) {
    std::vector<std::function<void(StoredScenesPtr)>> batch;
    StoredScenesPtr answer;
    {
      std::unique_lock<std::mutex> lock(mu_);
      cv_.wait(lock, [&] { return stop_ || !waiting_.empty(); });
      if (stop_) return;
      if (last_ && NowMs() - last_ms_ < kFreshMs) {
        answer = last_;
        batch.swap(waiting_);
      }
    }
    if (!answer) {
      // Listings asked while this read runs are answered with it too.
      auto read = source_(kMaxListedScenes);
      auto result = std::make_shared<StoredScenes>();
      if (read.has_value()) {
        *result = std::move(read.value());
      } else {
        result->complete = false;
        result->error = read.error().detail;
        Metrics::Add(metrics_.scene_list_failures);
        log_.Write(LogLevel::kError, "scene_list_failed",
                   "error=\"%s\" detail=\"the viewer lists the scenes in "
                   "memory only\"",
                   read.error().detail);
      }
      answer = result;
      std::lock_guard<std::mutex> lock(mu_);
      last_ = answer;
      last_ms_ = NowMs();
      ++reads_;
      batch.swap(waiting_);
    }
    for (auto& done : batch) done(answer);
  }
}

}  // namespace scenecrdt::server
