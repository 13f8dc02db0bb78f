// SPDX-License-Identifier: Apache-2.0
// Owns progress output on stderr for the long-running commands (converge, send, record, load):
// redrawn in place with '\r' only on a terminal; on a pipe or a file, plain lines at a modest
// rate when SCENECRDT_PROGRESS=1 asks for them, and nothing otherwise, so logs never fill
// with carriage returns.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

namespace scenecrdt::cli {

enum class ProgressMode : uint8_t {
  kOff,     // stderr is not a terminal (or SCENECRDT_PROGRESS=0)
  kRedraw,  // a terminal: one line redrawn in place
  kLines,   // not a terminal, SCENECRDT_PROGRESS=1: plain lines
};

// The mode for this process's stderr and environment.
ProgressMode ProgressModeForStderr();

// One status line on stderr. Show() redraws it at most every 200 ms on a terminal, and prints
// it as a plain line at most once per `line_interval` in kLines mode.
class StatusLine {
 public:
  explicit StatusLine(std::chrono::milliseconds line_interval = std::chrono::seconds(5));
  StatusLine(ProgressMode mode, std::chrono::milliseconds line_interval);
  ~StatusLine();
  StatusLine(const StatusLine&) = delete;
  StatusLine& operator=(const StatusLine&) = delete;

  bool enabled() const { return mode_ != ProgressMode::kOff; }
  // Shows `text` (no newline), subject to the rate above; `now` shows it regardless (a phase
  // that ends, such as "all clients joined").
  void Show(const std::string& text, bool now = false);
  // Ends a redrawn line, so that other stderr output starts on a line of its own.
  void End();

 private:
  ProgressMode mode_;
  std::chrono::milliseconds interval_;
  bool drawn_ = false;  // a redrawn line is on screen
  bool shown_ = false;  // something was shown at least once
  std::chrono::steady_clock::time_point last_;
};

// "label: done/total (pct%)" on a StatusLine.
class Progress {
 public:
  explicit Progress(std::string label);
  void Update(uint64_t done, uint64_t total);
  void Done() { line_.End(); }

 private:
  std::string label_;
  StatusLine line_;
};

}  // namespace scenecrdt::cli
