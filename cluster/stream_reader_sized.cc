// SPDX-License-Identifier: Apache-2.0
// Owns the read loop's sized rounds (docs/CLUSTER.md "The read loop"): after a read went over
// max_round_bytes, each round first asks a script for the IDs and sizes of every scene's next
// entries (a small reply), then reads with XRANGE only what fits the budget, scene by scene,
// starting one scene later each round so that a busy scene cannot starve the others. The
// sizes come from Redis, so the planned reads fit unless the stream changed in between (then
// the read stops at the budget like any other and the next round plans again).
#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "scenecrdt/cluster/internal/scripts.h"
#include "scenecrdt/cluster/stream_reader.h"

namespace scenecrdt::cluster {
namespace {

// RESP framing of one entry in an XRANGE reply besides its fields: the entry's and its field
// list's array headers and the ID's bulk string (IDs are at most 41 bytes).
constexpr std::size_t kEntryFraming = 64;

}  // namespace

Result<void> StreamReader::ReadSized(std::span<SceneState* const> scenes, ReadRound& round,
                                     bool& caught_up) {
  struct SizedPlan {
    SceneState* state = nullptr;
    uint32_t take = 0;       // entries to read
    bool caught_up = false;  // those are all the stream holds after the cursor
    StreamId oversized;      // non-zero: the next entry alone is over the budget: skip it
  };
  caught_up = true;
  if (scenes.empty()) return {};
  const std::size_t budget =
      options_.max_round_bytes > 0 ? options_.max_round_bytes : ~std::size_t{0};
  const std::size_t n = scenes.size();
  const std::size_t start = sized_start_ % n;
  sized_start_ = start + 1;
  // 1. The sizes of each scene's next entries (IDs and numbers only).
  const std::string count = std::to_string(options_.count);
  std::vector<std::string> from(n);
  std::vector<RedisArgs> probes;
  probes.reserve(n);
  for (std::size_t i = 0; i < n; ++i) {
    const SceneState* state = scenes[(start + i) % n];
    from[i] = "(" + state->cursor.ToString();
    probes.push_back({"EVAL", internal::kEntrySizesScript, "1", state->log_key, from[i], count});
  }
  auto sizes = connection_.Pipeline(probes, options_.max_round_bytes);
  NoteReadBytes();
  if (!sizes.has_value()) return sizes.error();

  // 2. What fits the budget, in turn from `start`.
  std::vector<SizedPlan> plans;
  std::size_t used = 0;
  for (std::size_t i = 0; i < n; ++i) {
    SceneState& state = *scenes[(start + i) % n];
    RedisReply& reply = (*sizes)[i];
    if (reply.is_error()) {
      MarkFailed(state, ErrorFromRedisError(reply.str));
      continue;
    }
    if (!reply.is_array()) {
      MarkFailed(state, MakeError(ErrorCode::kCorruptData, "entry sizes: not an array"));
      continue;
    }
    SizedPlan plan;
    plan.state = &state;
    bool shape_ok = true;
    const std::size_t listed = reply.elements.size();
    for (std::size_t k = 0; k < listed; ++k) {
      const RedisReply& e = reply.elements[k];
      if (!e.is_array() || e.elements.size() != 2 || !e.elements[0].is_string() ||
          e.elements[1].type != RedisReply::Type::kInteger || e.elements[1].integer < 0) {
        shape_ok = false;
        break;
      }
      const std::size_t cost = static_cast<std::size_t>(e.elements[1].integer) + kEntryFraming;
      if (cost > budget) {
        if (k == 0) {
          auto id = ParseStreamId(e.elements[0].str);
          if (!id.has_value()) {
            shape_ok = false;
          } else {
            plan.oversized = id.value();
          }
        }
        break;
      }
      if (used + cost > budget) break;
      used += cost;
      ++plan.take;
    }
    if (!shape_ok) {
      MarkFailed(state, MakeError(ErrorCode::kCorruptData, "entry sizes: unexpected reply"));
      continue;
    }
    MarkHealthy(state);
    ++round.scenes;
    plan.caught_up = plan.oversized.is_zero() && plan.take == listed && listed < options_.count;
    if (!plan.caught_up) caught_up = false;
    if (plan.take > 0 || !plan.oversized.is_zero()) plans.push_back(plan);
  }

  // 3. Skips (an entry over the whole budget can never be read) and the planned reads.
  std::vector<std::string> takes;
  std::vector<std::string> starts;
  takes.reserve(plans.size());
  starts.reserve(plans.size());
  std::vector<RedisArgs> reads;
  std::vector<SizedPlan*> read_plans;
  for (SizedPlan& plan : plans) {
    SceneState& state = *plan.state;
    if (!plan.oversized.is_zero()) {
      oversized_entries_.fetch_add(1, std::memory_order_relaxed);
      StreamEntry skipped;
      skipped.id = plan.oversized;
      skipped.kind = StreamEntry::Kind::kBad;
      skipped.error = MakeError(ErrorCode::kPayloadTooLarge,
                                "entry larger than the read loop's budget (max_round_bytes)");
      std::vector<StreamEntry> one;
      one.push_back(std::move(skipped));
      HandleEntries(state, std::move(one), round, false);
      continue;
    }
    takes.push_back(std::to_string(plan.take));
    starts.push_back("(" + state.cursor.ToString());
    reads.push_back({"XRANGE", state.log_key, starts.back(), "+", "COUNT", takes.back()});
    read_plans.push_back(&plan);
  }
  if (reads.empty()) return {};
  auto replies = connection_.Pipeline(reads, options_.max_round_bytes);
  NoteReadBytes();
  if (!replies.has_value()) {
    // Over the budget here only if the streams changed since the sizes were read: the next
    // round plans again.
    if (replies.error().code == ErrorCode::kPayloadTooLarge) {
      round_overflows_.fetch_add(1, std::memory_order_relaxed);
      caught_up = false;
      return {};
    }
    return replies.error();
  }
  for (std::size_t i = 0; i < read_plans.size(); ++i) {
    SceneState& state = *read_plans[i]->state;
    RedisReply& reply = (*replies)[i];
    if (reply.is_error()) {
      MarkFailed(state, ErrorFromRedisError(reply.str));
      caught_up = false;
      continue;
    }
    auto entries = ParseStreamEntries(std::move(reply), entry_options());
    if (!entries.has_value()) {
      MarkFailed(state, entries.error());
      caught_up = false;
      continue;
    }
    HandleEntries(state, std::move(entries).value(), round, read_plans[i]->caught_up);
  }
  return {};
}

}  // namespace scenecrdt::cluster
