// SPDX-License-Identifier: Apache-2.0
// Owns the storage failure episodes: their log lines, gauge and counters.
#include "scenecrdt/server/storage/storage_health.h"

#include <chrono>

namespace scenecrdt::server {

namespace {

int64_t SteadyMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

}  // namespace

void StorageHealth::OnCommitFailed(const std::string& error, std::size_t scenes) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    last_error_ = error;
  }
  ++failed_commits_;
  if (failing_.load(std::memory_order_relaxed)) return;  // logged once per episode
  failing_since_ms_ = SteadyMs();
  failed_commits_ = 1;
  episode_.fetch_add(1, std::memory_order_acq_rel);
  failing_.store(true, std::memory_order_release);
  Metrics::Add(metrics_.storage_unavailable, 1);
  Metrics::Add(metrics_.storage_episodes);
  if (log_) {
    log_->Write(LogLevel::kError, "storage_unavailable",
                "error=\"%s\" scenes=%zu (commits are retried; nothing is acked until one "
                "succeeds; free disk space or raise --max-db-bytes)",
                error.c_str(), scenes);
  }
}

void StorageHealth::OnCommitSucceeded() {
  if (!failing_.load(std::memory_order_relaxed)) return;
  failing_.store(false, std::memory_order_release);
  Metrics::Add(metrics_.storage_unavailable, -1);
  if (log_) {
    log_->Write(LogLevel::kInfo, "storage_recovered", "failed_commits=%llu unavailable_ms=%lld",
                static_cast<unsigned long long>(failed_commits_),
                static_cast<long long>(SteadyMs() - failing_since_ms_));
  }
}

std::string StorageHealth::last_error() const {
  std::lock_guard<std::mutex> lock(mu_);
  return last_error_;
}

}  // namespace scenecrdt::server
