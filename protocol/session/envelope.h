// SPDX-License-Identifier: Apache-2.0
// Owns the session envelope API: plain C++ frame types, building size-prefixed frames, and
// verify-then-read of received frames (flatbuffers Verifier with tight limits first, then a
// range check of every field). Callers never see flatc's generated types.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <variant>
#include <vector>

#include "scenecrdt/protocol/result.h"

namespace scenecrdt::session {

inline constexpr uint16_t kProtocolVersion = 1;
// Size of the little-endian u32 that prefixes every frame (it counts the bytes after it).
inline constexpr std::size_t kSizePrefixBytes = 4;
inline constexpr uint32_t kDefaultMaxFrameBytes = 4u << 20;
// The frame limit a client assumes before the Welcome, and when the Welcome does not say it
// (servers older than Welcome.max_frame_bytes): the default of `serve --max-frame-bytes`.
inline constexpr uint32_t kDefaultServerMaxFrameBytes = 1u << 20;
// Smallest Welcome.max_frame_bytes a client accepts (serve refuses a smaller limit).
inline constexpr uint32_t kMinServerMaxFrameBytes = 64;
// What a Crdt frame adds to its DCL data, at most: the size prefix, the envelope and Crdt
// tables with every field set, the vector's length and alignment padding.
inline constexpr std::size_t kCrdtFrameOverheadBytes = 128;
// The most DCL bytes one Crdt frame may carry under a frame limit (0: none fit).
constexpr std::size_t MaxCrdtDataBytes(uint32_t max_frame_bytes) {
  return max_frame_bytes > kCrdtFrameOverheadBytes ? max_frame_bytes - kCrdtFrameOverheadBytes : 0;
}
// Scene names: 1..64 bytes of [A-Za-z0-9_.-].
inline constexpr std::size_t kMaxSceneNameBytes = 64;
inline constexpr std::size_t kMaxTokenBytes = 4096;
inline constexpr std::size_t kMaxErrorTextBytes = 1024;

// Compression of the server -> client byte stream of a framed TCP connection (docs/PROTOCOL.md
// section 2, "Compression"). Wire values: append only.
// kZstd: one zstd stream per connection; kZstdFrames: records that are plain frames or one
// frame compressed alone (protocol/session/zstd_records.h), so a scene compresses a shared
// frame once for all its members.
enum class Compression : uint8_t { kNone = 0, kZstd = 1, kZstdFrames = 2 };

struct Hello {
  std::string scene;
  std::string token;
  std::optional<uint64_t> resume_sequence;  // last scene sequence applied, when resuming
  std::string client_name;
  // The compression the client can read (framed TCP only; WebSocket uses permessage-deflate).
  Compression compression = Compression::kNone;
  // The client can read zstd frames too (Welcome.compression = kZstdFrames).
  bool zstd_frames = false;
};
struct Welcome {
  uint64_t session_id = 0;
  uint64_t scene_sequence = 0;  // the state frames that follow reach this sequence
  bool resumed = false;         // true: a delta since Hello.resume_sequence; false: snapshot
  bool can_write = false;
  // What every server -> client byte after this frame is (kNone unless Hello offered it).
  Compression compression = Compression::kNone;
  // The largest frame the server accepts from this client (its --max-frame-bytes, also its
  // WebSocket message limit); 0: not said (an older server): kDefaultServerMaxFrameBytes.
  uint32_t max_frame_bytes = 0;
};
// The frame limit a Welcome tells a client: its max_frame_bytes, or the default when unset.
inline uint32_t ServerMaxFrameBytes(const Welcome& w) {
  return w.max_frame_bytes != 0 ? w.max_frame_bytes : kDefaultServerMaxFrameBytes;
}
// `data` is a DCL CRDT stream. After ReadFrame it points into the frame buffer.
struct Crdt {
  uint64_t frame_sequence = 0;  // client -> server: echoed by Ack
  uint64_t scene_sequence = 0;  // server -> client: the scene sequence after these changes
  bool is_state = false;        // server -> client: part of the snapshot / resume delta
  std::span<const uint8_t> data;
};
struct Ack {
  uint64_t frame_sequence = 0;
};
struct ErrorFrame {
  ErrorCode code = ErrorCode::kOk;
  std::string text;
  uint64_t frame_sequence = 0;
  bool fatal = false;
};
struct Ping {
  uint64_t nonce = 0;
  uint64_t sent_us = 0;
};
struct Pong {
  uint64_t nonce = 0;
  uint64_t sent_us = 0;
};

// Interest management (docs/INTEREST.md). Wire values of the mode: append only.
enum class InterestMode : uint8_t { kNone = 0, kPoint = 1, kFollow = 2 };
// Client -> server. Allowed before Hello (it shapes the join's state) and after it.
struct SetInterest {
  InterestMode mode = InterestMode::kNone;
  float center_x = 0, center_y = 0, center_z = 0;  // kPoint
  uint32_t follow_entity = 0;                      // kFollow: a full DCL entity id
  float radius = 0;
  std::optional<float> hysteresis;  // unset: the server's default, max(1 m, 0.1 radius)
};
// Server -> client: the interest in effect (radius clamped to the server's maximum).
struct InterestSet {
  InterestMode mode = InterestMode::kNone;
  float radius = 0;
  float hysteresis = 0;
  bool clamped = false;
};
// Server -> client: entities that left the view at `scene_sequence` (dropped, no tombstone).
struct OutOfView {
  uint64_t scene_sequence = 0;
  std::vector<uint32_t> entities;
};
// Most entities one OutOfView names (a larger departure is split over several frames).
inline constexpr std::size_t kMaxOutOfViewEntities = 65536;

// Server -> client: one write of a client frame refused by the scene's authority (non-fatal;
// docs/AUTHORITY.md). The scene's value for the register follows as an ordinary change.
struct Refusal {
  uint64_t frame_sequence = 0;
  uint32_t entity = 0;
  uint32_t component = 0;
  uint8_t message_type = 0;  // the refused DCL message's type
  ErrorCode code = ErrorCode::kOk;
};

// Client -> server: an admin gives entity number `entity` to principal `to` ("" releases it);
// the server echoes it once applied or answers with a Refusal (not_admin). docs/AUTHORITY.md.
inline constexpr std::size_t kMaxPrincipalBytes = 256;
struct TransferOwnership {
  uint32_t entity = 0;
  std::string to;
};

using Frame = std::variant<Hello, Welcome, Crdt, Ack, ErrorFrame, Ping, Pong, SetInterest,
                           InterestSet, OutOfView, Refusal, TransferOwnership>;

// Builds one size-prefixed frame (prefix included).
std::vector<uint8_t> BuildFrame(const Frame& frame);

struct ReadOptions {
  uint32_t max_frame_bytes = kDefaultMaxFrameBytes;
};

// Length of the frame that starts at `bytes` (prefix included), once at least 4 bytes are
// available; nullopt while fewer. Callers check it against their limit before buffering.
std::optional<uint64_t> PeekFrameSize(std::span<const uint8_t> bytes);

// Verifies and reads one complete size-prefixed frame. Errors: kFrameTooLarge,
// kEnvelopeInvalid (verification, identifier, missing payload, oversized strings, bad scene
// name), kProtocolVersion. Views in the result (Crdt::data) point into `frame`, which must
// be 8-byte aligned (flatbuffers reads scalars in place).
Result<Frame> ReadFrame(std::span<const uint8_t> frame, const ReadOptions& options = {});

// True when `bytes` begin like a size-prefixed envelope frame (the file identifier "SCRD" at
// bytes 8..11): how an HTTP port recognises a tcp:// client that dialled it.
bool HasFrameIdentifier(std::span<const uint8_t> bytes);

// The HTTP header a server's framed-TCP port puts on its answer to an HTTP request (a ws://
// client that dialled it), so that the client can say which port it should have used.
inline constexpr char kFramedTcpPortHeader[] = "X-Scenecrdt-Framed-Tcp-Port";

// True for 1..64 bytes of [A-Za-z0-9_.-] (and not "." or "..").
bool IsValidSceneName(std::string_view name);

}  // namespace scenecrdt::session
