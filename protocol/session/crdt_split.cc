// SPDX-License-Identifier: Apache-2.0
// Owns SplitCrdtStream: the byte and message bounds of the Crdt frames a client builds.
#include "scenecrdt/protocol/session/crdt_split.h"

#include "scenecrdt/protocol/crdt_message.h"

namespace scenecrdt::session {

uint32_t MessageLengthAt(std::span<const uint8_t> dcl, std::size_t offset) {
  if (offset > dcl.size() || dcl.size() - offset < 4) return 0;
  const uint8_t* p = dcl.data() + offset;
  return uint32_t{p[0]} | (uint32_t{p[1]} << 8) | (uint32_t{p[2]} << 16) | (uint32_t{p[3]} << 24);
}

Result<std::vector<CrdtPart>> SplitCrdtStream(std::span<const uint8_t> dcl, std::size_t max_bytes,
                                              uint64_t max_messages) {
  std::vector<CrdtPart> parts;
  CrdtPart part;
  std::size_t pos = 0;
  while (pos < dcl.size()) {
    if (dcl.size() - pos < protocol::kHeaderSize) {
      return MakeError(ErrorCode::kTruncated, "the stream ends inside a message header", pos);
    }
    const uint32_t length = MessageLengthAt(dcl, pos);
    if (length < protocol::kHeaderSize) {
      return MakeError(ErrorCode::kLengthTooSmall, "a message length below its 8-byte header", pos);
    }
    if (length > dcl.size() - pos) {
      return MakeError(ErrorCode::kTruncated, "the stream ends inside a message", pos);
    }
    if (length > max_bytes) {
      return MakeError(ErrorCode::kFrameTooLarge,
                       "a DCL message larger than one Crdt frame may carry under the server's "
                       "frame limit",
                       pos);
    }
    if (part.messages > 0 &&
        (part.bytes + length > max_bytes || (max_messages != 0 && part.messages == max_messages))) {
      parts.push_back(part);
      part = CrdtPart{pos, 0, 0};
    }
    part.bytes += length;
    ++part.messages;
    pos += length;
  }
  if (part.messages > 0) parts.push_back(part);
  return parts;
}

}  // namespace scenecrdt::session
