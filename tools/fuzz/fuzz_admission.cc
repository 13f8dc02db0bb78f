// SPDX-License-Identifier: Apache-2.0
// Fuzz target for CrdtStore::Admit and MergeAdmitted, the server's one path from untrusted
// chunks to the store (docs/CRDT.md "Admission"). For any input:
// - Admit says malformed exactly when the strict decoder fails, with its code and offset;
// - otherwise the batch is exactly the messages CheckMessage accepts, in order (kDropRefused),
//   or all of them / nothing with the first refusal (kWholeChunk), and the drop counts add up;
// - the batch owns its bytes: the input is overwritten before it merges;
// - MergeAdmitted gives, message by message, what Merge gives in a store fed the same way,
//   or refuses the batch for its limits and leaves the store untouched.
//
// Input: byte 0 picks limits and mode (bit 0 payload limit 48, bit 1 refuse non-finite
// Transforms, bit 2 max_message_bytes 64, bit 3 kDropRefused, bit 4 small entity / tombstone
// limits, bit 5 merge the chunk twice); the rest is the chunk.
#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <span>
#include <vector>

#include "scenecrdt/protocol/crdt_codec.h"
#include "scenecrdt/runtime/crdt_store.h"

using scenecrdt::ErrorCode;
using scenecrdt::protocol::CrdtMessage;
using scenecrdt::runtime::Admission;
using scenecrdt::runtime::AdmitMode;
using scenecrdt::runtime::AdmitOptions;
using scenecrdt::runtime::CrdtStore;
using scenecrdt::runtime::MergeResult;
using scenecrdt::runtime::StoreLimits;

namespace {

constexpr std::size_t kMaxInput = 1u << 14;

bool SameMessage(const CrdtMessage& a, const CrdtMessage& b) {
  return a.type == b.type && a.entity == b.entity && a.component == b.component &&
         a.timestamp == b.timestamp && a.network_id == b.network_id &&
         a.legacy_length == b.legacy_length &&
         std::equal(a.data.begin(), a.data.end(), b.data.begin(), b.data.end());
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1 || size > kMaxInput) return 0;
  const uint8_t control = data[0];
  StoreLimits limits;
  limits.max_payload_bytes = (control & 1) != 0 ? 48 : 4096;
  limits.refuse_non_finite_transforms = (control & 2) != 0;
  if ((control & 16) != 0) {
    limits.max_entities = 3;
    limits.max_tombstones = 2;
  }
  AdmitOptions options;
  options.max_message_bytes = (control & 4) != 0 ? 64 : 4096;
  options.mode = (control & 8) != 0 ? AdmitMode::kDropRefused : AdmitMode::kWholeChunk;
  const bool whole = options.mode == AdmitMode::kWholeChunk;
  std::vector<uint8_t> chunk(data + 1, data + size);

  // The reference: the strict decoder and CheckMessage, message by message (views into
  // `reference_bytes`, an untouched copy).
  const std::vector<uint8_t> reference_bytes = chunk;
  scenecrdt::protocol::DecodeOptions decode;
  decode.max_message_bytes = options.max_message_bytes;
  decode.reject_unknown_types = true;
  std::vector<CrdtMessage> decoded;
  auto strict = scenecrdt::protocol::DecodeStream(
      reference_bytes, decode, [&](const CrdtMessage& m) { decoded.push_back(m); });

  Admission admission = CrdtStore::Admit(chunk, limits, options);
  std::fill(chunk.begin(), chunk.end(), uint8_t{0xA5});  // the batch must not need it
  if (admission.messages != decoded.size()) std::abort();
  if (!strict.has_value()) {
    if (admission.verdict != Admission::Verdict::kMalformed) std::abort();
    if (admission.error.code != strict.error().code) std::abort();
    if (admission.error.offset != strict.error().offset) std::abort();
    if (!admission.batch.empty() || !admission.dropped.empty()) std::abort();
    return 0;
  }
  std::vector<CrdtMessage> accepted;
  ErrorCode first = ErrorCode::kOk;
  std::size_t refused = 0;
  for (const CrdtMessage& m : decoded) {
    const ErrorCode code = CrdtStore::CheckMessage(m, limits);
    if (code == ErrorCode::kOk) {
      accepted.push_back(m);
      continue;
    }
    ++refused;
    if (first == ErrorCode::kOk) first = code;
  }
  if (whole && refused > 0) {
    if (admission.verdict != Admission::Verdict::kRefused) std::abort();
    if (admission.error.code != first || !admission.batch.empty()) std::abort();
    return 0;
  }
  if (admission.verdict != Admission::Verdict::kAdmitted) std::abort();
  const auto batch = admission.batch.messages();
  if (batch.size() != accepted.size()) std::abort();
  for (std::size_t i = 0; i < batch.size(); ++i) {
    if (!SameMessage(batch[i], accepted[i])) std::abort();
  }
  std::size_t dropped = 0;
  for (const auto& d : admission.dropped) dropped += d.messages;
  if (dropped != refused) std::abort();

  // MergeAdmitted against Merge, from the same starting state, once or twice.
  CrdtStore admitted(limits);
  CrdtStore merged(limits);
  const int rounds = (control & 32) != 0 ? 2 : 1;
  for (int round = 0; round < rounds; ++round) {
    const auto hash_before = admitted.StateHash();
    const ErrorCode batch_limits = admitted.CheckBatchLimits(batch);
    std::vector<MergeResult> results;
    const ErrorCode verdict = admitted.MergeAdmitted(
        admission.batch, [&](const CrdtMessage&, const MergeResult& r) { results.push_back(r); });
    if (verdict != batch_limits) std::abort();
    if (verdict != ErrorCode::kOk) {
      if (!results.empty() || admitted.StateHash() != hash_before) std::abort();
      return 0;
    }
    if (results.size() != accepted.size()) std::abort();
    for (std::size_t i = 0; i < accepted.size(); ++i) {
      const MergeResult r = merged.Merge(accepted[i]);
      if (r.outcome != results[i].outcome || r.reason != results[i].reason) std::abort();
    }
    if (admitted.StateHash() != merged.StateHash()) std::abort();
  }
  return 0;
}
