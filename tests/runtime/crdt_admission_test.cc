// SPDX-License-Identifier: Apache-2.0
// Tests CrdtStore's admission path (docs/CRDT.md "Admission"): Admit's one strict decode and
// stateless checks in both modes, CheckMessage agreeing with Merge, the batch limits, and
// MergeAdmitted merging what Admit let through exactly as Merge would.
#include <gtest/gtest.h>

#include <algorithm>
#include <limits>
#include <memory>

#include "scenecrdt/protocol/crdt_codec.h"
#include "scenecrdt/runtime/crdt_store.h"
#include "tests/runtime/crdt_reference.h"

namespace scenecrdt::runtime {
namespace {

using protocol::MessageType;
using protocol::Transform;
using testing::OwnedMessage;

using Verdict = Admission::Verdict;

Transform At(float x) {
  Transform t;
  t.position = {x, 0, 0};
  return t;
}

OwnedMessage Put(EntityId e, uint32_t ts, const Transform& t) {
  const auto bytes = protocol::StoreTransform(t);
  return {MessageType::kPutComponent, e, protocol::kTransformComponentId, ts,
          std::vector<uint8_t>(bytes.begin(), bytes.end())};
}

std::vector<uint8_t> Encode(const std::vector<OwnedMessage>& messages) {
  std::vector<uint8_t> out;
  for (const OwnedMessage& m : messages) protocol::AppendMessage(m.View(), out);
  return out;
}

StoreLimits ServerLimits() {
  StoreLimits limits;
  limits.max_payload_bytes = 64;
  limits.refuse_non_finite_transforms = true;
  return limits;
}

const AdmitOptions kWhole{1024, AdmitMode::kWholeChunk};
const AdmitOptions kDrop{1024, AdmitMode::kDropRefused};

// Every way a chunk can fail to decode: nothing is admitted, the decoder's reason and the
// faulty message's offset come back, in both modes.
TEST(CrdtAdmissionTest, ValidityMalformedChunksAdmitNothing) {
  const std::vector<uint8_t> valid = Encode({Put(600, 1, At(1))});
  const auto with_tail = [&](std::vector<uint8_t> bad) {
    std::vector<uint8_t> out = valid;
    out.insert(out.end(), bad.begin(), bad.end());
    return out;
  };
  std::vector<uint8_t> short_length = valid;
  short_length[0] = 7;
  std::vector<uint8_t> cut = valid;
  cut.resize(40);
  std::vector<uint8_t> unknown_type = valid;
  unknown_type[4] = 9;
  std::vector<uint8_t> data_length = valid;
  data_length[20] = 40;
  std::vector<uint8_t> too_long =
      Encode({{MessageType::kPutComponent, 600, 7, 1, std::vector<uint8_t>(2000, 1)}});  // > 1024
  struct Case {
    const char* name;
    std::vector<uint8_t> chunk;
    ErrorCode code;
    uint64_t offset;
  };
  const std::vector<Case> cases = {
      {"length below 8", with_tail(short_length), ErrorCode::kLengthTooSmall, 68},
      {"cut inside a message", with_tail(cut), ErrorCode::kTruncated, 68},
      {"unknown type", with_tail(unknown_type), ErrorCode::kUnknownMessageType, 68},
      {"dataLength mismatch", data_length, ErrorCode::kDataLengthMismatch, 0},
      {"above max_message_bytes", too_long, ErrorCode::kLengthTooLarge, 0},
  };
  for (const Case& k : cases) {
    SCOPED_TRACE(k.name);
    for (const AdmitOptions& options : {kWhole, kDrop}) {
      const Admission a = CrdtStore::Admit(k.chunk, ServerLimits(), options);
      EXPECT_EQ(a.verdict, Verdict::kMalformed);
      EXPECT_EQ(a.error.code, k.code);
      EXPECT_EQ(a.error.offset, k.offset);
      EXPECT_TRUE(a.batch.empty());
      EXPECT_TRUE(a.dropped.empty());
    }
  }
  // A refused message before the fault does not hide it: malformed outranks refused.
  Transform nan = At(std::numeric_limits<float>::quiet_NaN());
  std::vector<uint8_t> refused_then_cut = Encode({Put(601, 1, nan)});
  refused_then_cut.insert(refused_then_cut.end(), cut.begin(), cut.end());
  EXPECT_EQ(CrdtStore::Admit(refused_then_cut, ServerLimits(), kWhole).verdict,
            Verdict::kMalformed);
}

// Each stateless refusal: a whole chunk is refused with the first reason and its offset; in
// drop mode the refused messages are left out, counted by reason, and the rest kept in order.
TEST(CrdtAdmissionTest, ValidityStatelessRefusalsInBothModes) {
  Transform inf = At(1);
  inf.scale.y = std::numeric_limits<float>::infinity();
  const OwnedMessage ok_a = Put(600, 1, At(1));
  const OwnedMessage non_finite = Put(601, 1, inf);
  const OwnedMessage bad_size = {MessageType::kPutComponent, 602, protocol::kTransformComponentId,
                                 1, std::vector<uint8_t>(40)};
  const OwnedMessage too_large = {MessageType::kPutComponent, 603, 7, 1, std::vector<uint8_t>(65)};
  const OwnedMessage big_append = {MessageType::kAppendValue, 603, 7, 1, std::vector<uint8_t>(65)};
  const OwnedMessage reserved = {MessageType::kDeleteEntityNetwork, 5, 0, 0, {}};
  const OwnedMessage ok_b = Put(604, 2, At(2));
  const std::vector<uint8_t> chunk =
      Encode({ok_a, non_finite, bad_size, too_large, big_append, reserved, ok_b, non_finite});

  const Admission whole = CrdtStore::Admit(chunk, ServerLimits(), kWhole);
  EXPECT_EQ(whole.verdict, Verdict::kRefused);
  EXPECT_EQ(whole.error.code, ErrorCode::kNonFiniteTransform);
  EXPECT_STREQ(whole.error.detail, RefusalText(ErrorCode::kNonFiniteTransform));
  EXPECT_EQ(whole.error.offset, 68u);
  EXPECT_EQ(whole.messages, 8u);
  EXPECT_TRUE(whole.batch.empty());

  const Admission drop = CrdtStore::Admit(chunk, ServerLimits(), kDrop);
  ASSERT_EQ(drop.verdict, Verdict::kAdmitted);
  EXPECT_EQ(drop.messages, 8u);
  ASSERT_EQ(drop.batch.size(), 2u);
  EXPECT_EQ(drop.batch.messages()[0].entity, 600u);
  EXPECT_EQ(drop.batch.messages()[1].entity, 604u);
  const std::vector<std::pair<ErrorCode, uint32_t>> expected = {{ErrorCode::kNonFiniteTransform, 2},
                                                                {ErrorCode::kBadTransformSize, 1},
                                                                {ErrorCode::kPayloadTooLarge, 2},
                                                                {ErrorCode::kReservedEntity, 1}};
  ASSERT_EQ(drop.dropped.size(), expected.size());
  for (std::size_t i = 0; i < expected.size(); ++i) {
    EXPECT_EQ(drop.dropped[i].code, expected[i].first) << i;
    EXPECT_EQ(drop.dropped[i].messages, expected[i].second) << i;
  }

  // Nothing refused: both modes admit everything; an empty chunk admits nothing, cleanly.
  const std::vector<uint8_t> clean = Encode({ok_a, ok_b});
  for (const AdmitOptions& options : {kWhole, kDrop}) {
    const Admission a = CrdtStore::Admit(clean, ServerLimits(), options);
    EXPECT_EQ(a.verdict, Verdict::kAdmitted);
    EXPECT_EQ(a.batch.size(), 2u);
    EXPECT_TRUE(a.dropped.empty());
    const Admission empty = CrdtStore::Admit({}, ServerLimits(), options);
    EXPECT_EQ(empty.verdict, Verdict::kAdmitted);
    EXPECT_EQ(empty.messages, 0u);
  }
}

// The stateless rules are the ones Merge applies: for each message, CheckMessage refuses iff
// a fresh store's Merge refuses, with the same reason.
TEST(CrdtAdmissionTest, CheckMessageIsWhatMergeRefusesStatelessly) {
  Transform nan = At(std::numeric_limits<float>::quiet_NaN());
  const std::vector<OwnedMessage> messages = {
      Put(600, 1, At(1)),
      Put(600, 1, nan),
      {MessageType::kPutComponentNetwork, 601, protocol::kTransformComponentId, 1,
       std::vector<uint8_t>(45)},
      {MessageType::kPutComponent, 602, 9, 1, std::vector<uint8_t>(64)},
      {MessageType::kPutComponent, 602, 9, 1, std::vector<uint8_t>(65)},
      {MessageType::kAppendValue, 602, protocol::kTransformComponentId, 1, std::vector<uint8_t>(3)},
      {MessageType::kAppendValue, 602, 9, 1, std::vector<uint8_t>(65)},
      {MessageType::kDeleteComponent, 603, 9, 1, {}},
      {MessageType::kDeleteEntity, 511, 0, 0, {}},
      {MessageType::kDeleteEntity, 512, 0, 0, {}},
      {static_cast<MessageType>(42), 600, 0, 0, {}},
  };
  for (const bool refuse_non_finite : {false, true}) {
    StoreLimits limits = ServerLimits();
    limits.refuse_non_finite_transforms = refuse_non_finite;
    for (std::size_t i = 0; i < messages.size(); ++i) {
      CrdtStore store(limits);
      const ErrorCode check = CrdtStore::CheckMessage(messages[i].View(), limits);
      const MergeResult merged = store.Merge(messages[i].View());
      EXPECT_EQ(check != ErrorCode::kOk, merged.outcome == MergeOutcome::kRefused) << i;
      EXPECT_EQ(check, merged.reason) << i;
    }
  }
}

// A batch owns its bytes: the caller's buffer may go away; moving the batch keeps it valid;
// merging it gives what merging the chunk directly gives.
TEST(CrdtAdmissionTest, MergeAdmittedEqualsMergeStreamAndOwnsItsBytes) {
  std::vector<OwnedMessage> messages;
  for (uint32_t i = 0; i < 50; ++i)
    messages.push_back(Put(600 + i % 7, i, At(static_cast<float>(i))));
  messages.push_back({MessageType::kDeleteEntity, 603, 0, 0, {}});
  messages.push_back({MessageType::kAppendValue, 605, 9, 3, {1, 2, 3}});
  messages.push_back({MessageType::kDeleteComponent, 604, 1, 60, {}});
  auto chunk = std::make_unique<std::vector<uint8_t>>(Encode(messages));
  CrdtStore direct(ServerLimits());
  ASSERT_TRUE(direct.MergeStream(*chunk).has_value());

  Admission admission = CrdtStore::Admit(*chunk, ServerLimits(), kWhole);
  ASSERT_EQ(admission.verdict, Verdict::kAdmitted);
  std::fill(chunk->begin(), chunk->end(), uint8_t{0xEE});
  chunk.reset();
  AdmittedBatch moved = std::move(admission.batch);
  AdmittedBatch batch;
  batch = std::move(moved);
  CrdtStore admitted(ServerLimits());
  std::size_t results = 0;
  EXPECT_EQ(admitted.MergeAdmitted(
                batch, [&](const protocol::CrdtMessage&, const MergeResult&) { ++results; }),
            ErrorCode::kOk);
  EXPECT_EQ(results, messages.size());
  EXPECT_EQ(admitted.StateHashHex(), direct.StateHashHex());
  EXPECT_EQ(admitted.sequence(), direct.sequence());
}

// The batch limits refuse a whole batch before any of it merges; under the limit it merges.
TEST(CrdtAdmissionTest, BatchLimitsRefuseTheWholeBatchAndChangeNothing) {
  StoreLimits limits = ServerLimits();
  limits.max_entities = 3;
  limits.max_tombstones = 2;
  CrdtStore store(limits);
  const auto admit = [&](const std::vector<OwnedMessage>& messages) {
    Admission a = CrdtStore::Admit(Encode(messages), limits, kWhole);
    EXPECT_EQ(a.verdict, Verdict::kAdmitted);
    return std::move(a.batch);
  };
  const auto merge = [&](const AdmittedBatch& batch) {
    return store.MergeAdmitted(batch, [](const protocol::CrdtMessage&, const MergeResult&) {});
  };
  ASSERT_EQ(merge(admit({Put(600, 1, At(1))})), ErrorCode::kOk);
  const std::string before = store.CanonicalText();
  const uint64_t sequence = store.sequence();
  // Two new entities plus the one held: within 3. Three new ones: refused whole, even though
  // the first two alone would fit (and a repeated entity counts once).
  const AdmittedBatch three =
      admit({Put(601, 1, At(1)), Put(602, 1, At(1)), Put(602, 2, At(2)), Put(603, 1, At(1))});
  EXPECT_EQ(store.CheckBatchLimits(three.messages()), ErrorCode::kTooManyEntities);
  EXPECT_EQ(merge(three), ErrorCode::kTooManyEntities);
  EXPECT_EQ(store.CanonicalText(), before);
  EXPECT_EQ(store.sequence(), sequence);
  // Tombstones: three new deleted numbers (a DELETE_ENTITY, two newer versions) over 2.
  const AdmittedBatch tombs =
      admit({{MessageType::kDeleteEntity, 610, 0, 0, {}},
             Put(protocol::MakeEntityId(611, 1), 1, At(1)),
             {MessageType::kDeleteEntityNetwork, protocol::MakeEntityId(612, 3), 0, 0, {}}});
  EXPECT_EQ(merge(tombs), ErrorCode::kTooManyTombstones);
  EXPECT_EQ(store.CanonicalText(), before);
  // Messages on entities the store holds add nothing: admitted at the limit.
  ASSERT_EQ(merge(admit({Put(601, 1, At(1)), Put(602, 1, At(1))})), ErrorCode::kOk);
  EXPECT_EQ(store.num_entities(), 3u);
  EXPECT_EQ(merge(admit({Put(600, 5, At(5)), Put(601, 5, At(5))})), ErrorCode::kOk);
  EXPECT_EQ(merge(admit({Put(604, 1, At(1))})), ErrorCode::kTooManyEntities);
}

// A batch admitted under looser stateless limits than the store's is checked again by Merge.
TEST(CrdtAdmissionTest, BatchCheckedUnderLooserLimitsIsCheckedAgain) {
  StoreLimits loose;
  loose.refuse_non_finite_transforms = false;
  Admission a = CrdtStore::Admit(
      Encode({Put(600, 1, At(std::numeric_limits<float>::infinity())), Put(601, 1, At(1))}), loose,
      kWhole);
  ASSERT_EQ(a.verdict, Verdict::kAdmitted);
  EXPECT_FALSE(a.batch.CheckedAgainst(ServerLimits()));
  EXPECT_TRUE(a.batch.CheckedAgainst(loose));
  CrdtStore strict(ServerLimits());
  std::vector<MergeResult> results;
  EXPECT_EQ(strict.MergeAdmitted(a.batch, [&](const protocol::CrdtMessage&,
                                              const MergeResult& r) { results.push_back(r); }),
            ErrorCode::kOk);
  ASSERT_EQ(results.size(), 2u);
  EXPECT_EQ(results[0].outcome, MergeOutcome::kRefused);
  EXPECT_EQ(results[0].reason, ErrorCode::kNonFiniteTransform);
  EXPECT_EQ(results[1].outcome, MergeOutcome::kUpdatedTimestamp);
  EXPECT_EQ(strict.FindTransform(600), nullptr);
}

}  // namespace
}  // namespace scenecrdt::runtime
