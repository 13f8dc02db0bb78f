// SPDX-License-Identifier: Apache-2.0
// Owns the progress modes and the status line.
#include "tools/cli/progress.h"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace scenecrdt::cli {

ProgressMode ProgressModeForStderr() {
  const char* env = std::getenv("SCENECRDT_PROGRESS");
  if (env && std::strcmp(env, "0") == 0) return ProgressMode::kOff;
  if (isatty(STDERR_FILENO) != 0) return ProgressMode::kRedraw;
  if (env && std::strcmp(env, "1") == 0) return ProgressMode::kLines;
  return ProgressMode::kOff;
}

StatusLine::StatusLine(std::chrono::milliseconds line_interval)
    : StatusLine(ProgressModeForStderr(), line_interval) {}

StatusLine::StatusLine(ProgressMode mode, std::chrono::milliseconds line_interval)
    : mode_(mode), interval_(line_interval) {}

StatusLine::~StatusLine() { End(); }

void StatusLine::Show(const std::string& text, bool now) {
  if (mode_ == ProgressMode::kOff) return;
  const auto t = std::chrono::steady_clock::now();
  const auto period = mode_ == ProgressMode::kRedraw ? std::chrono::milliseconds(200) : interval_;
  if (shown_ && !now && t - last_ < period) return;
  last_ = t;
  shown_ = true;
  if (mode_ == ProgressMode::kRedraw) {
    // Carriage return, clear to the end of the line, the text.
    std::fprintf(stderr, "\r\x1b[K%s", text.c_str());
    drawn_ = true;
  } else {
    std::fprintf(stderr, "%s\n", text.c_str());
  }
  std::fflush(stderr);
}

void StatusLine::End() {
  if (!drawn_) return;
  std::fputs("\n", stderr);
  std::fflush(stderr);
  drawn_ = false;
}

Progress::Progress(std::string label) : label_(std::move(label)) {}

void Progress::Update(uint64_t done, uint64_t total) {
  if (!line_.enabled()) return;
  const double pct = total ? 100.0 * static_cast<double>(done) / static_cast<double>(total) : 100;
  char text[64];
  std::snprintf(text, sizeof text, ": %llu/%llu (%.0f%%)", static_cast<unsigned long long>(done),
                static_cast<unsigned long long>(total), pct);
  line_.Show(label_ + text, done == total);
}

}  // namespace scenecrdt::cli
