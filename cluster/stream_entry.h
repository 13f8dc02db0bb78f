// SPDX-License-Identifier: Apache-2.0
// Owns the entry format of a scene stream and the parsers of the replies that carry entries
// and snapshots (docs/CLUSTER.md "Entries"). A data entry is `n <node id> d <DCL chunk>`; a trim
// marker, written by compaction right after it trimmed, is `n <node id> t <last trimmed ID>`.
// Unknown extra fields are ignored (room for later versions). Redis is trusted not to send
// malformed RESP, but entry contents are not: anyone with access can XADD, so a bad entry is
// reported as kBad with its reason and skipped, never merged and never fatal to its stream.
// Fuzzed by tools/fuzz/fuzz_stream_reply.cc.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "scenecrdt/cluster/redis_reply.h"
#include "scenecrdt/cluster/stream_id.h"
#include "scenecrdt/protocol/crdt_codec.h"
#include "scenecrdt/protocol/result.h"

namespace scenecrdt::cluster {

inline constexpr std::string_view kFieldNode = "n";
inline constexpr std::string_view kFieldData = "d";
inline constexpr std::string_view kFieldTrimmed = "t";
// Owner rows (docs/AUTHORITY.md "Cluster"): written only under --authority owner|rules, by the
// append scripts of server/cluster/cluster_owners.cc; a data entry may then have an empty chunk.
inline constexpr std::string_view kFieldOwners = "o";
// Correction marks (docs/AUTHORITY.md "Cluster"): the registers of the chunk that are a node's
// corrections of refused writes (server/cluster/owner_rows.h encodes them); authority only.
inline constexpr std::string_view kFieldCorrections = "k";

// A data entry's chunk decoded once (EntryOptions::keep_decoded): the messages view `bytes`,
// which moving the DecodedChunk never relocates, so whoever merges it decodes nothing again.
struct DecodedChunk {
  std::unique_ptr<const std::string> bytes;
  std::vector<protocol::CrdtMessage> messages;

  std::size_t size() const { return bytes ? bytes->size() : 0; }
};

// Decodes `chunk` strictly under `decode` into a DecodedChunk (kCorruptData-free: the
// decoder's error, with its offset, when it does not decode).
Result<DecodedChunk> DecodeChunk(std::string chunk, const protocol::DecodeOptions& decode);

// How entries are parsed. The defaults check each data chunk and keep it as bytes.
struct EntryOptions {
  protocol::DecodeOptions decode;
  // Entries written by this node id are kOwn: their chunk is neither decoded nor kept (its
  // writer merged it before appending it). Empty: every entry is parsed alike.
  std::string_view own_node;
  // Data chunks are kept decoded (`decoded`, the one decode of the read loop's hop) instead
  // of as `chunk` bytes.
  bool keep_decoded = false;
};

struct StreamEntry {
  enum class Kind : uint8_t {
    kData,  // `chunk` (or `decoded`) is a DCL chunk that decodes strictly
    kTrim,  // compaction removed every entry up to `trimmed_through`
    kBad,   // unusable (`error` says why); its ID still advances the cursor
    kOwn,   // EntryOptions::own_node wrote it: `node`, `owners` only (the chunk is dropped)
  };
  StreamId id;
  Kind kind = Kind::kBad;
  std::string node;          // kData, kTrim: the writer's node id
  std::string chunk;         // kData (empty under EntryOptions::keep_decoded)
  DecodedChunk decoded;      // kData under EntryOptions::keep_decoded
  std::string owners;        // kData: the `o` field (owner rows, encoded), usually empty
  std::string corrections;   // kData: the `k` field (correction marks, encoded), usually empty
  StreamId trimmed_through;  // kTrim
  Error error;               // kBad

  std::span<const uint8_t> bytes() const {
    return {reinterpret_cast<const uint8_t*>(chunk.data()), chunk.size()};
  }
};

// An XRANGE reply (array of [id, [field, value, ...]]) in stream order. Errors (kCorruptData)
// only for a reply whose shape is not an entry list, an unparsable ID or IDs out of order.
Result<std::vector<StreamEntry>> ParseStreamEntries(RedisReply&& reply,
                                                    const EntryOptions& options);
inline Result<std::vector<StreamEntry>> ParseStreamEntries(RedisReply&& reply,
                                                           const protocol::DecodeOptions& decode) {
  EntryOptions options;
  options.decode = decode;
  return ParseStreamEntries(std::move(reply), options);
}

// One stream's part of an XREAD reply.
struct StreamBatch {
  std::string key;
  std::vector<StreamEntry> entries;
};
// An XREAD reply: nil (nothing new) is an empty list.
Result<std::vector<StreamBatch>> ParseXreadReply(RedisReply&& reply, const EntryOptions& options);
inline Result<std::vector<StreamBatch>> ParseXreadReply(RedisReply&& reply,
                                                        const protocol::DecodeOptions& decode) {
  EntryOptions options;
  options.decode = decode;
  return ParseXreadReply(std::move(reply), options);
}

// A scene snapshot: the merged state of every entry up to `covers`, as one DCL chunk.
struct SceneSnapshot {
  bool exists = false;  // false: no snapshot yet (covers 0-0, empty data)
  StreamId covers;
  std::string data;

  std::span<const uint8_t> bytes() const {
    return {reinterpret_cast<const uint8_t*>(data.data()), data.size()};
  }
};
// The `id` and `data` fields of a snapshot hash (HMGET replies). Both nil: no snapshot. Errors:
// kCorruptData (one missing, an unparsable ID, a chunk that does not decode).
Result<SceneSnapshot> ParseSnapshotFields(RedisReply&& id, RedisReply&& data,
                                          const protocol::DecodeOptions& decode);

// The first page of a scene load, read atomically by a script: [id, data, entries].
struct LoadPage {
  SceneSnapshot snapshot;
  std::vector<StreamEntry> entries;
};
Result<LoadPage> ParseLoadPage(RedisReply&& reply, const protocol::DecodeOptions& decode);

}  // namespace scenecrdt::cluster
