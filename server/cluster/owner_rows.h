// SPDX-License-Identifier: Apache-2.0
// Owns the encoding of owner rows in a scene stream's `o` field (docs/AUTHORITY.md "Cluster"):
// `<number>,<principal length>,<principal>` one after the other ("" : released), and of the
// correction marks in its `k` field: 12 bytes per mark, the component, entity and timestamp as
// little-endian u32s (CorrectionMark: server/storage/correction_mark.h). Standard library only
// (fuzzed by tools/fuzz/fuzz_owner_rows.cc). Entries come from Redis, which anyone with access can
// write: nothing is trusted.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "scenecrdt/server/storage/correction_mark.h"

namespace scenecrdt::server {

inline constexpr std::size_t kMaxPrincipalBytes = 256;
using OwnerRows = std::vector<std::pair<uint32_t, std::string>>;

// A decimal entity number (<= 65535, at most 5 digits, nothing else).
bool ParseOwnerNumber(std::string_view text, uint32_t& out);
std::string EncodeOwnerRows(const OwnerRows& rows);
// Appends the rows of `text` to `out`; false (rows up to the bad one kept) when it does not
// parse: a number past 65535, a principal longer than kMaxPrincipalBytes or than what is left.
bool DecodeOwnerRows(std::string_view text, OwnerRows& out);

inline constexpr std::size_t kCorrectionMarkBytes = 12;
std::string EncodeCorrectionMarks(const std::vector<CorrectionMark>& marks);
// Appends the marks of `text` to `out` with chunk index `chunk`; false (nothing appended) when
// its size is not a multiple of kCorrectionMarkBytes.
bool DecodeCorrectionMarks(std::string_view text, uint32_t chunk, std::vector<CorrectionMark>& out);

}  // namespace scenecrdt::server
