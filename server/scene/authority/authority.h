// SPDX-License-Identifier: Apache-2.0
// Owns Authority: a scene's answer to "may this principal write this message" under
// --authority (docs/AUTHORITY.md), its owner table (entity number -> principal, one hash
// lookup per message), the owner changes its next commit must carry, and the correction that
// makes a refused write lose in the writer's replica. Used on the scene's strand only.
//
// Bounds: one interned principal per distinct member principal that joined the scene and per
// restored owner (at most --max-sessions-per-scene joined at once; the table keeps the names
// of past owners while they own something), one owner per live entity number (65024 at most).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "scenecrdt/protocol/crdt_message.h"
#include "scenecrdt/protocol/result.h"
#include "scenecrdt/runtime/crdt_store.h"
#include "scenecrdt/server/config.h"
#include "scenecrdt/server/scene/authority/authority_rules.h"
#include "scenecrdt/server/storage/commit_log.h"

namespace scenecrdt::server {

// An owner row: entity number and principal ("" once released). The scene's commit job
// carries these (storage/commit_log.h), the database keeps them (storage/persistence.h).
using OwnerRow = std::pair<uint32_t, std::string>;

// A write the authority refused, as much as a correction needs.
struct RefusedWrite {
  protocol::MessageType type = protocol::MessageType::kPutComponent;
  protocol::EntityId entity = 0;
  protocol::ComponentId component = 0;
  uint32_t timestamp = 0;
  ErrorCode code = ErrorCode::kOk;
};

class Authority {
 public:
  // `rules`: kRules's table (the server's, shared read-only); kRules without one acts as
  // kOwner (serve refuses to start that way).
  Authority(AuthorityMode mode, std::shared_ptr<const AuthorityRules> rules)
      : mode_(rules || mode != AuthorityMode::kRules ? mode : AuthorityMode::kOwner),
        rules_(std::move(rules)) {}

  bool enabled() const { return mode_ != AuthorityMode::kOpen; }
  // The id a member's principal carries on the strand (never 0).
  uint32_t Intern(const std::string& principal);

  // Range grants of `principal` (JWT `entities`): it owns these numbers from the start and
  // may create nothing outside them. Kept while the scene is in memory (bounded by
  // --max-sessions-per-scene members x JwtClaims::kMaxRanges).
  void Grant(uint32_t principal, const std::vector<std::pair<uint32_t, uint32_t>>& ranges);

  // kOk when `principal` (admin: anything; `ranged`: it holds range grants) may write `m`,
  // else the refusal code (kNotOwner). Reserved entity numbers (< 512) are nobody's: any
  // writer may write them. One hash lookup; the ranges are read only when it misses.
  // kRules first applies the component's rule (kServerOnlyComponent for "none", even to
  // admins; kNotAdmin for "admin" and for the admin-only entity ranges), then the owner rule
  // for "owner" components and DELETE_ENTITY (docs/AUTHORITY.md "Rules mode").
  ErrorCode Check(uint32_t principal, bool admin, bool ranged,
                  const protocol::CrdtMessage& m) const;
  // After `m` merged with `outcome`: a PUT that changed an entity nobody owns claims it for
  // `principal` (kRules: a PUT of an "owner" component only); a DELETE_ENTITY that changed
  // the state ends its ownership.
  void Note(uint32_t principal, const protocol::CrdtMessage& m, runtime::MergeOutcome outcome);

  // A correction merged (Correction below), the store at `sequence` after it, over the value
  // stamped `replaced` (nullopt: none): the register is marked until an allowed write wins it
  // again. On a shared log it is also marked for the stream (TakeChanges), and when the value
  // it re-stamps is one this node admitted, so is the correction (it carries that value).
  void NoteCorrection(const protocol::CrdtMessage& correction, uint64_t sequence,
                      std::optional<uint32_t> replaced);
  // An allowed register write that would lose only to a timestamp the server stamped (a
  // correction, or an earlier re-stamp: its writer had not seen it yet) is re-stamped just
  // above it, and the mark moves with it, so that a refused writer's correction never undoes
  // the owner's concurrent writes (docs/AUTHORITY.md). True when `m.timestamp` was changed.
  bool RestampOverCorrection(const runtime::CrdtStore& store, protocol::CrdtMessage& m);

  // Cluster (docs/AUTHORITY.md "Cluster"): whether allowed `m` would claim its entity (a PUT
  // of an owner-rule component to a number nobody owns yet, not reserved).
  bool IsClaim(const protocol::CrdtMessage& m) const;
  // An owner row decided by the shared log ("": nobody), applied as is (not a change to commit).
  void SetOwner(uint32_t number, const std::string& principal);
  // The shared log's whole owner table after a snapshot reload (docs/AUTHORITY.md "Cluster"):
  // it replaces this one, numbers it lacks lose their owner. Numbers changed here and not
  // known committed (not taken for a commit yet, or in `in_flight`, the rows of the commit in
  // flight) keep their value: the log may not have them yet; the next commit carries them (a
  // failed one again: Failed). Not changes to commit; the range grants and the corrections'
  // and admitted writes' bookkeeping are not owner rows and stay as they are.
  // The numbers whose owner changed.
  std::size_t ReplaceOwners(const std::vector<OwnerRow>& rows,
                            const std::vector<OwnerRow>& in_flight);

  // ---- Counter-corrections (cluster; docs/AUTHORITY.md "Cluster") ----
  // On a shared log: from now on every allowed register write merged here (Note) is remembered
  // (the last timestamp per register, at most one entry per register this node's members
  // wrote), and corrections are marked for the stream.
  void TrackAdmitted() { track_admitted_ = true; }
  void NoteAdmitted(const protocol::CrdtMessage& m);
  // A value this node admitted, held by the store when another node's correction of its
  // register arrived.
  struct Beaten {
    CorrectionMark mark;
    bool has_data = false;
    std::vector<uint8_t> value;
  };
  // Before a chunk with the correction marks `marks` merges: the registers whose current value
  // this node admitted and the correction may beat (timestamp at or below the correction's).
  void CaptureBeaten(const runtime::CrdtStore& store, std::span<const CorrectionMark> marks,
                     std::vector<Beaten>& out) const;
  // After that chunk merged: when the correction won with another value, the write that undoes
  // it, `b`'s value stamped just above the correction (its data points into b.value). When it
  // won with `b`'s own value, it is admitted here from now on (it carries that value).
  std::optional<protocol::CrdtMessage> CounterCorrection(const runtime::CrdtStore& store,
                                                         const Beaten& b);
  // Another node's correction `mark` merged here: while it holds the register, the owner's
  // writes through this node stamped at or below it are re-stamped over it, as after a
  // correction of this node's own (RestampOverCorrection). Not marked again for the stream.
  void NoteRemoteCorrection(const runtime::CrdtStore& store, const CorrectionMark& mark);
  // A counter-correction merged: the owner's writes through this node stamped at or below it are
  // re-stamped over it (RestampOverCorrection), and it is admitted here (a later correction
  // beating it is countered again). It is never marked: no node counters a counter-correction.
  void NoteCounter(const protocol::CrdtMessage& counter);

  // The owner of entity `number`, nullptr when nobody owns it.
  const std::string* OwnerOf(uint32_t number) const;
  std::size_t owned() const { return owner_of_.size(); }
  // Every owner, sorted by entity number (tools, tests).
  std::vector<OwnerRow> Owners() const;

  // Durability: the rows changed since the last Take (their current owners); Failed() puts
  // the numbers of the job in flight back (the next job writes them again).
  // `corrections` gets the marks of the corrections merged after store sequence `durable`
  // (those a commit from `durable` carries; older ones are dropped: committed).
  std::vector<OwnerRow> TakeChanges(uint64_t durable, std::vector<CorrectionMark>& corrections);
  bool has_changes() const { return !dirty_.empty(); }
  // An admin's transfer: `number` belongs to `principal` from now on ("" : nobody).
  void Transfer(uint32_t number, const std::string& principal);
  void Failed(const std::vector<OwnerRow>& rows);
  // The stored owners, before anything merges (not changes: they are durable).
  void Restore(const std::vector<OwnerRow>& rows);

  // The write that makes `refused` lose in the writer's replica, re-stamped above it
  // (docs/AUTHORITY.md "Corrections"): the scene's current value of the register (or a
  // DELETE_COMPONENT when it has none) at refused.timestamp + 1, when the writer's own write
  // would otherwise win there; nullopt when nothing is needed or possible (APPEND_VALUE and
  // DELETE_ENTITY cannot be undone in a replica; a timestamp at the top of its range).
  // The message's data points into `scratch`.
  static std::optional<protocol::CrdtMessage> Correction(const runtime::CrdtStore& store,
                                                         const RefusedWrite& refused,
                                                         std::vector<uint8_t>& scratch);

 private:
  ErrorCode CheckOwner(uint32_t principal, bool ranged, uint32_t number) const;

  AuthorityMode mode_;
  std::shared_ptr<const AuthorityRules> rules_;
  std::unordered_map<std::string, uint32_t> ids_;
  std::vector<std::string> names_{std::string()};    // id -> principal; 0: nobody
  std::unordered_map<uint32_t, uint32_t> owner_of_;  // entity number -> principal id
  std::unordered_set<uint32_t> dirty_;               // numbers changed since the last Take
  struct Range {
    uint32_t lo, hi, principal;
    bool operator==(const Range&) const = default;
  };
  std::vector<Range> ranges_;
  // (component << 32 | entity) -> the timestamp of the correction that holds the register
  // (bounded by the scene's registers).
  std::unordered_map<uint64_t, uint32_t> corrected_;
  // Cluster (TrackAdmitted): (component << 32 | entity) -> the timestamp of the last allowed
  // write merged here (or correction carrying its value), and the corrections merged and not
  // known committed, with the store sequence after each (bounded by the refused writes since
  // the durable point).
  bool track_admitted_ = false;
  std::unordered_map<uint64_t, uint32_t> admitted_;
  std::vector<std::pair<CorrectionMark, uint64_t>> marks_;
};

}  // namespace scenecrdt::server
