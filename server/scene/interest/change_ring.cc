// SPDX-License-Identifier: Apache-2.0
// Owns ChangeRing's batches and the catch-up it gathers from them (change_ring.h).
#include "scenecrdt/server/scene/interest/change_ring.h"

#include <algorithm>

namespace scenecrdt::server {

const ChangeBatch& ChangeRing::Push(const runtime::CrdtStore& store, const InterestIndex& index,
                                    uint64_t from) {
  if (!batches_.empty() && batches_.back()->to != from) Clear();
  std::unique_ptr<ChangeBatch> batch = spare_ ? std::move(spare_) : std::make_unique<ChangeBatch>();
  batch->Build(store, index, from);
  bytes_ += batch->stream.size();
  batches_.push_back(std::move(batch));
  while (batches_.size() > 1 && (batches_.size() > kMaxBatches || bytes_ > kMaxBytes)) {
    std::unique_ptr<ChangeBatch> old = std::move(batches_.front());
    batches_.pop_front();
    bytes_ -= old->stream.size();
    // Reused while small: a large batch's memory goes back at once.
    if (old->stream.capacity() <= kMaxBytes / 64) spare_ = std::move(old);
  }
  return *batches_.back();
}

std::size_t ChangeRing::Find(uint64_t from) const {
  const auto it = std::lower_bound(
      batches_.begin(), batches_.end(), from,
      [](const std::unique_ptr<ChangeBatch>& b, uint64_t seq) { return b->from < seq; });
  if (it == batches_.end() || (*it)->from != from) return batches_.size();
  return static_cast<std::size_t>(it - batches_.begin());
}

bool ChangeRing::Covers(uint64_t from, uint64_t to) const {
  return !batches_.empty() && batches_.back()->to == to && Find(from) < batches_.size();
}

void ChangeRing::Gather(uint64_t from, const runtime::CrdtStore& store, const InterestIndex& index,
                        const MemberView::View& held, ChangeBatch& out) {
  const std::size_t first = Find(from);
  picks_.clear();
  newer_.clear();
  newer_tombstones_.clear();
  candidates_.clear();
  // Newest batch first: a register's message in a newer batch is its newer value (each batch
  // exported every changed register's value at its end), so older ones are left out.
  for (std::size_t j = batches_.size(); j-- > first;) {
    const ChangeBatch& b = *batches_[j];
    batch_keys_.clear();
    batch_tombstones_.clear();
    const auto consider = [&](uint32_t i) {
      const ChangeBatch::Msg& m = b.msgs[i];
      if (m.tombstone) {
        const uint32_t number = protocol::EntityNumber(m.entity);
        if (newer_tombstones_.count(number) != 0) return;
        batch_tombstones_.push_back(number);
      } else {
        const uint64_t key = uint64_t{m.entity} << 32 | m.component;
        if (newer_.count(key) != 0) return;
        batch_keys_.push_back(key);  // an append set's messages share one
      }
      picks_.push_back({static_cast<uint32_t>(j), i});
    };
    for (const uint32_t i : b.everyone) {
      const ChangeBatch::Msg& m = b.msgs[i];
      if (m.tombstone || !index.HasTransform(m.entity) || held.contains(m.entity)) consider(i);
    }
    if (held.size() < b.by_entity.size()) {
      held.ForEach([&](protocol::EntityId e, bool) {
        const auto it = b.by_entity.find(e);
        if (it == b.by_entity.end()) return;
        for (const uint32_t i : it->second) consider(i);
      });
    } else {
      for (const auto& [e, at] : b.by_entity) {
        if (!held.contains(e)) continue;
        for (const uint32_t i : at) consider(i);
      }
    }
    newer_.insert(batch_keys_.begin(), batch_keys_.end());
    newer_tombstones_.insert(batch_tombstones_.begin(), batch_tombstones_.end());
    candidates_.insert(candidates_.end(), b.gained.begin(), b.gained.end());
    candidates_.insert(candidates_.end(), b.lost.begin(), b.lost.end());
  }
  std::sort(picks_.begin(), picks_.end(), [](const Pick& a, const Pick& b) {
    return a.batch != b.batch ? a.batch < b.batch : a.msg < b.msg;
  });
  out.from = from;
  out.to = batches_.back()->to;
  out.stream.clear();
  out.msgs.clear();
  const auto copy = [&](const Pick& p) {
    const ChangeBatch& b = *batches_[p.batch];
    ChangeBatch::Msg m = b.msgs[p.msg];
    const auto begin = b.stream.begin() + static_cast<std::ptrdiff_t>(m.offset);
    m.offset = static_cast<uint32_t>(out.stream.size());
    out.stream.insert(out.stream.end(), begin, begin + static_cast<std::ptrdiff_t>(m.size));
    out.msgs.push_back(m);
  };
  // The store's export order: tombstones first, then the rest, each in change order. A
  // register of an entity purged since (deleted, or retired by a newer version) is not
  // exported any more.
  for (const Pick& p : picks_) {
    if (batches_[p.batch]->msgs[p.msg].tombstone) copy(p);
  }
  for (const Pick& p : picks_) {
    const ChangeBatch::Msg& m = batches_[p.batch]->msgs[p.msg];
    if (!m.tombstone && store.HoldsEntity(m.entity)) copy(p);
  }
  // Gained and lost are not read off the gathered messages (only the held entities' are
  // there): every entity whose Transform register changed in the range was gained or lost in
  // the batch of its change; classified now, as Build from `from` would.
  out.Classify(index, /*transform_changes=*/false);
  std::sort(candidates_.begin(), candidates_.end());
  candidates_.erase(std::unique(candidates_.begin(), candidates_.end()), candidates_.end());
  for (const protocol::EntityId e : candidates_) {
    if (!store.HoldsEntity(e)) continue;
    if (!index.HasTransform(e)) {
      out.lost.push_back(e);
    } else if (index.GainedAt(e) > from) {
      out.gained.push_back(e);
    }
  }
}

void ChangeRing::Clear() {
  batches_.clear();
  bytes_ = 0;
}

}  // namespace scenecrdt::server
