// SPDX-License-Identifier: Apache-2.0
// Shared helpers of the protocol suites: golden vectors, owned copies of decoded messages,
// little-endian byte builders and whole/chunked decoding into comparable lists.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <initializer_list>
#include <ostream>
#include <span>
#include <string>
#include <vector>

#include "scenecrdt/json/reader.h"
#include "scenecrdt/protocol/crdt_codec.h"
#include "scenecrdt/protocol/crdt_message.h"

namespace scenecrdt::protocol::test {

// A CrdtMessage that owns its payload, so it outlives the decoder's buffers.
struct OwnedMessage {
  MessageType type = MessageType::kPutComponent;
  EntityId entity = 0;
  ComponentId component = 0;
  uint32_t timestamp = 0;
  uint32_t network_id = 0;
  std::vector<uint8_t> data;
  bool legacy_length = false;

  static OwnedMessage From(const CrdtMessage& m);
  // A view for the encoder; valid while *this is alive and unchanged.
  CrdtMessage View() const;

  friend bool operator==(const OwnedMessage&, const OwnedMessage&) = default;
};
void PrintTo(const OwnedMessage& m, std::ostream* os);
// For rapidcheck's counterexample output.
std::ostream& operator<<(std::ostream& os, const OwnedMessage& m);

// One line of tests/data/golden-messages.jsonl.
struct GoldenMessage {
  int line = 0;
  std::string op;
  json::Json json;
  std::vector<uint8_t> bytes;  // the `hex` field: the whole message
};

// Every golden line, in file order. Fails the current test (and returns what it has) when the
// file is missing or malformed.
std::vector<GoldenMessage> LoadGoldenMessages();
// The golden messages concatenated, plus where each one starts.
std::vector<uint8_t> GoldenStream(const std::vector<GoldenMessage>& golden,
                                  std::vector<std::size_t>* starts = nullptr);

// Little-endian u32 words, concatenated: Words({20, 2, 512, 1, 3}) is a DELETE_COMPONENT.
std::vector<uint8_t> Words(std::initializer_list<uint32_t> words);
void AppendWords(std::initializer_list<uint32_t> words, std::vector<uint8_t>& out);
void AppendBytes(std::span<const uint8_t> bytes, std::vector<uint8_t>& out);

// The outcome of decoding a whole buffer with DecodeStream.
struct WholeDecode {
  std::vector<OwnedMessage> messages;
  bool ok = true;
  Error error;
};
WholeDecode DecodeWhole(std::span<const uint8_t> input, const DecodeOptions& options = {});

// The outcome of feeding a CrdtStreamDecoder the input cut at `cuts` (sorted offsets).
struct ChunkedDecode {
  std::vector<OwnedMessage> messages;
  bool ok = true;
  Error error;
  std::size_t pending_bytes = 0;
  uint64_t consumed_bytes = 0;
};
ChunkedDecode DecodeChunked(std::span<const uint8_t> input, std::span<const std::size_t> cuts,
                            const DecodeOptions& options = {});

// Encodes every message, in order.
std::vector<uint8_t> EncodeAll(const std::vector<OwnedMessage>& messages);

// The walkers' inline PUT fast path (detail::TryDecodeCompletePut) against DecodeMessage at
// every offset of `bytes`: where the fast path takes a message, DecodeMessage decodes the same
// one (size, fields, payload pointer), and with a ceiling of at least kMinMaxMessageBytes the
// fast path takes every complete PUT_COMPONENT DecodeMessage decodes. Returns "" when they
// agree, else the first disagreement.
std::string FastPathDisagreement(std::span<const uint8_t> bytes, const DecodeOptions& options);

}  // namespace scenecrdt::protocol::test
