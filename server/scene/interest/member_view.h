// SPDX-License-Identifier: Apache-2.0
// Owns MemberView: one interest member's view of its scene (docs/INTEREST.md) and what each
// of its deliveries sends. The view is the set of entities with a Transform whose world
// position is within the radius of the centre (leaving at radius + hysteresis: "core"
// entities), plus every effective ancestor of a view entity and every member of a parenting
// loop a view entity is parked in (so that the client's effective tree, hence its world
// matrices, equal the server's for what it holds). Entities without a live Transform and
// every tombstone go to everyone. A delivery names the entities that left (OutOfView), sends
// the whole state of those that entered, and passes the changes of held entities through.
// Under a byte budget (--client-budget-kbps, docs/INTEREST.md "Byte budget") a delivery sends
// the nearest entities' changes first and defers the rest: only their ids are kept, and their
// newest whole state goes later. Memory: one hash entry per entity in the view, plus the
// entities the member wrote since its last delivery, plus the deferred entities (a subset of
// the view). An update is incremental (member_view_incremental.cc) when the centre, the interest
// and the effective tree did not change since the last one: only the entities the index's
// journal names in the member's cells are looked at. Used on the scene's strand only.
#pragma once

#include <cstdint>
#include <glm/vec3.hpp>
#include <optional>
#include <span>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "scenecrdt/protocol/result.h"
#include "scenecrdt/protocol/session/envelope.h"
#include "scenecrdt/runtime/crdt_store.h"
#include "scenecrdt/server/scene/interest/byte_budget.h"
#include "scenecrdt/server/scene/interest/interest_index.h"
#include "scenecrdt/server/scene/interest/view_table.h"

namespace scenecrdt::server {

// An interest in effect (radius clamped, hysteresis resolved).
struct InterestSpec {
  session::InterestMode mode = session::InterestMode::kNone;
  glm::vec3 center{0.0f};
  protocol::EntityId follow = 0;
  double radius = 0;
  double hysteresis = 0;
};

// Checks a SetInterest (kInvalidInterest: a NaN, infinite or negative radius, centre or
// hysteresis) and resolves it under `max_radius`: the radius is clamped (`clamped` says so)
// and an unset hysteresis is max(1 m, 0.1 radius), itself at most `max_radius`.
Result<InterestSpec> ResolveInterest(const session::SetInterest& s, double max_radius,
                                     bool& clamped);

// The changes of store sequences (from, to], exported and decoded once and sliced for every
// interest member at `from` (docs/INTEREST.md "Server work"). Build() classifies each message
// against the synced index: to everyone (tombstones, entities without a Transform) or per
// entity; and lists the entities whose Transform was gained after `from` or lost.
struct ChangeBatch {
  struct Msg {
    uint32_t offset = 0;
    uint32_t size = 0;
    protocol::EntityId entity = 0;
    protocol::ComponentId component = 0;
    bool tombstone = false;  // DELETE_ENTITY
  };
  uint64_t from = 0;
  uint64_t to = 0;
  std::vector<uint8_t> stream;
  std::vector<Msg> msgs;
  std::unordered_map<protocol::EntityId, std::vector<uint32_t>> by_entity;  // with a Transform
  // The entities of by_entity by (cell, entity): a member looks only at its cells' changes.
  struct CellEntity {
    uint64_t cell = 0;
    protocol::EntityId entity = 0;
    const std::vector<uint32_t>* msgs = nullptr;  // its messages in by_entity
  };
  std::vector<CellEntity> by_cell;
  std::vector<uint32_t> everyone;          // message indices
  std::vector<protocol::EntityId> gained;  // Transform message, Transform gained after `from`
  std::vector<protocol::EntityId> lost;    // Transform message, no live Transform now

  // Exports (from, to] of `store` and classifies it against `index` (synced to `to`).
  void Build(const runtime::CrdtStore& store, const InterestIndex& index, uint64_t from_seq);
  // Fills by_entity, by_cell, everyone and (with `transform_changes`) gained and lost from
  // `msgs` against `index` (synced to `to`): Build's second half, and ChangeRing::Gather's,
  // which finds gained and lost its own way (change_ring.h).
  void Classify(const InterestIndex& index, bool transform_changes = true);
  // True when every member's view or delivery may depend on it (everyone, gained, lost).
  bool TouchesAll() const { return !everyone.empty() || !gained.empty() || !lost.empty(); }
};

class MemberView {
 public:
  // `holds_all`: the member's client holds every entity now (it joined without an interest).
  MemberView(InterestSpec spec, bool holds_all) : spec_(spec), holds_all_(holds_all) {}

  const InterestSpec& spec() const { return spec_; }
  void SetSpec(const InterestSpec& spec) {
    spec_ = spec;
    dirty_ = true;
    spec_changed_ = true;
  }
  // Off: every update recomputes the view from the grid (the reference the incremental update
  // is tested against; interest_bench --full). On by default.
  void set_incremental(bool on) { incremental_ = on; }
  // Updates that recomputed the view from the grid, and incremental ones (tests, bench).
  uint64_t full_updates() const { return full_updates_; }
  uint64_t incremental_updates() const { return incremental_updates_; }
  using View = ViewTable;
  const View& view() const { return view_; }
  // The member needs a delivery even if the store did not change: a new interest, a write
  // (the view must be recomputed), or deferred changes (a byte budget).
  bool dirty() const { return dirty_ || !deferred_.empty(); }
  // Only deferred changes are waiting (they wait for the budget's bucket).
  bool only_deferred() const { return !dirty_ && !deferred_.empty(); }
  std::size_t deferred() const { return deferred_.size(); }
  // --client-budget-kbps: every later Update sends what fits in the budget's bucket (the
  // caller refills it and spends what it sends).
  void SetBudget(const ByteBudget& budget) { budget_ = budget; }
  ByteBudget* budget() { return budget_ ? &*budget_ : nullptr; }
  // A deferred entity goes before every entity deferred fewer times once it has been
  // deferred this many deliveries (docs/INTEREST.md "Byte budget": the starvation bound).
  static constexpr uint32_t kMaxDeferrals = 8;
  // The member wrote `e` (its replica holds it until told otherwise).
  void NoteWritten(protocol::EntityId e) {
    written_.insert(e);
    dirty_ = true;
  }
  std::size_t size() const { return view_.size(); }
  bool Holds(protocol::EntityId e) const { return holds_all_ || view_.contains(e); }
  // Its client holds every entity (it declared its interest after joining without one, and
  // had no delivery since).
  bool holds_all() const { return holds_all_; }

  struct Delivery {
    std::vector<uint8_t> dcl;  // changes of held entities, then whole states of entering ones
    std::vector<protocol::EntityId> leaving;
    std::size_t entering = 0;
    std::size_t deferred = 0;  // entities whose changes the byte budget deferred
  };
  // Recomputes the view against `index` (synced) and fills `out` for a delivery of
  // `changes`, the store's changes after the member's cursor (changes.from).
  // `own_changes`: every change in it is the member's own write (its replica has them): only
  // the view's enters and leaves are sent, as the shared path does not echo either.
  void Update(const InterestIndex& index, const runtime::CrdtStore& store,
              const ChangeBatch& changes, bool own_changes, Delivery& out);
  // The centre of the last view computed (nullopt: none, an empty view).
  const std::optional<glm::vec3>& center() const { return center_; }
  // The view holds an entity outside its core (an ancestor or a loop member, possibly far
  // from the centre): its changes cannot be found from the cells around the centre.
  bool holds_far() const { return far_ != 0; }
  // The cells this member is registered under in the scene's cell map (scene_interest.cc).
  InterestIndex::CellRect registered;
  bool registered_all = false;  // too many cells to register: visited every fan-out
  // Recomputes the view from nothing and appends to `out` the messages of `snapshot` (the
  // store's whole export) that belong to it: the state of a join or resume.
  void Snapshot(const InterestIndex& index, std::span<const uint8_t> snapshot,
                std::vector<uint8_t>& out);

 private:
  // The entities an update added to or removed from the view.
  struct ViewChange {
    std::vector<protocol::EntityId> added;    // sorted once Refresh returns
    std::vector<protocol::EntityId> removed;  // sorted once Refresh returns
  };
  void Recompute(const InterestIndex& index, View& next) const;
  // Adds to `view` the closure of the `core` entities (their effective ancestors and the loops
  // they are parked in) as non-core entries; appends the new ones to `added` when given.
  // Returns how many it added.
  static std::size_t AddClosure(const InterestIndex& index,
                                std::span<const protocol::EntityId> core, View& view,
                                std::vector<protocol::EntityId>* added);
  // Brings view_ up to the index (Advance, else from the grid) and fills `change` (left
  // empty while the client holds everything).
  void Refresh(const InterestIndex& index, ViewChange& change);
  // The incremental update: false (nothing changed) when it does not apply.
  bool Advance(const InterestIndex& index, ViewChange& change);
  // The centre of the view now (nullopt: following an entity without a Transform).
  std::optional<glm::vec3> CenterNow(const InterestIndex& index) const;
  // Under a budget: appends to `picked` the batch messages of the changed held entities that
  // fit (nearest first) and to `whole` the whole states of the entering and deferred ones
  // that fit; the others are deferred. `mandatory`: bytes already due (sent regardless).
  void Budgeted(const InterestIndex& index, const runtime::CrdtStore& store,
                const ChangeBatch& changes, bool own_changes, const View& next,
                std::span<const protocol::EntityId> entering, std::size_t mandatory,
                std::vector<uint32_t>& picked, std::vector<uint8_t>& whole, Delivery& out);
  // Appends to `picked` the batch messages of the held entities (in the view, not entering:
  // `entering` sorted). Incremental: only the batch's entities in the member's cells, plus
  // the view's entities outside its core that lie outside those cells; else (the reference)
  // every entity of the view or of the batch, whichever is smaller.
  void TakeHeld(const InterestIndex& index, const ChangeBatch& changes,
                std::span<const protocol::EntityId> entering, std::vector<uint32_t>& picked);
  // The view's entities outside its core (rebuilt when far_list_valid_ is false).
  const std::vector<protocol::EntityId>& FarList();
  // After a view recomputed from the grid: the centre, the count of non-core entities and
  // the index version it reflects.
  void Settle(const InterestIndex& index);
  // Appends the messages of `stream` whose entity passes `keep` (tombstones always).
  template <class Keep>
  static void Filter(std::span<const uint8_t> stream, Keep&& keep, std::vector<uint8_t>& out);

  InterestSpec spec_;
  View view_;
  View next_;  // a recomputation from the grid is built here, then swapped with view_
  std::unordered_set<protocol::EntityId> written_;
  bool holds_all_ = false;
  bool dirty_ = true;
  std::optional<glm::vec3> center_;
  std::size_t far_ = 0;  // entities of view_ outside the core
  std::vector<protocol::EntityId> far_list_;
  bool far_list_valid_ = false;
  // Scratch reused by every Update (no allocation per member per flush once warm).
  std::vector<uint32_t> picked_;
  std::vector<uint8_t> whole_;
  std::vector<protocol::EntityId> leaving_;
  std::vector<protocol::EntityId> entering_;
  ViewChange change_;
  struct AdvanceScratch {
    std::vector<protocol::EntityId> candidates;  // journal entries in the member's cells
    std::vector<protocol::EntityId> enter_core;
    std::vector<protocol::EntityId> leave_core;
  } advance_;
  bool incremental_ = true;
  bool spec_changed_ = true;   // the view was not computed for spec_ yet
  uint64_t seen_version_ = 0;  // the index version view_ reflects (when !spec_changed_)
  uint64_t full_updates_ = 0;
  uint64_t incremental_updates_ = 0;
  std::optional<ByteBudget> budget_;
  // Entities of the view whose changes the budget deferred -> deliveries deferred so far.
  std::unordered_map<protocol::EntityId, uint32_t> deferred_;
};

}  // namespace scenecrdt::server
