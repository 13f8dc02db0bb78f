// SPDX-License-Identifier: Apache-2.0
// Owns the worker thread's loop (see worker.h).
#include "scenecrdt/runtime/transform/worker.h"

namespace scenecrdt::runtime::internal {

Worker::Worker() : thread_([this] { Loop(); }) {}

Worker::~Worker() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_ = true;
  }
  wake_.notify_one();
  thread_.join();
}

void Worker::Post(Fn fn, void* arg) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    fn_ = fn;
    arg_ = arg;
    has_job_ = true;
  }
  wake_.notify_one();
}

void Worker::Wait() {
  std::unique_lock<std::mutex> lock(mutex_);
  done_.wait(lock, [this] { return !has_job_; });
}

void Worker::Loop() {
  std::unique_lock<std::mutex> lock(mutex_);
  for (;;) {
    wake_.wait(lock, [this] { return has_job_ || stop_; });
    if (has_job_) {
      Fn fn = fn_;
      void* arg = arg_;
      lock.unlock();
      fn(arg);
      lock.lock();
      has_job_ = false;
      done_.notify_one();
      continue;
    }
    if (stop_) return;
  }
}

}  // namespace scenecrdt::runtime::internal
