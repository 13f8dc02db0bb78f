// SPDX-License-Identifier: Apache-2.0
// Owns the windowed reading of DCL stream files (mmap for regular files, read() otherwise).
#include "tools/cli/stream/stream_reader.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <vector>

namespace scenecrdt::cli {

namespace {

class Fd {
 public:
  explicit Fd(int fd, bool owned) : fd_(fd), owned_(owned) {}
  ~Fd() {
    if (owned_ && fd_ >= 0) ::close(fd_);
  }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  int get() const { return fd_; }

 private:
  int fd_;
  bool owned_;
};

void NoteHead(std::span<const uint8_t> bytes, std::string* head) {
  if (head == nullptr || head->size() >= 256) return;
  const std::size_t n = std::min<std::size_t>(bytes.size(), 256 - head->size());
  head->append(reinterpret_cast<const char*>(bytes.data()), n);
}

Error TruncatedAt(uint64_t offset) {
  return MakeError(ErrorCode::kTruncated,
                   "the input ends inside a message (a message was cut short)", offset);
}

// A window too small for the message at its start consumed nothing: grow it and try again.
std::size_t Grown(std::size_t window) {
  return window > (std::size_t{1} << 40) ? window : window * 2;
}

Result<void> MapWindows(int fd, uint64_t size, std::size_t window, const WindowSink& sink,
                        std::string* head) {
  const uint64_t page = static_cast<uint64_t>(::sysconf(_SC_PAGESIZE));
  uint64_t pos = 0;  // always at a message boundary
  while (pos < size) {
    const uint64_t map_start = pos - pos % page;
    const uint64_t map_len = std::min<uint64_t>(size - map_start, (pos - map_start) + window);
    void* p = ::mmap(nullptr, map_len, PROT_READ, MAP_PRIVATE, fd, static_cast<off_t>(map_start));
    if (p == MAP_FAILED) return MakeError(ErrorCode::kIo, "cannot map the input file", pos);
    (void)::madvise(p, map_len, MADV_SEQUENTIAL);
    const std::span<const uint8_t> bytes(static_cast<const uint8_t*>(p) + (pos - map_start),
                                         map_len - (pos - map_start));
    if (pos == 0) NoteHead(bytes, head);
    Result<std::size_t> consumed = sink(bytes, pos);
    ::munmap(p, map_len);  // the window leaves the process's resident set
    if (!consumed.has_value()) return consumed.error();
    const bool at_end = map_start + map_len == size;
    if (*consumed == 0) {
      if (at_end) return TruncatedAt(pos);
      window = Grown(window);
      continue;
    }
    pos += *consumed;
    if (at_end && pos < size) return TruncatedAt(pos);
  }
  return {};
}

Result<void> ReadLoop(int fd, std::size_t window, const WindowSink& sink, std::string* head) {
  std::vector<uint8_t> buffer(window);
  std::size_t filled = 0;  // bytes in buffer[0, filled), starting at a message boundary
  uint64_t base = 0;       // file offset of buffer[0]
  bool eof = false;
  while (!eof || filled > 0) {
    while (!eof && filled < buffer.size()) {
      const ssize_t n = ::read(fd, buffer.data() + filled, buffer.size() - filled);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) return MakeError(ErrorCode::kIo, "error while reading the input", base + filled);
      if (n == 0) eof = true;
      if (base == 0) NoteHead(std::span<const uint8_t>(buffer.data() + filled, n), head);
      filled += static_cast<std::size_t>(n);
    }
    if (filled == 0) break;
    Result<std::size_t> consumed = sink(std::span<const uint8_t>(buffer.data(), filled), base);
    if (!consumed.has_value()) return consumed.error();
    if (*consumed == 0) {
      if (eof) return TruncatedAt(base);
      buffer.resize(Grown(buffer.size()));
      continue;
    }
    std::memmove(buffer.data(), buffer.data() + *consumed, filled - *consumed);
    filled -= *consumed;
    base += *consumed;
    if (eof && filled > 0) return TruncatedAt(base);
  }
  return {};
}

}  // namespace

Result<void> ReadWindows(const std::string& path, const WindowOptions& options,
                         const WindowSink& sink, std::string* head) {
  const std::size_t window = std::max<std::size_t>(options.window_bytes, 1);
  const bool is_stdin = path == "-";
  const int raw = is_stdin ? STDIN_FILENO : ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (raw < 0) return MakeError(ErrorCode::kIo, "cannot open the input file");
  const Fd fd(raw, !is_stdin);
  struct stat st {};
  if (!options.force_read && ::fstat(fd.get(), &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0) {
    return MapWindows(fd.get(), static_cast<uint64_t>(st.st_size), window, sink, head);
  }
  return ReadLoop(fd.get(), window, sink, head);
}

}  // namespace scenecrdt::cli
