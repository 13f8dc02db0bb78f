// SPDX-License-Identifier: Apache-2.0
// Fuzz target for the client's server URL lists (client/url.h): any text splits into entries
// that are non-empty, hold no comma and no surrounding space, and are never more than the
// commas allow; each entry parses to a host and a non-zero port, with a scene only for ws://,
// or fails with kInvalidArgument and a reason.
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "scenecrdt/client/url.h"

using scenecrdt::ErrorCode;
using scenecrdt::client::ParseServerUrl;
using scenecrdt::client::ServerUrl;
using scenecrdt::client::SplitServerList;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  const auto entries = SplitServerList(text);
  std::size_t commas = 0;
  for (char c : text) commas += c == ',' ? 1 : 0;
  if (entries.size() > commas + 1) std::abort();
  for (const std::string& entry : entries) {
    if (entry.empty() || entry.find(',') != std::string::npos) std::abort();
    if (entry.front() == ' ' || entry.back() == ' ') std::abort();
    auto parsed = ParseServerUrl(entry);
    if (!parsed.has_value()) {
      if (parsed.error().code != ErrorCode::kInvalidArgument) std::abort();
      if (parsed.error().detail == nullptr || parsed.error().detail[0] == '\0') std::abort();
      continue;
    }
    if (parsed->port == 0 || parsed->host.empty()) std::abort();
    if (!parsed->scene.empty() && parsed->scheme != ServerUrl::Scheme::kWebSocket) std::abort();
  }
  return 0;
}
