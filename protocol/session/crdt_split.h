// SPDX-License-Identifier: Apache-2.0
// Owns cutting a DCL CRDT stream into the Crdt frames a client sends: whole messages in order,
// each part under the server's frame limit (docs/PROTOCOL.md section 2, "Frame limit") and a
// message count. Messages are found by their length field only (docs/PROTOCOL.md section 1);
// the bytes are never re-encoded.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "scenecrdt/protocol/result.h"

namespace scenecrdt::session {

// One frame's share of a stream: `bytes` bytes from `offset`, `messages` whole messages.
struct CrdtPart {
  std::size_t offset = 0;
  std::size_t bytes = 0;
  uint64_t messages = 0;
};

// Cuts `dcl` at message boundaries into parts of at most `max_bytes` bytes and at most
// `max_messages` messages (0: no count limit), in order. Errors, with Error::offset at the
// message that stops it: kFrameTooLarge (one message alone is larger than `max_bytes`: no
// frame can carry it), kTruncated / kLengthTooSmall (not a sequence of whole messages).
Result<std::vector<CrdtPart>> SplitCrdtStream(std::span<const uint8_t> dcl, std::size_t max_bytes,
                                              uint64_t max_messages = 0);

// The length field of the message at `offset` (its size, header included); 0 when fewer than
// 4 bytes are left.
uint32_t MessageLengthAt(std::span<const uint8_t> dcl, std::size_t offset);

}  // namespace scenecrdt::session
