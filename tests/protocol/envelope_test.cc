// SPDX-License-Identifier: Apache-2.0
// Tests the session envelope (protocol/session/envelope.h): BuildFrame/ReadFrame round trips
// for each frame type, PeekFrameSize, and that corrupted, truncated, foreign,
// oversized, wrong-version and out-of-range frames are refused without crashing; and the scene
// sequence layout (protocol/session/sequence.h).
#include "scenecrdt/protocol/session/envelope.h"

#include <flatbuffers/flatbuffers.h>
#include <gtest/gtest.h>
#include <rapidcheck.h>
#include <rapidcheck/gtest.h>

#include <cstring>
#include <sstream>
#include <string>
#include <vector>

#include "envelope_generated.h"
#include "scenecrdt/protocol/byte_order.h"
#include "scenecrdt/protocol/session/sequence.h"
#include "tests/protocol/rapidcheck_util.h"
#include "tests/protocol/test_util.h"

namespace scenecrdt::session {
namespace {

using protocol::test::Uniform;

// ReadFrame needs an 8-byte aligned buffer: std::vector's is.
Result<Frame> Read(const std::vector<uint8_t>& bytes, const ReadOptions& options = {}) {
  return ReadFrame(bytes, options);
}

std::string Describe(const Frame& frame) {
  std::ostringstream os;
  std::visit(
      [&](const auto& f) {
        using F = std::decay_t<decltype(f)>;
        if constexpr (std::is_same_v<F, Hello>) {
          os << "Hello{" << f.scene << ", " << f.token << ", "
             << (f.resume_sequence ? std::to_string(*f.resume_sequence) : "-") << ", "
             << f.client_name << "}";
        } else if constexpr (std::is_same_v<F, Welcome>) {
          os << "Welcome{" << f.session_id << ", " << f.scene_sequence << ", " << f.resumed << ", "
             << f.can_write << ", " << f.max_frame_bytes << "}";
        } else if constexpr (std::is_same_v<F, Crdt>) {
          os << "Crdt{" << f.frame_sequence << ", " << f.scene_sequence << ", " << f.is_state
             << ", " << f.data.size() << " bytes}";
        } else if constexpr (std::is_same_v<F, Ack>) {
          os << "Ack{" << f.frame_sequence << "}";
        } else if constexpr (std::is_same_v<F, ErrorFrame>) {
          os << "Error{" << static_cast<int>(f.code) << ", " << f.text << ", " << f.frame_sequence
             << ", " << f.fatal << "}";
        } else if constexpr (std::is_same_v<F, SetInterest>) {
          os << "SetInterest{" << static_cast<int>(f.mode) << ", " << f.center_x << ", "
             << f.center_y << ", " << f.center_z << ", " << f.follow_entity << ", " << f.radius
             << ", " << (f.hysteresis ? std::to_string(*f.hysteresis) : "-") << "}";
        } else if constexpr (std::is_same_v<F, InterestSet>) {
          os << "InterestSet{" << static_cast<int>(f.mode) << ", " << f.radius << ", "
             << f.hysteresis << ", " << f.clamped << "}";
        } else if constexpr (std::is_same_v<F, OutOfView>) {
          os << "OutOfView{" << f.scene_sequence << ", " << f.entities.size() << " entities}";
        } else if constexpr (std::is_same_v<F, Refusal>) {
          os << "Refusal{" << f.frame_sequence << ", " << f.entity << ", " << f.component << ", "
             << static_cast<int>(f.message_type) << ", " << static_cast<int>(f.code) << "}";
        } else if constexpr (std::is_same_v<F, TransferOwnership>) {
          os << "TransferOwnership{" << f.entity << ", " << f.to << "}";
        } else {
          os << (std::is_same_v<F, Ping> ? "Ping{" : "Pong{") << f.nonce << ", " << f.sent_us
             << "}";
        }
      },
      frame);
  return os.str();
}

bool SameFrame(const Frame& a, const Frame& b) {
  if (a.index() != b.index()) return false;
  return std::visit(
      [&](const auto& x) {
        using F = std::decay_t<decltype(x)>;
        const F& y = std::get<F>(b);
        if constexpr (std::is_same_v<F, Hello>) {
          return x.scene == y.scene && x.token == y.token &&
                 x.resume_sequence == y.resume_sequence && x.client_name == y.client_name &&
                 x.compression == y.compression;
        } else if constexpr (std::is_same_v<F, Welcome>) {
          return x.session_id == y.session_id && x.scene_sequence == y.scene_sequence &&
                 x.resumed == y.resumed && x.can_write == y.can_write &&
                 x.compression == y.compression && x.max_frame_bytes == y.max_frame_bytes;
        } else if constexpr (std::is_same_v<F, Crdt>) {
          return x.frame_sequence == y.frame_sequence && x.scene_sequence == y.scene_sequence &&
                 x.is_state == y.is_state && x.data.size() == y.data.size() &&
                 std::equal(x.data.begin(), x.data.end(), y.data.begin());
        } else if constexpr (std::is_same_v<F, Ack>) {
          return x.frame_sequence == y.frame_sequence;
        } else if constexpr (std::is_same_v<F, ErrorFrame>) {
          return x.code == y.code && x.text == y.text && x.frame_sequence == y.frame_sequence &&
                 x.fatal == y.fatal;
        } else if constexpr (std::is_same_v<F, SetInterest>) {
          // NaN reads back as NaN (the server refuses it); -0 may read back as +0.
          const auto same = [](float p, float q) { return p == q || (p != p && q != q); };
          return x.mode == y.mode && same(x.center_x, y.center_x) && same(x.center_y, y.center_y) &&
                 same(x.center_z, y.center_z) && x.follow_entity == y.follow_entity &&
                 same(x.radius, y.radius) && x.hysteresis.has_value() == y.hysteresis.has_value() &&
                 (!x.hysteresis || same(*x.hysteresis, *y.hysteresis));
        } else if constexpr (std::is_same_v<F, InterestSet>) {
          return x.mode == y.mode && x.radius == y.radius && x.hysteresis == y.hysteresis &&
                 x.clamped == y.clamped;
        } else if constexpr (std::is_same_v<F, OutOfView>) {
          return x.scene_sequence == y.scene_sequence && x.entities == y.entities;
        } else if constexpr (std::is_same_v<F, Refusal>) {
          return x.frame_sequence == y.frame_sequence && x.entity == y.entity &&
                 x.component == y.component && x.message_type == y.message_type && x.code == y.code;
        } else if constexpr (std::is_same_v<F, TransferOwnership>) {
          return x.entity == y.entity && x.to == y.to;
        } else {
          return x.nonce == y.nonce && x.sent_us == y.sent_us;
        }
      },
      a);
}

// Builds an envelope by hand (version, payload type and table chosen by the test).
std::vector<uint8_t> RawEnvelope(uint16_t version, bool with_payload,
                                 const char* identifier = nullptr) {
  flatbuffers::FlatBufferBuilder b;
  flatbuffers::Offset<void> payload;
  fb::Payload type = fb::Payload::NONE;
  if (with_payload) {
    payload = fb::CreatePing(b, 1, 2).Union();
    type = fb::Payload::Ping;
  }
  auto root = fb::CreateEnvelope(b, version, type, payload);
  b.FinishSizePrefixed(root, identifier ? identifier : fb::EnvelopeIdentifier());
  return std::vector<uint8_t>(b.GetBufferPointer(), b.GetBufferPointer() + b.GetSize());
}

class EnvelopeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    stream_ = protocol::test::GoldenStream(protocol::test::LoadGoldenMessages());
  }

  // One non-default frame of each type (and the optional-field variants).
  std::vector<Frame> SampleFrames() const {
    return {
        Hello{"plaza-1.main_X", "secret-token", 42, "viewer 1"},
        Hello{"s", "", std::nullopt, ""},
        Hello{"resume-at-zero", "t", 0, ""},
        Welcome{7, 0xFFFFFFFFFFFFFFF0u, true, true},
        Welcome{1, 2, false, false},
        Hello{"z", "", std::nullopt, "", Compression::kZstd},
        Welcome{3, 4, false, true, Compression::kZstd},
        Welcome{5, 6, false, true, Compression::kNone, 1u << 20},
        Crdt{5, 6, true, stream_},
        Crdt{0, 0, false, {}},
        Ack{0xFFFFFFFFFFFFFFFFu},
        ErrorFrame{ErrorCode::kRateLimited, "slow down", 12, true},
        ErrorFrame{ErrorCode::kOk, "", 0, false},
        Ping{1, 1700000000000000u},
        Pong{0xABCDEF, 3},
        SetInterest{InterestMode::kPoint, 1.5f, -2.0f, 3.0f, 0, 50.0f, std::nullopt},
        SetInterest{InterestMode::kFollow, 0, 0, 0, 600 | (1u << 16), 20.0f, 0.0f},
        SetInterest{InterestMode::kNone, 0, 0, 0, 0, 0, std::nullopt},
        InterestSet{InterestMode::kPoint, 1000.0f, 100.0f, true},
        OutOfView{0xFFFFFFFFFFu, {512, 600, 0xFFFFFFFFu}},
        OutOfView{1, {}},
        Refusal{12, 0x10258, 1, 3, ErrorCode::kNotOwner},
        TransferOwnership{600, "alice"},
        TransferOwnership{601, ""},
    };
  }

  std::vector<uint8_t> stream_;
};

TEST_F(EnvelopeTest, Validity) {
  const std::vector<uint8_t> ping = BuildFrame(Ping{9, 10});
  ASSERT_TRUE(Read(ping).has_value());
  struct Case {
    const char* name;
    std::vector<uint8_t> bytes;
    ErrorCode code;
  };
  std::vector<Case> cases;
  cases.push_back({"empty", {}, ErrorCode::kEnvelopeInvalid});
  cases.push_back({"prefix only", {0, 0, 0, 0}, ErrorCode::kEnvelopeInvalid});
  {
    auto bigger = ping;
    bigger[0] = static_cast<uint8_t>(bigger[0] + 1);
    cases.push_back({"size prefix + 1", bigger, ErrorCode::kEnvelopeInvalid});
    auto smaller = ping;
    smaller[0] = static_cast<uint8_t>(smaller[0] - 1);
    cases.push_back({"size prefix - 1", smaller, ErrorCode::kEnvelopeInvalid});
    auto trailing = ping;
    trailing.insert(trailing.end(), 8, 0);
    cases.push_back({"trailing bytes", trailing, ErrorCode::kEnvelopeInvalid});
    auto huge = ping;
    huge[3] = 0xFF;
    cases.push_back({"huge size prefix", huge, ErrorCode::kEnvelopeInvalid});
  }
  {
    auto foreign = ping;
    ASSERT_EQ(std::memcmp(foreign.data() + 8, "SCRD", 4), 0);
    std::memcpy(foreign.data() + 8, "XCRD", 4);
    cases.push_back({"wrong identifier", foreign, ErrorCode::kEnvelopeInvalid});
  }
  cases.push_back({"built with another identifier", RawEnvelope(kProtocolVersion, true, "NOPE"),
                   ErrorCode::kEnvelopeInvalid});
  cases.push_back(
      {"no payload", RawEnvelope(kProtocolVersion, false), ErrorCode::kEnvelopeInvalid});
  cases.push_back({"version 0", RawEnvelope(0, true), ErrorCode::kProtocolVersion});
  cases.push_back(
      {"version 2", RawEnvelope(kProtocolVersion + 1, true), ErrorCode::kProtocolVersion});
  cases.push_back({"version 0xFFFF", RawEnvelope(0xFFFF, true), ErrorCode::kProtocolVersion});
  {
    // The union type says Hello but the table is a Ping with default fields: no scene.
    flatbuffers::FlatBufferBuilder b;
    auto payload = fb::CreatePing(b, 0, 0).Union();
    b.FinishSizePrefixed(fb::CreateEnvelope(b, kProtocolVersion, fb::Payload::Hello, payload),
                         fb::EnvelopeIdentifier());
    cases.push_back({"mislabelled payload",
                     std::vector<uint8_t>(b.GetBufferPointer(), b.GetBufferPointer() + b.GetSize()),
                     ErrorCode::kEnvelopeInvalid});
  }
  for (fb::Payload type :
       {fb::Payload::Hello, fb::Payload::Welcome, fb::Payload::Crdt, fb::Payload::Ack,
        fb::Payload::Error, fb::Payload::Ping, fb::Payload::Pong, fb::Payload::SetInterest,
        fb::Payload::InterestSet, fb::Payload::OutOfView}) {
    // A payload type with no table: the Verifier lets it through (found by the property test).
    flatbuffers::FlatBufferBuilder b;
    b.FinishSizePrefixed(fb::CreateEnvelope(b, kProtocolVersion, type, 0),
                         fb::EnvelopeIdentifier());
    cases.push_back({"payload type without a table",
                     std::vector<uint8_t>(b.GetBufferPointer(), b.GetBufferPointer() + b.GetSize()),
                     ErrorCode::kEnvelopeInvalid});
  }
  for (const int m : {3, 255}) {
    const auto mode = static_cast<uint8_t>(m);
    // An interest mode this version does not know (SetInterest and InterestSet).
    flatbuffers::FlatBufferBuilder b;
    auto payload = fb::CreateSetInterest(b, mode, 0, 0, 0, 0, 5.0f).Union();
    b.FinishSizePrefixed(fb::CreateEnvelope(b, kProtocolVersion, fb::Payload::SetInterest, payload),
                         fb::EnvelopeIdentifier());
    cases.push_back({"unknown interest mode",
                     std::vector<uint8_t>(b.GetBufferPointer(), b.GetBufferPointer() + b.GetSize()),
                     ErrorCode::kEnvelopeInvalid});
    flatbuffers::FlatBufferBuilder a;
    auto set = fb::CreateInterestSet(a, mode, 5.0f, 1.0f, false).Union();
    a.FinishSizePrefixed(fb::CreateEnvelope(a, kProtocolVersion, fb::Payload::InterestSet, set),
                         fb::EnvelopeIdentifier());
    cases.push_back({"unknown interest mode",
                     std::vector<uint8_t>(a.GetBufferPointer(), a.GetBufferPointer() + a.GetSize()),
                     ErrorCode::kEnvelopeInvalid});
  }
  {
    // A payload type this version does not know.
    flatbuffers::FlatBufferBuilder b;
    auto payload = fb::CreatePing(b, 1, 2).Union();
    b.FinishSizePrefixed(
        fb::CreateEnvelope(b, kProtocolVersion, static_cast<fb::Payload>(99), payload),
        fb::EnvelopeIdentifier());
    cases.push_back({"unknown payload type",
                     std::vector<uint8_t>(b.GetBufferPointer(), b.GetBufferPointer() + b.GetSize()),
                     ErrorCode::kEnvelopeInvalid});
  }
  for (const char* scene : {"", ".", "..", "a/b", "a b", "a\\b", "caf\xC3\xA9", "scene\n", "*"}) {
    cases.push_back({"bad scene name", BuildFrame(Hello{scene, "", std::nullopt, ""}),
                     ErrorCode::kEnvelopeInvalid});
  }
  cases.push_back({"scene with NUL",
                   BuildFrame(Hello{std::string("a\0b", 3), "", std::nullopt, ""}),
                   ErrorCode::kEnvelopeInvalid});
  cases.push_back({"scene of 65 bytes",
                   BuildFrame(Hello{std::string(kMaxSceneNameBytes + 1, 'a'), "", 1, ""}),
                   ErrorCode::kEnvelopeInvalid});
  cases.push_back({"token one byte over kMaxTokenBytes (4096)",
                   BuildFrame(Hello{"s", std::string(kMaxTokenBytes + 1, 't'), 1, ""}),
                   ErrorCode::kEnvelopeInvalid});
  cases.push_back({"client name of 65 bytes",
                   BuildFrame(Hello{"s", "", 1, std::string(kMaxSceneNameBytes + 1, 'c')}),
                   ErrorCode::kEnvelopeInvalid});
  cases.push_back({"TransferOwnership.to of 257 bytes",
                   BuildFrame(TransferOwnership{600, std::string(kMaxPrincipalBytes + 1, 'p')}),
                   ErrorCode::kEnvelopeInvalid});
  cases.push_back({"error text of 1025 bytes",
                   BuildFrame(ErrorFrame{ErrorCode::kBadRequest,
                                         std::string(kMaxErrorTextBytes + 1, 'e'), 0, true}),
                   ErrorCode::kEnvelopeInvalid});

  for (const Case& c : cases) {
    auto r = Read(c.bytes);
    ASSERT_FALSE(r.has_value()) << c.name << " was accepted as " << Describe(*r);
    EXPECT_EQ(r.error().code, c.code)
        << c.name << ": " << ErrorCodeName(r.error().code) << " " << r.error().detail;
    EXPECT_NE(std::string(r.error().detail), "") << c.name;
  }
}

TEST_F(EnvelopeTest, EachFrameTypeRoundTrips) {
  const auto frames = SampleFrames();
  std::vector<bool> seen(std::variant_size_v<Frame>, false);
  for (const Frame& frame : frames) {
    SCOPED_TRACE(Describe(frame));
    const std::vector<uint8_t> bytes = BuildFrame(frame);
    ASSERT_GE(bytes.size(), 12u);
    EXPECT_EQ(std::memcmp(bytes.data() + 8, "SCRD", 4), 0);
    auto read = Read(bytes);
    ASSERT_TRUE(read.has_value()) << read.error().detail;
    EXPECT_TRUE(SameFrame(*read, frame)) << "read back " << Describe(*read);
    seen[frame.index()] = true;
    // Rebuilding what was read gives the same bytes.
    EXPECT_EQ(BuildFrame(*read), bytes);
  }
  for (std::size_t i = 0; i < seen.size(); ++i) EXPECT_TRUE(seen[i]) << "frame type " << i;
}

TEST_F(EnvelopeTest, CrdtDataPointsIntoTheFrame) {
  const std::vector<uint8_t> bytes = BuildFrame(Crdt{1, 2, false, stream_});
  auto read = Read(bytes);
  ASSERT_TRUE(read.has_value());
  const auto& crdt = std::get<Crdt>(*read);
  ASSERT_EQ(crdt.data.size(), stream_.size());
  EXPECT_GE(crdt.data.data(), bytes.data());
  EXPECT_LE(crdt.data.data() + crdt.data.size(), bytes.data() + bytes.size());
  EXPECT_TRUE(std::equal(crdt.data.begin(), crdt.data.end(), stream_.begin()));
}

TEST_F(EnvelopeTest, LimitsAreInclusive) {
  const std::string scene_64(kMaxSceneNameBytes, 'a');
  const std::string token_max(kMaxTokenBytes, 't');
  const std::string name_64(kMaxSceneNameBytes, 'c');
  auto hello = Read(BuildFrame(Hello{scene_64, token_max, std::nullopt, name_64}));
  ASSERT_TRUE(hello.has_value()) << hello.error().detail;
  EXPECT_EQ(std::get<Hello>(*hello).scene, scene_64);
  EXPECT_EQ(std::get<Hello>(*hello).token, token_max);
  auto error = Read(BuildFrame(
      ErrorFrame{ErrorCode::kBadRequest, std::string(kMaxErrorTextBytes, 'e'), 0, false}));
  ASSERT_TRUE(error.has_value());
  EXPECT_EQ(std::get<ErrorFrame>(*error).text.size(), kMaxErrorTextBytes);
  for (const char* scene : {"A-z_0.9", "...", "a..b", "-", "_"}) {
    EXPECT_TRUE(Read(BuildFrame(Hello{scene, "", std::nullopt, ""})).has_value()) << scene;
  }
}

TEST_F(EnvelopeTest, FramesAboveTheMaximumAreRefusedFirst) {
  const std::vector<uint8_t> data(1000, 0xAB);
  const std::vector<uint8_t> bytes = BuildFrame(Crdt{1, 1, false, data});
  ReadOptions options;
  options.max_frame_bytes = static_cast<uint32_t>(bytes.size());
  EXPECT_TRUE(Read(bytes, options).has_value());
  options.max_frame_bytes = static_cast<uint32_t>(bytes.size() - 1);
  auto r = Read(bytes, options);
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().code, ErrorCode::kFrameTooLarge);
  // The size check comes before anything else looks at the bytes.
  std::vector<uint8_t> junk(600, 0xFF);
  options.max_frame_bytes = 512;
  auto j = Read(junk, options);
  ASSERT_FALSE(j.has_value());
  EXPECT_EQ(j.error().code, ErrorCode::kFrameTooLarge);
}

TEST_F(EnvelopeTest, PeekFrameSizeReadsThePrefix) {
  EXPECT_EQ(PeekFrameSize({}), std::nullopt);
  const uint8_t three[] = {1, 2, 3};
  EXPECT_EQ(PeekFrameSize(three), std::nullopt);
  const uint8_t max[] = {0xFF, 0xFF, 0xFF, 0xFF};
  EXPECT_EQ(PeekFrameSize(max), uint64_t{0xFFFFFFFF} + 4);
  const uint8_t le[] = {0x10, 0x02, 0x00, 0x00, 0xEE};
  EXPECT_EQ(PeekFrameSize(le), 0x210u + 4);
  for (const Frame& frame : SampleFrames()) {
    const std::vector<uint8_t> bytes = BuildFrame(frame);
    EXPECT_EQ(PeekFrameSize(std::span<const uint8_t>(bytes).first(4)), bytes.size());
    EXPECT_EQ(PeekFrameSize(bytes), bytes.size());
  }
}

TEST_F(EnvelopeTest, TruncatedFramesAreRefused) {
  for (const Frame& frame : SampleFrames()) {
    const std::vector<uint8_t> bytes = BuildFrame(frame);
    for (std::size_t length = 0; length < bytes.size(); ++length) {
      SCOPED_TRACE(Describe(frame) + " cut at " + std::to_string(length));
      std::vector<uint8_t> cut(bytes.begin(), bytes.begin() + static_cast<std::ptrdiff_t>(length));
      auto r = Read(cut);
      ASSERT_FALSE(r.has_value());
      EXPECT_EQ(r.error().code, ErrorCode::kEnvelopeInvalid);
      // With the prefix rewritten to match, only the verifier stands in the way: it either
      // refuses or (when only padding was cut) reads the same frame.
      if (length >= kSizePrefixBytes) {
        const auto body = static_cast<uint32_t>(length - kSizePrefixBytes);
        protocol::StoreU32Le(cut.data(), body);
        auto consistent = Read(cut);
        if (consistent.has_value()) {
          EXPECT_TRUE(SameFrame(*consistent, frame)) << Describe(*consistent);
        }
      }
    }
  }
}

TEST_F(EnvelopeTest, ByteFlipsEitherFailOrReadBack) {
  int refused = 0;
  int accepted = 0;
  for (const Frame& frame : SampleFrames()) {
    const std::vector<uint8_t> bytes = BuildFrame(frame);
    for (std::size_t i = 0; i < bytes.size(); ++i) {
      for (int mask : {0x01, 0x10, 0x80, 0xFF}) {
        std::vector<uint8_t> flipped = bytes;
        flipped[i] = static_cast<uint8_t>(flipped[i] ^ mask);
        auto r = Read(flipped);
        if (!r.has_value()) {
          ++refused;
          EXPECT_TRUE(r.error().code == ErrorCode::kEnvelopeInvalid ||
                      r.error().code == ErrorCode::kProtocolVersion)
              << ErrorCodeName(r.error().code);
          continue;
        }
        ++accepted;
        // Whatever was accepted is a well-formed frame: it rebuilds and reads back the same.
        const std::vector<uint8_t> rebuilt = BuildFrame(*r);
        auto again = Read(rebuilt);
        ASSERT_TRUE(again.has_value()) << Describe(*r);
        EXPECT_TRUE(SameFrame(*again, *r)) << Describe(*r) << " vs " << Describe(*again);
      }
    }
  }
  // Both outcomes occur: flips in field values are accepted, flips in offsets refused.
  EXPECT_GT(refused, 0);
  EXPECT_GT(accepted, 0);
}

TEST_F(EnvelopeTest, ScenesNamesFollowTheRule) {
  EXPECT_TRUE(IsValidSceneName("main"));
  EXPECT_TRUE(IsValidSceneName(std::string(kMaxSceneNameBytes, 'x')));
  EXPECT_FALSE(IsValidSceneName(std::string(kMaxSceneNameBytes + 1, 'x')));
  EXPECT_FALSE(IsValidSceneName(""));
  EXPECT_FALSE(IsValidSceneName("."));
  EXPECT_FALSE(IsValidSceneName(".."));
  EXPECT_TRUE(IsValidSceneName(".a"));
  for (char c = 1; c < 127; ++c) {
    const bool expected = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
                          (c >= '0' && c <= '9') || c == '_' || c == '-' || c == '.';
    if (c == '.') continue;  // "." alone is refused; covered above
    EXPECT_EQ(IsValidSceneName(std::string(1, c)), expected) << static_cast<int>(c);
  }
}

RC_GTEST_PROP(EnvelopePropertyTest, RandomFramesRoundTrip, ()) {
  const auto kind = *Uniform<int>(0, 11);
  const auto data = *rc::gen::container<std::vector<uint8_t>>(rc::gen::arbitrary<uint8_t>());
  const auto u1 = *rc::gen::arbitrary<uint64_t>();
  const auto u2 = *rc::gen::arbitrary<uint64_t>();
  const auto flag = *rc::gen::arbitrary<bool>();
  Frame frame;
  switch (kind) {
    case 0: {
      const auto scene = *rc::gen::resize(static_cast<int>(kMaxSceneNameBytes - 1),
                                          rc::gen::nonEmpty(rc::gen::container<std::string>(
                                              rc::gen::element('a', 'Z', '0', '-', '_'))));
      const auto token = *rc::gen::container<std::string>(rc::gen::arbitrary<char>());
      frame = Hello{scene, token.substr(0, kMaxTokenBytes),
                    flag ? std::optional<uint64_t>(u1) : std::nullopt, "n"};
      break;
    }
    case 1:
      frame = Welcome{u1, u2, flag, !flag};
      break;
    case 2:
      frame = Crdt{u1, u2, flag, data};
      break;
    case 3:
      frame = Ack{u1};
      break;
    case 4: {
      const auto text = *rc::gen::container<std::string>(rc::gen::arbitrary<char>());
      frame = ErrorFrame{static_cast<ErrorCode>(*rc::gen::arbitrary<uint16_t>()), text, u1, flag};
      break;
    }
    case 5:
      frame = Ping{u1, u2};
      break;
    case 7: {
      const auto f = *rc::gen::arbitrary<float>();
      frame = SetInterest{static_cast<InterestMode>(*Uniform<int>(0, 3)),
                          f,
                          -f,
                          0.5f,
                          static_cast<uint32_t>(u1),
                          *rc::gen::arbitrary<float>(),
                          flag ? std::optional<float>(f) : std::nullopt};
      break;
    }
    case 8:
      frame = InterestSet{static_cast<InterestMode>(*Uniform<int>(0, 3)), 3.0f, 1.0f, flag};
      break;
    case 9:
      frame =
          OutOfView{u1, *rc::gen::container<std::vector<uint32_t>>(rc::gen::arbitrary<uint32_t>())};
      break;
    default:
      frame = Pong{u1, u2};
      break;
  }
  const std::vector<uint8_t> bytes = BuildFrame(frame);
  RC_ASSERT(PeekFrameSize(bytes) == bytes.size());
  auto read = Read(bytes);
  RC_ASSERT(read.has_value());
  RC_ASSERT(SameFrame(*read, frame));

  // Random corruption never crashes; what is accepted rebuilds to a frame that reads back.
  std::vector<uint8_t> corrupt = bytes;
  const auto flips = *Uniform<int>(1, 6);
  for (int i = 0; i < flips; ++i) {
    const auto at = *Uniform<std::size_t>(0, corrupt.size());
    corrupt[at] = *rc::gen::arbitrary<uint8_t>();
  }
  auto r = Read(corrupt);
  if (r.has_value()) {
    const std::vector<uint8_t> rebuilt = BuildFrame(*r);
    auto again = Read(rebuilt);
    RC_ASSERT(again.has_value());
    RC_ASSERT(SameFrame(*again, *r));
  }
}

#ifndef NDEBUG
TEST(SceneSequenceTest, IncarnationAboveFortyBitsOfStoreSequence) {
  static_assert(kSequenceShift == 40);
  EXPECT_EQ(MakeSceneSequence(0, 0), 0u);
  EXPECT_EQ(MakeSceneSequence(3, 7), (uint64_t{3} << 40) | 7);
  const uint64_t last_local = kLocalSequenceMask;
  const uint64_t s = MakeSceneSequence(12345, last_local);
  EXPECT_EQ(SequenceIncarnation(s), 12345u);
  EXPECT_EQ(LocalSequence(s), last_local);
  // A store sequence never spills into the incarnation.
  EXPECT_EQ(SequenceIncarnation(MakeSceneSequence(5, last_local + 1)), 5u);
  EXPECT_EQ(LocalSequence(MakeSceneSequence(5, last_local + 1)), 0u);
}

TEST(EnvelopeDeathTest, UnalignedBufferIsAProgrammerError) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  const std::vector<uint8_t> bytes = BuildFrame(Ping{1, 2});
  std::vector<uint8_t> shifted(bytes.size() + 1);
  std::memcpy(shifted.data() + 1, bytes.data(), bytes.size());
  EXPECT_DEATH((void)ReadFrame(std::span<const uint8_t>(shifted).subspan(1)), "8-byte aligned");
}
#endif

}  // namespace
}  // namespace scenecrdt::session
