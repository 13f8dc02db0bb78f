// SPDX-License-Identifier: Apache-2.0
// Owns the bounded SCAN over the scene stream keys (see scene_scan.h).
#include "scenecrdt/cluster/scene_scan.h"

#include <algorithm>
#include <set>

#include "scenecrdt/cluster/cluster_config.h"

namespace scenecrdt::cluster {

Result<SceneScan> ScanSceneNames(RedisConnection& redis, std::string_view key_prefix,
                                 std::size_t max_names) {
  const std::string head = std::string(key_prefix) + ":{";
  constexpr std::string_view kTail = "}:log";
  // The prefix is [A-Za-z0-9_.:-] (ValidateClusterConfig): no glob character to escape.
  const std::string pattern = head + "*" + std::string(kTail);
  const std::string count = std::to_string(kScanCount);
  std::set<std::string, std::less<>> names;
  std::string cursor = "0";
  SceneScan out;
  for (uint32_t call = 0;; ++call) {
    if (call == kMaxScanCalls) {
      out.complete = false;
      break;
    }
    auto reply = redis.Command({"SCAN", cursor, "MATCH", pattern, "COUNT", count});
    if (!reply.has_value()) return reply.error();
    const RedisReply& r = reply.value();
    if (!r.is_array() || r.elements.size() != 2 || !r.elements[0].is_string() ||
        !r.elements[1].is_array()) {
      return MakeError(ErrorCode::kCorruptData, "SCAN answered with an unexpected reply");
    }
    for (const RedisReply& key : r.elements[1].elements) {
      std::string_view k = key.str;
      if (!key.is_string() || !k.starts_with(head) || !k.ends_with(kTail)) continue;
      k.remove_prefix(head.size());
      k.remove_suffix(kTail.size());
      if (IsValidClusterSceneName(k)) names.emplace(k);
    }
    cursor = r.elements[0].str;
    if (names.size() > max_names) {
      out.complete = false;
      break;
    }
    if (cursor == "0") break;
  }
  while (names.size() > max_names) names.erase(std::prev(names.end()));
  out.names.assign(names.begin(), names.end());
  return out;
}

}  // namespace scenecrdt::cluster
