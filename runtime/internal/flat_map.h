// SPDX-License-Identifier: Apache-2.0
// Owns FlatMap: an open-addressing hash map from an unsigned integer key to a trivially
// copyable value (linear probing, backward-shift deletion, power-of-two capacity, load <= 1/2).
// Used at the runtime's boundary to map wire ids (entity, component) to dense slots.
#pragma once

#include <cstdint>
#include <type_traits>
#include <vector>

namespace scenecrdt::runtime::internal {

template <class Key, class Value>
class FlatMap {
  static_assert(std::is_unsigned_v<Key>, "FlatMap keys are unsigned integers");
  static_assert(std::is_trivially_copyable_v<Value>, "FlatMap values are trivially copyable");

 public:
  FlatMap() { Rehash(16); }

  std::size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }

  // Pointer to the value, or nullptr. Invalidated by Insert/Erase.
  const Value* Find(Key key) const {
    std::size_t i = Home(key);
    while (used_[i]) {
      if (keys_[i] == key) return &values_[i];
      i = (i + 1) & mask_;
    }
    return nullptr;
  }
  Value* Find(Key key) { return const_cast<Value*>(static_cast<const FlatMap*>(this)->Find(key)); }

  // Inserts or overwrites.
  void Insert(Key key, Value value) {
    if (2 * (size_ + 1) > capacity()) Rehash(2 * capacity());
    std::size_t i = Home(key);
    while (used_[i]) {
      if (keys_[i] == key) {
        values_[i] = value;
        return;
      }
      i = (i + 1) & mask_;
    }
    used_[i] = 1;
    keys_[i] = key;
    values_[i] = value;
    ++size_;
  }

  // Removes `key`; returns false when absent.
  bool Erase(Key key) {
    std::size_t i = Home(key);
    while (used_[i] && keys_[i] != key) i = (i + 1) & mask_;
    if (!used_[i]) return false;
    // Backward-shift: move later members of the probe run into the hole.
    std::size_t hole = i;
    std::size_t j = (i + 1) & mask_;
    while (used_[j]) {
      const std::size_t home = Home(keys_[j]);
      // Move j into the hole when its home is not in (hole, j] (cyclically).
      const bool in_range = hole <= j ? (home > hole && home <= j) : (home > hole || home <= j);
      if (!in_range) {
        keys_[hole] = keys_[j];
        values_[hole] = values_[j];
        hole = j;
      }
      j = (j + 1) & mask_;
    }
    used_[hole] = 0;
    --size_;
    return true;
  }

  void Clear() {
    used_.assign(used_.size(), 0);
    size_ = 0;
  }

  // Calls f(key, value) for every member, in table order.
  template <class F>
  void ForEach(F&& f) const {
    for (std::size_t i = 0; i < used_.size(); ++i) {
      if (used_[i]) f(keys_[i], values_[i]);
    }
  }

 private:
  std::size_t capacity() const { return used_.size(); }
  std::size_t Home(Key key) const {
    // Fibonacci hashing of the (zero-extended) key.
    const uint64_t h = static_cast<uint64_t>(key) * 0x9E3779B97F4A7C15ull;
    return static_cast<std::size_t>(h >> shift_) & mask_;
  }
  void Rehash(std::size_t new_capacity) {
    std::vector<Key> old_keys = std::move(keys_);
    std::vector<Value> old_values = std::move(values_);
    std::vector<uint8_t> old_used = std::move(used_);
    keys_.assign(new_capacity, Key{});
    values_.assign(new_capacity, Value{});
    used_.assign(new_capacity, 0);
    mask_ = new_capacity - 1;
    int bits = 0;
    while ((std::size_t{1} << bits) < new_capacity) ++bits;
    shift_ = 64 - bits;
    size_ = 0;
    for (std::size_t i = 0; i < old_used.size(); ++i) {
      if (old_used[i]) Insert(old_keys[i], old_values[i]);
    }
  }

  std::vector<Key> keys_;
  std::vector<Value> values_;
  std::vector<uint8_t> used_;
  std::size_t mask_ = 0;
  int shift_ = 60;
  std::size_t size_ = 0;
};

}  // namespace scenecrdt::runtime::internal
