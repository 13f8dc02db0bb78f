// SPDX-License-Identifier: Apache-2.0
// Owns the `o` field's owner rows (docs/AUTHORITY.md "Cluster").
#include "scenecrdt/server/cluster/owner_rows.h"

#include <charconv>

namespace scenecrdt::server {

bool ParseOwnerNumber(std::string_view text, uint32_t& out) {
  if (text.empty() || text.size() > 5) return false;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), out);
  return ec == std::errc() && end == text.data() + text.size() && out <= 0xFFFF;
}

namespace {

// Reads digits up to `,` at `pos`; false when there are none or no comma follows.
bool ReadField(std::string_view text, std::size_t& pos, uint32_t& out) {
  const std::size_t comma = text.find(',', pos);
  if (comma == std::string_view::npos) return false;
  if (!ParseOwnerNumber(text.substr(pos, comma - pos), out)) return false;
  pos = comma + 1;
  return true;
}

}  // namespace

std::string EncodeOwnerRows(const OwnerRows& rows) {
  std::string out;
  for (const auto& [number, principal] : rows) {
    out += std::to_string(number);
    out += ',';
    out += std::to_string(principal.size());
    out += ',';
    out += principal;
  }
  return out;
}

bool DecodeOwnerRows(std::string_view text, OwnerRows& out) {
  std::size_t pos = 0;
  while (pos < text.size()) {
    uint32_t number = 0;
    uint32_t length = 0;
    if (!ReadField(text, pos, number) || !ReadField(text, pos, length)) return false;
    if (length > kMaxPrincipalBytes || text.size() - pos < length) return false;
    out.emplace_back(number, std::string(text.substr(pos, length)));
    pos += length;
  }
  return true;
}

namespace {

void PutU32(std::string& out, uint32_t v) {
  for (int i = 0; i < 4; ++i) out += static_cast<char>((v >> (8 * i)) & 0xFF);
}

uint32_t GetU32(std::string_view text, std::size_t pos) {
  uint32_t v = 0;
  for (int i = 0; i < 4; ++i) v |= uint32_t{static_cast<uint8_t>(text[pos + i])} << (8 * i);
  return v;
}

}  // namespace

std::string EncodeCorrectionMarks(const std::vector<CorrectionMark>& marks) {
  std::string out;
  out.reserve(marks.size() * kCorrectionMarkBytes);
  for (const CorrectionMark& m : marks) {
    PutU32(out, m.component);
    PutU32(out, m.entity);
    PutU32(out, m.timestamp);
  }
  return out;
}

bool DecodeCorrectionMarks(std::string_view text, uint32_t chunk,
                           std::vector<CorrectionMark>& out) {
  if (text.size() % kCorrectionMarkBytes != 0) return false;
  out.reserve(out.size() + text.size() / kCorrectionMarkBytes);
  for (std::size_t pos = 0; pos < text.size(); pos += kCorrectionMarkBytes) {
    out.push_back({GetU32(text, pos), GetU32(text, pos + 4), GetU32(text, pos + 8), chunk});
  }
  return true;
}

}  // namespace scenecrdt::server
