// SPDX-License-Identifier: Apache-2.0
// Owns ViewTable: the set of entities an interest member's client holds, each marked core
// (within the radius) or not (an ancestor or a parked loop member), as one flat open-addressed
// table (linear probing, backward-shift erase: no tombstones). std::unordered_map spent most
// of each member's update in its modulo and scattered nodes; Debian 12's Boost (1.74) has no
// flat map and Abseil's would be a new dependency of the server (docs/INTEREST.md "Server work
// and bounds" says why this one). Memory: 8 bytes per slot, 2 to 4 slots per
// entity held (grown at half full); clear() lets a table 8 times too large go.
#pragma once

#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

#include "scenecrdt/protocol/entity_id.h"

namespace scenecrdt::server {

class ViewTable {
 public:
  // An entity's mark: absent, held outside the core, or in the core.
  enum Mark : uint8_t { kAbsent = 0, kHeld = 1, kCore = 2 };

  std::size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  bool contains(protocol::EntityId e) const { return Get(e) != kAbsent; }
  Mark Get(protocol::EntityId e) const {
    if (slots_.empty()) return kAbsent;
    for (std::size_t i = Home(e);; i = (i + 1) & mask_) {
      const Slot& s = slots_[i];
      if (s.mark == kAbsent) return kAbsent;
      if (s.entity == e) return static_cast<Mark>(s.mark);
    }
  }
  // Adds `e` (core or not); false, and nothing changed, when it is held already.
  bool Insert(protocol::EntityId e, bool core) {
    if ((size_ + 1) * 2 > slots_.size()) Grow(size_ + 1);
    std::size_t i = Home(e);
    for (; slots_[i].mark != kAbsent; i = (i + 1) & mask_) {
      if (slots_[i].entity == e) return false;
    }
    slots_[i] = Slot{e, core ? kCore : kHeld};
    ++size_;
    return true;
  }
  // Marks a held entity core; false when it is not held.
  bool SetCore(protocol::EntityId e) {
    Slot* s = Find(e);
    if (s == nullptr) return false;
    s->mark = kCore;
    return true;
  }
  // Removes `e`; false when it was not held.
  bool Erase(protocol::EntityId e) {
    Slot* s = Find(e);
    if (s == nullptr) return false;
    // Backward shift: every entry after the hole that may live there moves up, so a probe
    // never stops early at an emptied slot.
    std::size_t hole = static_cast<std::size_t>(s - slots_.data());
    for (std::size_t i = (hole + 1) & mask_; slots_[i].mark != kAbsent; i = (i + 1) & mask_) {
      const std::size_t home = Home(slots_[i].entity);
      // The entry at i may fill the hole when its home is not in (hole, i] (cyclically).
      if (((i - home) & mask_) >= ((i - hole) & mask_)) {
        slots_[hole] = slots_[i];
        hole = i;
      }
    }
    slots_[hole] = Slot{};
    --size_;
    return true;
  }
  // Calls f(entity, core) for every entity held, in no particular order.
  template <class F>
  void ForEach(F&& f) const {
    for (const Slot& s : slots_) {
      if (s.mark != kAbsent) f(s.entity, s.mark == kCore);
    }
  }
  // Empties the table; keeps its slots unless they were 8 times more than the entities held
  // (a view that shrank gives its memory back).
  void clear() {
    if (slots_.size() > 64 && size_ * 8 < slots_.size()) {
      std::vector<Slot>().swap(slots_);
      mask_ = 0;
    } else if (size_ != 0) {
      for (Slot& s : slots_) s = Slot{};
    }
    size_ = 0;
  }
  // Room for `n` entities without a rehash.
  void reserve(std::size_t n) {
    if (n * 2 > slots_.size()) Grow(n);
  }
  void swap(ViewTable& other) noexcept {
    slots_.swap(other.slots_);
    std::swap(mask_, other.mask_);
    std::swap(size_, other.size_);
  }
  // The same entities with the same marks.
  friend bool operator==(const ViewTable& a, const ViewTable& b) {
    if (a.size_ != b.size_) return false;
    bool same = true;
    a.ForEach([&](protocol::EntityId e, bool core) {
      same = same && b.Get(e) == (core ? kCore : kHeld);
    });
    return same;
  }

 private:
  struct Slot {
    protocol::EntityId entity = 0;
    uint8_t mark = kAbsent;
  };
  std::size_t Home(protocol::EntityId e) const {
    // Fibonacci hashing: entity ids are dense small numbers with versions in the high bits.
    return static_cast<std::size_t>((uint64_t{e} * 0x9E3779B97F4A7C15ull) >> 32) & mask_;
  }
  Slot* Find(protocol::EntityId e) {
    if (slots_.empty()) return nullptr;
    for (std::size_t i = Home(e);; i = (i + 1) & mask_) {
      Slot& s = slots_[i];
      if (s.mark == kAbsent) return nullptr;
      if (s.entity == e) return &s;
    }
  }
  // Rehashes into a power of two of at least 2 * n slots (16 at least).
  void Grow(std::size_t n) {
    std::size_t capacity = 16;
    while (capacity < n * 2) capacity *= 2;
    std::vector<Slot> old(capacity);
    old.swap(slots_);
    mask_ = capacity - 1;
    size_ = 0;
    for (const Slot& s : old) {
      if (s.mark != kAbsent) Insert(s.entity, s.mark == kCore);
    }
  }

  std::vector<Slot> slots_;
  std::size_t mask_ = 0;
  std::size_t size_ = 0;
};

}  // namespace scenecrdt::server
