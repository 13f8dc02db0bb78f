// SPDX-License-Identifier: Apache-2.0
// Owns the reply parsers. Each entry is judged on its own: a bad one becomes kBad and the rest
// of the reply still parses, so one writer's garbage cannot hide other writers' entries.
#include "scenecrdt/cluster/stream_entry.h"

#include <utility>

#include "scenecrdt/cluster/cluster_config.h"
#include "scenecrdt/protocol/crdt_message.h"
#include "scenecrdt/protocol/transform.h"

namespace scenecrdt::cluster {
namespace {

Error Corrupt(const char* detail) { return MakeError(ErrorCode::kCorruptData, detail); }

StreamEntry Bad(StreamId id, const char* detail) {
  StreamEntry e;
  e.id = id;
  e.kind = StreamEntry::Kind::kBad;
  e.error = MakeError(ErrorCode::kCorruptData, detail);
  return e;
}

bool Decodes(std::span<const uint8_t> chunk, const protocol::DecodeOptions& decode, Error& error) {
  auto r = protocol::DecodeStream(chunk, decode, [](const protocol::CrdtMessage&) {});
  if (!r.has_value()) error = r.error();
  return r.has_value();
}

// The fields of one entry (already known to have a parsable ID).
StreamEntry ParseFields(StreamId id, RedisReply&& fields, const EntryOptions& options) {
  if (!fields.is_array() || fields.elements.size() % 2 != 0) {
    return Bad(id, "entry fields are not field/value pairs");
  }
  RedisReply* node = nullptr;
  RedisReply* data = nullptr;
  RedisReply* trimmed = nullptr;
  RedisReply* owners = nullptr;
  RedisReply* corrections = nullptr;
  for (std::size_t i = 0; i < fields.elements.size(); i += 2) {
    RedisReply& name = fields.elements[i];
    RedisReply& value = fields.elements[i + 1];
    if (!name.is_string() || !value.is_string()) return Bad(id, "entry field is not a string");
    RedisReply** slot = name.str == kFieldNode          ? &node
                        : name.str == kFieldData        ? &data
                        : name.str == kFieldTrimmed     ? &trimmed
                        : name.str == kFieldOwners      ? &owners
                        : name.str == kFieldCorrections ? &corrections
                                                        : nullptr;
    if (slot == nullptr) continue;
    if (*slot != nullptr) return Bad(id, "entry repeats a field");
    *slot = &value;
  }
  if (node == nullptr || !IsValidNodeId(node->str)) return Bad(id, "entry without a valid node id");
  if ((data == nullptr) == (trimmed == nullptr)) {
    return Bad(id, "entry holds neither or both of data and trim fields");
  }
  StreamEntry e;
  e.id = id;
  e.node = std::move(node->str);
  if (trimmed != nullptr) {
    auto through = ParseStreamId(trimmed->str);
    if (!through.has_value()) return Bad(id, "trim marker ID does not parse");
    e.kind = StreamEntry::Kind::kTrim;
    e.trimmed_through = *through;
    return e;
  }
  if (owners != nullptr) e.owners = std::move(owners->str);
  if (data->str.empty() && e.owners.empty()) return Bad(id, "entry with an empty chunk");
  if (!options.own_node.empty() && e.node == options.own_node) {
    e.kind = StreamEntry::Kind::kOwn;  // merged by its writer: nothing to decode or keep
    return e;
  }
  e.kind = StreamEntry::Kind::kData;
  if (corrections != nullptr) e.corrections = std::move(corrections->str);
  Error error;
  if (options.keep_decoded) {
    auto decoded = DecodeChunk(std::move(data->str), options.decode);
    if (decoded.has_value()) {
      e.decoded = std::move(decoded).value();
      return e;
    }
    error = decoded.error();
  } else {
    e.chunk = std::move(data->str);
    if (Decodes(e.bytes(), options.decode, error)) return e;
  }
  StreamEntry bad = Bad(id, "entry chunk is not a valid DCL stream");
  bad.error.offset = error.offset;
  bad.node = std::move(e.node);
  return bad;
}

}  // namespace

Result<DecodedChunk> DecodeChunk(std::string chunk, const protocol::DecodeOptions& decode) {
  DecodedChunk decoded;
  auto bytes = std::make_unique<const std::string>(std::move(chunk));
  const std::span<const uint8_t> view(reinterpret_cast<const uint8_t*>(bytes->data()),
                                      bytes->size());
  // One Transform PUT per message is the common chunk: one allocation.
  decoded.messages.reserve(
      view.size() / (protocol::kPutComponentBaseSize + protocol::Transform::kSize) + 1);
  auto r = protocol::DecodeStream(
      view, decode, [&](const protocol::CrdtMessage& m) { decoded.messages.push_back(m); });
  if (!r.has_value()) return r.error();
  decoded.bytes = std::move(bytes);
  return decoded;
}

Result<std::vector<StreamEntry>> ParseStreamEntries(RedisReply&& reply,
                                                    const EntryOptions& options) {
  if (!reply.is_array()) return Corrupt("stream reply is not an array");
  std::vector<StreamEntry> entries;
  entries.reserve(reply.elements.size());
  for (RedisReply& item : reply.elements) {
    if (!item.is_array() || item.elements.size() != 2 || !item.elements[0].is_string()) {
      return Corrupt("stream entry is not [id, fields]");
    }
    auto id = ParseStreamId(item.elements[0].str);
    if (!id.has_value()) return Corrupt("stream entry ID does not parse");
    if (!entries.empty() && !(entries.back().id < *id)) {
      return Corrupt("stream entry IDs are not increasing");
    }
    entries.push_back(ParseFields(*id, std::move(item.elements[1]), options));
  }
  return entries;
}

Result<std::vector<StreamBatch>> ParseXreadReply(RedisReply&& reply, const EntryOptions& options) {
  std::vector<StreamBatch> batches;
  if (reply.is_nil()) return batches;
  if (!reply.is_array()) return Corrupt("XREAD reply is not an array");
  batches.reserve(reply.elements.size());
  for (RedisReply& item : reply.elements) {
    if (!item.is_array() || item.elements.size() != 2 || !item.elements[0].is_string()) {
      return Corrupt("XREAD reply item is not [key, entries]");
    }
    auto entries = ParseStreamEntries(std::move(item.elements[1]), options);
    if (!entries.has_value()) return entries.error();
    batches.push_back(StreamBatch{std::move(item.elements[0].str), std::move(entries).value()});
  }
  return batches;
}

Result<SceneSnapshot> ParseSnapshotFields(RedisReply&& id, RedisReply&& data,
                                          const protocol::DecodeOptions& decode) {
  SceneSnapshot snapshot;
  if (id.is_nil() && data.is_nil()) return snapshot;
  if (!id.is_string() || !data.is_string()) return Corrupt("snapshot hash lacks id or data");
  auto covers = ParseStreamId(id.str);
  if (!covers.has_value()) return Corrupt("snapshot id does not parse");
  snapshot.exists = true;
  snapshot.covers = *covers;
  snapshot.data = std::move(data.str);
  Error error;
  if (!Decodes(snapshot.bytes(), decode, error)) {
    return MakeError(ErrorCode::kCorruptData, "snapshot data is not a valid DCL stream",
                     error.offset);
  }
  return snapshot;
}

Result<LoadPage> ParseLoadPage(RedisReply&& reply, const protocol::DecodeOptions& decode) {
  if (!reply.is_array() || reply.elements.size() != 3) return Corrupt("load reply is not a triple");
  auto snapshot =
      ParseSnapshotFields(std::move(reply.elements[0]), std::move(reply.elements[1]), decode);
  if (!snapshot.has_value()) return snapshot.error();
  auto entries = ParseStreamEntries(std::move(reply.elements[2]), decode);
  if (!entries.has_value()) return entries.error();
  if (!entries->empty() && !(snapshot->covers < entries->front().id)) {
    return Corrupt("load reply holds entries the snapshot covers");
  }
  return LoadPage{std::move(snapshot).value(), std::move(entries).value()};
}

}  // namespace scenecrdt::cluster
