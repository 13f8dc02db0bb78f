// SPDX-License-Identifier: Apache-2.0
// Owns taking and releasing the data directory's lock file.
#include "scenecrdt/server/storage/data_dir_lock.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

namespace scenecrdt::server {

namespace {

// The PID text in the lock file (at most a few digits; anything else is reported as unknown).
std::string ReadHolder(int fd) {
  char buf[32] = {};
  const ssize_t n = pread(fd, buf, sizeof buf - 1, 0);
  if (n <= 0) return "unknown";
  std::string text(buf, static_cast<std::size_t>(n));
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.pop_back();
  if (text.empty() || text.find_first_not_of("0123456789") != std::string::npos) return "unknown";
  return text;
}

}  // namespace

DataDirLock::~DataDirLock() {
  if (fd_ >= 0) close(fd_);  // releases the flock; the file stays (its content is advisory)
}

std::unique_ptr<DataDirLock> DataDirLock::Acquire(const std::string& dir, std::string& why) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  const std::string path = (std::filesystem::path(dir) / "LOCK").string();
  const int fd = open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) {
    why = "cannot open " + path + ": " + std::strerror(errno) +
          " (check that --data names a writable directory)";
    return nullptr;
  }
  if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
    const int err = errno;
    if (err == EWOULDBLOCK) {
      why = "the data directory " + dir + " is in use by another scenecrdt serve (PID " +
            ReadHolder(fd) + "); stop that server or give another --data";
    } else {
      why = "cannot lock " + path + ": " + std::strerror(err);
    }
    close(fd);
    return nullptr;
  }
  const std::string pid = std::to_string(getpid()) + "\n";
  if (ftruncate(fd, 0) != 0 || pwrite(fd, pid.data(), pid.size(), 0) < 0) {
    why = "cannot write " + path + ": " + std::strerror(errno);
    close(fd);
    return nullptr;
  }
  return std::unique_ptr<DataDirLock>(new DataDirLock(fd));
}

}  // namespace scenecrdt::server
