// SPDX-License-Identifier: Apache-2.0
// Owns the append and load paths of the scene log. The load reads the snapshot and the first
// page of its tail in one script (an atomic view), then pages on with XRANGE; a GapTracker
// watches the trim markers met on the way for entries trimmed between two pages.
#include "scenecrdt/cluster/scene_log.h"

#include <string>
#include <utility>

#include "scenecrdt/cluster/gap_tracker.h"
#include "scenecrdt/cluster/internal/scripts.h"

namespace scenecrdt::cluster {

SceneLog::SceneLog(RedisConnection& connection, ClusterConfig config)
    : connection_(connection), config_(std::move(config)), valid_(ValidateClusterConfig(config_)) {}

namespace {

std::string_view AsText(std::span<const uint8_t> bytes) {
  return {reinterpret_cast<const char*>(bytes.data()), bytes.size()};
}

Result<StreamId> EntryIdFromReply(const RedisReply& reply) {
  if (reply.is_error()) return ErrorFromRedisError(reply.str);
  if (!reply.is_string()) return MakeError(ErrorCode::kIo, "XADD did not answer an entry ID");
  auto id = ParseStreamId(reply.str);
  if (!id.has_value()) return MakeError(ErrorCode::kIo, "XADD answered an unparsable entry ID");
  return *id;
}

}  // namespace

Result<void> SceneLog::CheckAppend(std::string_view scene, std::span<const uint8_t> chunk,
                                   std::string& log_key) const {
  if (!valid_.has_value()) return valid_.error();
  auto keys = MakeSceneKeys(config_.key_prefix, scene);
  if (!keys.has_value()) return keys.error();
  if (chunk.empty() || chunk.size() > config_.max_entry_bytes) {
    return MakeError(ErrorCode::kInvalidArgument, "chunk must be 1..max_entry_bytes bytes");
  }
  auto decoded = protocol::DecodeStream(chunk, config_.decode, [](const protocol::CrdtMessage&) {});
  if (!decoded.has_value()) return decoded.error();
  log_key = std::move(keys->log);
  return {};
}

Result<StreamId> SceneLog::Append(std::string_view scene, std::span<const uint8_t> chunk) {
  std::string log_key;
  if (auto checked = CheckAppend(scene, chunk, log_key); !checked.has_value()) {
    return checked.error();
  }
  auto reply = connection_.Command(
      {"XADD", log_key, "*", kFieldNode, config_.node_id, kFieldData, AsText(chunk)});
  if (!reply.has_value()) return reply.error();
  return EntryIdFromReply(*reply);
}

Result<std::vector<Result<StreamId>>> SceneLog::AppendBatch(std::span<const SceneChunk> chunks) {
  std::vector<Result<StreamId>> results;
  results.reserve(chunks.size());
  std::vector<std::string> keys(chunks.size());
  std::vector<RedisArgs> commands;
  std::vector<std::size_t> sent;  // index in `chunks` of each command
  for (std::size_t i = 0; i < chunks.size(); ++i) {
    auto checked = CheckAppend(chunks[i].scene, chunks[i].chunk, keys[i]);
    if (!checked.has_value()) {
      results.emplace_back(checked.error());
      continue;
    }
    results.emplace_back(StreamId{});
    commands.push_back(
        {"XADD", keys[i], "*", kFieldNode, config_.node_id, kFieldData, AsText(chunks[i].chunk)});
    sent.push_back(i);
  }
  if (commands.empty()) return results;
  auto replies = connection_.Pipeline(commands);
  if (!replies.has_value()) return replies.error();
  for (std::size_t j = 0; j < sent.size(); ++j) {
    results[sent[j]] = EntryIdFromReply((*replies)[j]);
  }
  return results;
}

Result<SceneSnapshot> SceneLog::ReadSnapshot(std::string_view scene) {
  if (!valid_.has_value()) return valid_.error();
  auto keys = MakeSceneKeys(config_.key_prefix, scene);
  if (!keys.has_value()) return keys.error();
  auto reply = connection_.Command({"HMGET", keys->snapshot, "id", "data"});
  if (!reply.has_value()) return reply.error();
  if (!reply->is_array() || reply->elements.size() != 2) {
    return MakeError(ErrorCode::kIo, "HMGET did not answer two values");
  }
  return ParseSnapshotFields(std::move(reply->elements[0]), std::move(reply->elements[1]),
                             config_.decode);
}

Result<uint64_t> SceneLog::StreamLength(std::string_view scene) {
  if (!valid_.has_value()) return valid_.error();
  auto keys = MakeSceneKeys(config_.key_prefix, scene);
  if (!keys.has_value()) return keys.error();
  auto reply = connection_.Command({"XLEN", keys->log});
  if (!reply.has_value()) return reply.error();
  if (reply->type != RedisReply::Type::kInteger || reply->integer < 0) {
    return MakeError(ErrorCode::kIo, "XLEN did not answer a count");
  }
  return static_cast<uint64_t>(reply->integer);
}

Result<LoadedScene> SceneLog::LoadScene(std::string_view scene) {
  if (!valid_.has_value()) return valid_.error();
  auto keys = MakeSceneKeys(config_.key_prefix, scene);
  if (!keys.has_value()) return keys.error();
  const std::string page = std::to_string(config_.page_entries);
  for (uint32_t attempt = 1; attempt <= kMaxLoadAttempts; ++attempt) {
    auto first = connection_.Command(
        {"EVAL", internal::kLoadFirstPageScript, "2", keys->snapshot, keys->log, page});
    if (!first.has_value()) return first.error();
    auto parsed = ParseLoadPage(std::move(first).value(), config_.decode);
    if (!parsed.has_value()) return parsed.error();

    LoadedScene loaded;
    loaded.attempts = attempt;
    loaded.snapshot = std::move(parsed->snapshot);
    loaded.last_id = loaded.snapshot.covers;
    std::vector<StreamEntry> entries = std::move(parsed->entries);
    GapTracker gaps;
    bool missed = false;
    while (true) {
      if (!entries.empty()) gaps.NoteRead(loaded.last_id, entries.front().id);
      const bool full_page = entries.size() >= config_.page_entries;
      for (StreamEntry& e : entries) {
        loaded.last_id = e.id;
        switch (e.kind) {
          case StreamEntry::Kind::kData:
            loaded.tail.push_back(std::move(e));
            break;
          case StreamEntry::Kind::kTrim:
            if (gaps.MissedByTrim(e.trimmed_through)) missed = true;
            break;
          case StreamEntry::Kind::kBad:
          default:
            loaded.bad.push_back(std::move(e));
            break;
        }
      }
      if (missed || !full_page) break;
      const std::string from = "(" + loaded.last_id.ToString();
      auto next = connection_.Command({"XRANGE", keys->log, from, "+", "COUNT", page});
      if (!next.has_value()) return next.error();
      auto more = ParseStreamEntries(std::move(next).value(), config_.decode);
      if (!more.has_value()) return more.error();
      entries = std::move(more).value();
    }
    if (!missed) return loaded;
  }
  return MakeError(ErrorCode::kUnavailable, "scene log trimmed faster than it could be loaded");
}

}  // namespace scenecrdt::cluster
