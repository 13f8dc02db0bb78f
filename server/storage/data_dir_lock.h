// SPDX-License-Identifier: Apache-2.0
// Owns DataDirLock: one `scenecrdt serve` per data directory. An exclusive flock on
// <data>/LOCK, held for the server's lifetime (the kernel drops it when the process ends, even
// on kill -9); the file holds the holder's PID so a second server can name it
// (docs/SERVER.md "One server per data directory").
#pragma once

#include <memory>
#include <string>

namespace scenecrdt::server {

class DataDirLock {
 public:
  ~DataDirLock();
  DataDirLock(const DataDirLock&) = delete;
  DataDirLock& operator=(const DataDirLock&) = delete;

  // Creates `dir` if needed and takes the lock. On failure: nullptr and `why` says what
  // happened and what to do (naming the holder's PID when another process holds it).
  static std::unique_ptr<DataDirLock> Acquire(const std::string& dir, std::string& why);

 private:
  explicit DataDirLock(int fd) : fd_(fd) {}
  int fd_ = -1;
};

}  // namespace scenecrdt::server
