// SPDX-License-Identifier: Apache-2.0
// Owns the last-write-wins rule of one register (@dcl/ecs crdtRuleForCurrentState,
// docs/CRDT.md): newer timestamp wins, ties broken by the payload bytes. Pure functions.
#pragma once

#include <cstdint>
#include <cstring>
#include <span>

#include "scenecrdt/runtime/crdt_types.h"

namespace scenecrdt::runtime::internal {

// @dcl/ecs dataCompare for two present payloads: the longer one is greater, then the first
// differing byte compared unsigned.
inline int ComparePayloads(std::span<const uint8_t> a, std::span<const uint8_t> b) {
  if (a.size() != b.size()) return a.size() < b.size() ? -1 : 1;
  if (a.empty()) return 0;
  const int c = std::memcmp(a.data(), b.data(), a.size());
  return c < 0 ? -1 : (c > 0 ? 1 : 0);
}

// The outcome of a PUT (`msg_is_delete` false) or DELETE_COMPONENT stamped `msg_ts` against a
// register {cur_ts, cur_has_data, cur_data} that exists.
inline MergeOutcome LwwRule(uint32_t cur_ts, bool cur_has_data, std::span<const uint8_t> cur_data,
                            uint32_t msg_ts, bool msg_is_delete,
                            std::span<const uint8_t> msg_data) {
  if (cur_ts < msg_ts) return MergeOutcome::kUpdatedTimestamp;
  if (cur_ts > msg_ts) return MergeOutcome::kOutdatedTimestamp;
  if (msg_is_delete) {
    // DELETE over DELETE: no change. DELETE against data: dataCompare(data, null) > 0.
    return cur_has_data ? MergeOutcome::kOutdatedData : MergeOutcome::kNoChange;
  }
  if (!cur_has_data) return MergeOutcome::kUpdatedData;  // dataCompare(null, data) < 0
  const int cmp = ComparePayloads(cur_data, msg_data);
  if (cmp == 0) return MergeOutcome::kNoChange;
  return cmp > 0 ? MergeOutcome::kOutdatedData : MergeOutcome::kUpdatedData;
}

}  // namespace scenecrdt::runtime::internal
