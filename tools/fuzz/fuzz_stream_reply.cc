// SPDX-License-Identifier: Apache-2.0
// Fuzz target for the reply-to-entry parsing (cluster/stream_entry.h) behind the hiredis
// conversion (cluster/internal/hiredis_reply.h). Input: RESP bytes, as Redis would send them;
// hiredis's own reader builds each reply, ConvertReply copies it, and every parser runs on it.
// Checks: nothing crashes; accepted entry lists have strictly increasing IDs; a data entry's
// chunk decodes strictly and has a valid node id; a bad entry carries kCorruptData; a load page
// holds only entries after its snapshot; a parsed stream ID prints back to its text. Parsed as
// the read loop does (EntryOptions: own entries kOwn, the rest kept decoded): the same entries
// in the same order, an own entry never decoded, a decoded chunk's messages its whole bytes.
//
// Inputs declaring an array of more than 4096 elements are skipped: hiredis 0.14 allocates the
// element vector from the declared count before any element arrives (Redis is trusted not to
// lie), which is hiredis's bound to keep, not the parsers'.
#include <hiredis/hiredis.h>

#include <cstdint>
#include <cstdlib>
#include <string_view>
#include <utility>
#include <vector>

#include "scenecrdt/cluster/cluster_config.h"
#include "scenecrdt/cluster/internal/hiredis_reply.h"
#include "scenecrdt/cluster/stream_entry.h"
#include "scenecrdt/protocol/crdt_codec.h"

using scenecrdt::ErrorCode;
using scenecrdt::cluster::EntryOptions;
using scenecrdt::cluster::IsValidNodeId;
using scenecrdt::cluster::ParseLoadPage;
using scenecrdt::cluster::ParseSnapshotFields;
using scenecrdt::cluster::ParseStreamEntries;
using scenecrdt::cluster::ParseStreamId;
using scenecrdt::cluster::ParseXreadReply;
using scenecrdt::cluster::RedisReply;
using scenecrdt::cluster::StreamEntry;

namespace {

bool DeclaresHugeArray(std::string_view input) {
  for (std::size_t i = 0; i < input.size(); ++i) {
    if (input[i] != '*') continue;
    uint64_t count = 0;
    for (std::size_t j = i + 1; j < input.size() && input[j] >= '0' && input[j] <= '9'; ++j) {
      count = count * 10 + static_cast<uint64_t>(input[j] - '0');
      if (count > 4096) return true;
    }
  }
  return false;
}

void CheckEntries(const std::vector<StreamEntry>& entries,
                  const scenecrdt::protocol::DecodeOptions& decode) {
  for (std::size_t i = 0; i < entries.size(); ++i) {
    const StreamEntry& e = entries[i];
    if (i > 0 && !(entries[i - 1].id < e.id)) std::abort();
    switch (e.kind) {
      case StreamEntry::Kind::kData: {
        if (!IsValidNodeId(e.node) || (e.chunk.empty() && e.owners.empty())) std::abort();
        auto r = scenecrdt::protocol::DecodeStream(e.bytes(), decode,
                                                   [](const scenecrdt::protocol::CrdtMessage&) {});
        if (!r.has_value()) std::abort();
        break;
      }
      case StreamEntry::Kind::kTrim:
        if (!IsValidNodeId(e.node)) std::abort();
        break;
      case StreamEntry::Kind::kBad:
      default:
        if (e.error.code != ErrorCode::kCorruptData) std::abort();
        break;
    }
  }
}

// `decoded` parsed the same reply as `plain` under EntryOptions{own_node = "a", keep_decoded}.
void CheckDecoded(const std::vector<StreamEntry>& plain, const std::vector<StreamEntry>& decoded) {
  if (plain.size() != decoded.size()) std::abort();
  for (std::size_t i = 0; i < plain.size(); ++i) {
    const StreamEntry& p = plain[i];
    const StreamEntry& d = decoded[i];
    if (p.id != d.id) std::abort();
    if (d.kind == StreamEntry::Kind::kOwn) {
      if (d.node != "a" || !d.chunk.empty() || d.decoded.bytes) std::abort();
      continue;
    }
    if (p.kind != d.kind) std::abort();
    if (d.kind != StreamEntry::Kind::kData) continue;
    if (d.node == "a" || !d.chunk.empty() || !d.decoded.bytes || *d.decoded.bytes != p.chunk) {
      std::abort();
    }
    std::size_t size = 0;
    for (const auto& m : d.decoded.messages) size += scenecrdt::protocol::EncodedSize(m);
    if (size > d.decoded.size()) std::abort();  // skipped unknown types may make it less
  }
}

void CheckIds(const RedisReply& reply, int depth) {
  if (depth > 16) std::abort();  // ConvertReply's bound
  if (reply.is_string()) {
    auto id = ParseStreamId(reply.str);
    if (id.has_value() && id->ToString() != reply.str) std::abort();
  }
  for (const RedisReply& e : reply.elements) CheckIds(e, depth + 1);
}

void CheckReply(const RedisReply& reply) {
  const scenecrdt::protocol::DecodeOptions decode;
  CheckIds(reply, 0);
  {
    RedisReply copy = reply;
    auto batches = ParseXreadReply(std::move(copy), decode);
    if (batches.has_value()) {
      for (const auto& b : *batches) CheckEntries(b.entries, decode);
    } else if (batches.error().code != ErrorCode::kCorruptData) {
      std::abort();
    }
  }
  {
    RedisReply copy = reply;
    auto entries = ParseStreamEntries(std::move(copy), decode);
    if (entries.has_value()) CheckEntries(*entries, decode);
    EntryOptions options;
    options.decode = decode;
    options.own_node = "a";
    options.keep_decoded = true;
    RedisReply again = reply;
    auto decoded = ParseStreamEntries(std::move(again), options);
    if (entries.has_value() != decoded.has_value()) std::abort();
    if (entries.has_value()) CheckDecoded(*entries, *decoded);
  }
  {
    RedisReply copy = reply;
    auto page = ParseLoadPage(std::move(copy), decode);
    if (page.has_value()) {
      CheckEntries(page->entries, decode);
      if (!page->entries.empty() && !(page->snapshot.covers < page->entries.front().id)) {
        std::abort();
      }
      if (!page->snapshot.exists &&
          (!page->snapshot.covers.is_zero() || !page->snapshot.data.empty())) {
        std::abort();
      }
    }
  }
  if (reply.is_array() && reply.elements.size() == 2) {
    RedisReply id = reply.elements[0], data = reply.elements[1];
    auto snapshot = ParseSnapshotFields(std::move(id), std::move(data), decode);
    if (!snapshot.has_value() && snapshot.error().code != ErrorCode::kCorruptData) std::abort();
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  if (DeclaresHugeArray(input)) return 0;
  redisReader* reader = redisReaderCreate();
  if (reader == nullptr) return 0;
  if (redisReaderFeed(reader, input.data(), input.size()) == REDIS_OK) {
    for (int replies = 0; replies < 64; ++replies) {
      void* raw = nullptr;
      if (redisReaderGetReply(reader, &raw) != REDIS_OK || raw == nullptr) break;
      auto converted = scenecrdt::cluster::internal::ConvertReply(*static_cast<redisReply*>(raw));
      freeReplyObject(raw);
      if (converted.has_value()) CheckReply(*converted);
    }
  }
  redisReaderFree(reader);
  return 0;
}
