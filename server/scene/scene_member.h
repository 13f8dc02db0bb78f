// SPDX-License-Identifier: Apache-2.0
// Owns SceneMember: everything a scene may ask of one of its members (sessions/session.h
// implements it), so that the scene knows nothing of transports and protocols. A member is
// identified once (id, kind, address) and is handed frames built once and shared by every
// member (SharedFrame), refusals of what it submitted, acks, and a fatal close. Every Post*
// call may come from any thread (the scene's strand): the member posts to its own strand.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "scenecrdt/net/net.h"
#include "scenecrdt/protocol/result.h"
#include "scenecrdt/protocol/session/envelope.h"
#include "scenecrdt/server/context.h"
#include "scenecrdt/server/observability/metrics.h"

namespace scenecrdt::server {

class SceneMember {
 public:
  // Immutable once the member joins: readable from any strand.
  virtual uint64_t id() const = 0;
  virtual SessionKind kind() const = 0;
  // The remote address (reconnect detection) and its "IP:PORT" text (log lines).
  virtual const net::tcp::endpoint& peer() const = 0;
  virtual const std::string& peer_text() const = 0;
  // The member reads the scene's envelope frames as zstd records, compressed once per scene.
  virtual bool zstd_frames() const = 0;
  // Who the scene's authority sees (docs/AUTHORITY.md): the credential's principal, or
  // "session#<id>" without auth; and whether it may write anything (role admin).
  virtual std::string principal() const = 0;
  virtual bool admin() const = 0;
  // The entity-number ranges its credential grants (JWT `entities`); empty: none.
  virtual std::vector<std::pair<uint32_t, uint32_t>> entity_ranges() const = 0;

  // The scene accepted the join: `welcome` goes to protocols that send one, then `state`
  // (the frames or chunk the scene built for this member's kind).
  virtual void PostJoined(session::Welcome welcome, std::vector<SharedFrame> state) = 0;
  // Scene changes, shared with every member at the same cursor; the member reports Ready to
  // the scene once nothing of the scene is in flight to it any more.
  virtual void PostSceneFrames(std::vector<SharedFrame> frames) = 0;
  // Frames up to `frame_sequence` are durable (the envelope acks them; raw DCL cannot).
  virtual void PostAck(uint64_t frame_sequence) = 0;
  // A non-fatal refusal by the scene of a submitted batch of `messages` messages. `text`
  // must be a static string.
  virtual void PostRefusal(ErrorCode code, const char* text, uint64_t frame_sequence,
                           uint64_t messages = 0) = 0;
  // One write of a submitted batch was refused by the scene's authority (the rest merged).
  virtual void PostWriteRefused(session::Refusal refusal) = 0;
  // The member's TransferOwnership was applied (its echo goes back).
  virtual void PostOwnershipTransferred(session::TransferOwnership transfer) = 0;
  // A fatal end: the protocol's goodbye (Error frame or close code), queued data flushed,
  // closed.
  virtual void PostClose(ErrorCode code, std::string text) = 0;

 protected:
  virtual ~SceneMember() = default;  // owned as its concrete type (a Session's shared_ptr)
};

}  // namespace scenecrdt::server
