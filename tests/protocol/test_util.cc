// SPDX-License-Identifier: Apache-2.0
// Shared helpers of the protocol suites (see test_util.h).
#include "tests/protocol/test_util.h"

#include <fstream>
#include <sstream>

#include "scenecrdt/json/values.h"
#include "scenecrdt/protocol/byte_order.h"
#include "scenecrdt/protocol/hex.h"

namespace scenecrdt::protocol::test {

OwnedMessage OwnedMessage::From(const CrdtMessage& m) {
  OwnedMessage o;
  o.type = m.type;
  o.entity = m.entity;
  o.component = m.component;
  o.timestamp = m.timestamp;
  o.network_id = m.network_id;
  o.data.assign(m.data.begin(), m.data.end());
  o.legacy_length = m.legacy_length;
  return o;
}

CrdtMessage OwnedMessage::View() const {
  CrdtMessage m;
  m.type = type;
  m.entity = entity;
  m.component = component;
  m.timestamp = timestamp;
  m.network_id = network_id;
  m.data = data;
  m.legacy_length = legacy_length;
  return m;
}

void PrintTo(const OwnedMessage& m, std::ostream* os) {
  *os << "{type " << static_cast<uint32_t>(m.type) << ", entity " << m.entity << ", component "
      << m.component << ", timestamp " << m.timestamp << ", networkId " << m.network_id << ", data "
      << ToHex(m.data) << (m.legacy_length ? ", legacy" : "") << "}";
}

std::ostream& operator<<(std::ostream& os, const OwnedMessage& m) {
  PrintTo(m, &os);
  return os;
}

std::vector<GoldenMessage> LoadGoldenMessages() {
  std::vector<GoldenMessage> out;
  const std::string path = std::string(SCENECRDT_TEST_DATA_DIR) + "/golden-messages.jsonl";
  std::ifstream in(path);
  if (!in) {
    ADD_FAILURE() << "cannot open " << path;
    return out;
  }
  std::string line;
  int line_no = 0;
  while (std::getline(in, line)) {
    ++line_no;
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    auto parsed = json::ReadJson(line);
    if (!parsed.has_value()) {
      ADD_FAILURE() << path << ":" << line_no << ": " << parsed.error().detail;
      continue;
    }
    GoldenMessage g;
    g.line = line_no;
    g.json = std::move(parsed).value();
    const json::Json* op = json::Member(g.json, "op");
    const json::Json* hex = json::Member(g.json, "hex");
    auto bytes = hex && hex->is_string() ? FromHex(hex->get<std::string>()) : std::nullopt;
    if (!op || !op->is_string() || !bytes) {
      ADD_FAILURE() << path << ":" << line_no << ": needs \"op\" and \"hex\" strings";
      continue;
    }
    g.op = op->get<std::string>();
    g.bytes = std::move(*bytes);
    out.push_back(std::move(g));
  }
  if (out.empty()) ADD_FAILURE() << path << " holds no messages";
  return out;
}

std::vector<uint8_t> GoldenStream(const std::vector<GoldenMessage>& golden,
                                  std::vector<std::size_t>* starts) {
  std::vector<uint8_t> out;
  for (const auto& g : golden) {
    if (starts) starts->push_back(out.size());
    AppendBytes(g.bytes, out);
  }
  return out;
}

void AppendWords(std::initializer_list<uint32_t> words, std::vector<uint8_t>& out) {
  for (uint32_t w : words) {
    uint8_t b[4];
    StoreU32Le(b, w);
    out.insert(out.end(), b, b + 4);
  }
}

std::vector<uint8_t> Words(std::initializer_list<uint32_t> words) {
  std::vector<uint8_t> out;
  AppendWords(words, out);
  return out;
}

void AppendBytes(std::span<const uint8_t> bytes, std::vector<uint8_t>& out) {
  out.insert(out.end(), bytes.begin(), bytes.end());
}

WholeDecode DecodeWhole(std::span<const uint8_t> input, const DecodeOptions& options) {
  WholeDecode out;
  auto r = DecodeStream(
      input, options, [&](const CrdtMessage& m) { out.messages.push_back(OwnedMessage::From(m)); });
  if (!r.has_value()) {
    out.ok = false;
    out.error = r.error();
  }
  return out;
}

ChunkedDecode DecodeChunked(std::span<const uint8_t> input, std::span<const std::size_t> cuts,
                            const DecodeOptions& options) {
  ChunkedDecode out;
  CrdtStreamDecoder decoder(options);
  auto emit = [&](const CrdtMessage& m) { out.messages.push_back(OwnedMessage::From(m)); };
  std::size_t from = 0;
  auto feed = [&](std::size_t to) {
    if (!out.ok) return;
    auto r = decoder.Feed(input.subspan(from, to - from), emit);
    from = to;
    if (!r.has_value()) {
      out.ok = false;
      out.error = r.error();
    }
  };
  for (std::size_t cut : cuts) {
    if (cut >= from && cut <= input.size()) feed(cut);
  }
  feed(input.size());
  out.pending_bytes = decoder.pending_bytes();
  out.consumed_bytes = decoder.consumed_bytes();
  return out;
}

std::vector<uint8_t> EncodeAll(const std::vector<OwnedMessage>& messages) {
  std::vector<uint8_t> out;
  for (const auto& m : messages) AppendMessage(m.View(), out);
  return out;
}

std::string FastPathDisagreement(std::span<const uint8_t> bytes, const DecodeOptions& options) {
  for (std::size_t pos = 0; pos < bytes.size(); ++pos) {
    const std::span<const uint8_t> rest = bytes.subspan(pos);
    // Stale values from a previous message, which the fast path must overwrite or clear.
    CrdtMessage fast{MessageType::kDeleteEntityNetwork,
                     0xA5A5A5A5u,
                     0xA5A5A5A5u,
                     0xA5A5A5A5u,
                     0xA5A5A5A5u,
                     rest,
                     true};
    const std::size_t size = detail::TryDecodeCompletePut(rest, options, fast);
    const auto step = DecodeMessage(rest, options, pos);
    const bool general_put = step.has_value() && step->kind == DecodeStep::Kind::kMessage &&
                             step->message.type == MessageType::kPutComponent;
    const std::string at = " at offset " + std::to_string(pos);
    if (size != 0) {
      if (!general_put) return "the fast path took a message DecodeMessage does not" + at;
      if (step->size != size) return "sizes differ" + at;
      if (!(OwnedMessage::From(fast) == OwnedMessage::From(step->message))) {
        return "fields differ" + at;
      }
      if (fast.data.data() != step->message.data.data()) return "payload pointers differ" + at;
    } else if (general_put && options.max_message_bytes >= kMinMaxMessageBytes) {
      return "the fast path left a complete PUT_COMPONENT" + at;
    }
  }
  return "";
}

}  // namespace scenecrdt::protocol::test
