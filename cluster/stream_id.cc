// SPDX-License-Identifier: Apache-2.0
// Owns the text form of stream IDs and the scene sequence mapping (docs/CLUSTER.md).
#include "scenecrdt/cluster/stream_id.h"

#include <charconv>

namespace scenecrdt::cluster {
namespace {

// One unsigned decimal: digits only, no leading zero unless it is "0", fits in 64 bits.
bool ParseDecimalU64(std::string_view text, uint64_t& out) {
  if (text.empty() || text.size() > 20) return false;
  if (text.size() > 1 && text[0] == '0') return false;
  for (const char c : text) {
    if (c < '0' || c > '9') return false;
  }
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), out);
  return ec == std::errc() && end == text.data() + text.size();
}

}  // namespace

StreamId StreamId::Next() const {
  if (seq != UINT64_MAX) return StreamId{ms, seq + 1};
  if (ms != UINT64_MAX) return StreamId{ms + 1, 0};
  return *this;
}

std::string StreamId::ToString() const { return std::to_string(ms) + "-" + std::to_string(seq); }

Result<StreamId> ParseStreamId(std::string_view text) {
  const std::size_t dash = text.find('-');
  if (dash == std::string_view::npos) {
    return MakeError(ErrorCode::kParse, "stream ID without '-'");
  }
  StreamId id;
  if (!ParseDecimalU64(text.substr(0, dash), id.ms) ||
      !ParseDecimalU64(text.substr(dash + 1), id.seq)) {
    return MakeError(ErrorCode::kParse, "stream ID part is not an unsigned 64-bit decimal");
  }
  return id;
}

uint64_t SceneSequenceFromStreamId(StreamId id) {
  // Saturating both parts keeps the mapping monotonic: a larger ID never maps lower.
  const uint64_t ms = id.ms < kSceneSequenceMaxMs ? id.ms : kSceneSequenceMaxMs;
  const uint64_t seq = id.ms > kSceneSequenceMaxMs     ? kSceneSequenceMaxSeq
                       : id.seq < kSceneSequenceMaxSeq ? id.seq
                                                       : kSceneSequenceMaxSeq;
  return (ms << kSceneSequenceSeqBits) | seq;
}

StreamId StreamIdFromSceneSequence(uint64_t sequence) {
  return StreamId{sequence >> kSceneSequenceSeqBits, sequence & kSceneSequenceMaxSeq};
}

}  // namespace scenecrdt::cluster
