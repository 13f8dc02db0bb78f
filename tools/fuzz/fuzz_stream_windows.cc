// SPDX-License-Identifier: Apache-2.0
// Fuzz target for the windowed reading of stream files (tools/cli/stream/stream_reader.h): the
// input, as a file, read through windows of a size the input chooses (mmap or read()), must give
// the same messages and the same error (code and offset) as decoding it as one buffer.
#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

#include "scenecrdt/protocol/crdt_codec.h"
#include "tools/cli/stream/stream_reader.h"

using scenecrdt::ErrorCode;
using scenecrdt::protocol::AppendMessage;
using scenecrdt::protocol::CrdtMessage;
using scenecrdt::protocol::DecodeOptions;
using scenecrdt::protocol::DecodeStream;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 2) return 0;
  DecodeOptions options;
  options.max_message_bytes = 4096;
  options.reject_unknown_types = (data[0] & 1) != 0;
  scenecrdt::cli::WindowOptions windows;
  windows.force_read = (data[0] & 2) != 0;
  windows.window_bytes = 1 + data[1] % 200;
  std::span<const uint8_t> input(data + 2, size - 2);

  std::vector<uint8_t> whole_bytes;
  auto whole =
      DecodeStream(input, options, [&](const CrdtMessage& m) { AppendMessage(m, whole_bytes); });

  // The input as a file without touching the disk; ReadWindows opens it by path.
  const int fd = memfd_create("fuzz_stream_windows", 0);
  if (fd < 0) std::abort();
  if (!input.empty() && write(fd, input.data(), input.size()) != static_cast<ssize_t>(input.size()))
    std::abort();
  std::vector<uint8_t> windowed_bytes;
  auto windowed = scenecrdt::cli::ForEachMessage(
      "/proc/self/fd/" + std::to_string(fd), options, windows,
      [&](const CrdtMessage& m) { AppendMessage(m, windowed_bytes); });
  close(fd);

  if (whole.has_value() != windowed.has_value()) std::abort();
  if (!whole.has_value()) {
    if (whole.error().code != windowed.error().code) std::abort();
    if (whole.error().offset != windowed.error().offset) std::abort();
  }
  if (whole_bytes != windowed_bytes) std::abort();
  return 0;
}
