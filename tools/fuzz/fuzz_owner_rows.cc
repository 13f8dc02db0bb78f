// SPDX-License-Identifier: Apache-2.0
// Fuzz target for the owner rows of a cluster entry's `o` field (server/cluster/owner_rows.h):
// any input decodes or fails without reading past it; every decoded row keeps the bounds
// (number <= 65535, principal <= kMaxPrincipalBytes), and a decoded text's rows encode to a
// text that decodes to the same rows. The same input is read as the correction marks of a `k`
// field: they decode whole or not at all, and re-encode to the same bytes.
#include <cstdint>
#include <cstdlib>
#include <string_view>
#include <vector>

#include "scenecrdt/server/cluster/owner_rows.h"

using scenecrdt::server::CorrectionMark;
using scenecrdt::server::DecodeCorrectionMarks;
using scenecrdt::server::DecodeOwnerRows;
using scenecrdt::server::EncodeCorrectionMarks;
using scenecrdt::server::EncodeOwnerRows;
using scenecrdt::server::kMaxPrincipalBytes;
using scenecrdt::server::OwnerRows;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  std::vector<CorrectionMark> marks;
  if (DecodeCorrectionMarks(text, 0, marks)) {
    if (EncodeCorrectionMarks(marks) != text) std::abort();
  } else if (!marks.empty()) {
    std::abort();
  }
  OwnerRows rows;
  const bool ok = DecodeOwnerRows(text, rows);
  for (const auto& [number, principal] : rows) {
    if (number > 0xFFFF || principal.size() > kMaxPrincipalBytes) std::abort();
  }
  if (!ok) return 0;
  OwnerRows again;
  if (!DecodeOwnerRows(EncodeOwnerRows(rows), again) || again != rows) std::abort();
  return 0;
}
