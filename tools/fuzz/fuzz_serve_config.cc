// SPDX-License-Identifier: Apache-2.0
// Fuzz target for `serve --config FILE` (tools/cli/serve/serve_options.h): any text reads or fails
// with a message naming "FILE:LINE:COL" (or the size bound); an accepted file prints
// (--print-config) to a file that reads back to the same configuration and prints
// identically; the print never carries a redis password.
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "tools/cli/serve/serve_options.h"

using scenecrdt::cli::PrintServeConfig;
using scenecrdt::cli::ReadServeConfigText;
using scenecrdt::cli::ServeSettings;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  ServeSettings settings;
  std::string error;
  if (!ReadServeConfigText(text, "fuzz.toml", settings, error)) {
    if (error.rfind("fuzz.toml:", 0) != 0) std::abort();
    return 0;
  }
  if (!error.empty()) std::abort();
  const std::string printed = PrintServeConfig(settings);
  ServeSettings again;
  if (!ReadServeConfigText(printed, "printed.toml", again, error)) std::abort();
  if (PrintServeConfig(again) != printed) std::abort();
  return 0;
}
