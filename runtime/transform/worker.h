// SPDX-License-Identifier: Apache-2.0
// Owns Worker: one persistent helper thread of a parallel propagation compute. The
// owner posts one job at a time and waits for it; the thread sleeps on a condition variable
// in between and is joined by the destructor. Created only when an update first needs it.
#pragma once

#include <condition_variable>
#include <mutex>
#include <thread>

namespace scenecrdt::runtime::internal {

class Worker {
 public:
  using Fn = void (*)(void*);

  Worker();
  ~Worker();
  Worker(const Worker&) = delete;
  Worker& operator=(const Worker&) = delete;

  // Starts fn(arg) on the worker thread. At most one job in flight.
  void Post(Fn fn, void* arg);
  // Blocks until the posted job has finished.
  void Wait();

 private:
  void Loop();

  std::mutex mutex_;
  std::condition_variable wake_;
  std::condition_variable done_;
  Fn fn_ = nullptr;
  void* arg_ = nullptr;
  bool has_job_ = false;
  bool stop_ = false;
  std::thread thread_;
};

}  // namespace scenecrdt::runtime::internal
