// SPDX-License-Identifier: Apache-2.0
// Owns the piece list's splits, merges and moves and its order-maintenance labels (see
// piece_sequence.h and docs/PROPAGATION.md, "Layout").
#include "scenecrdt/runtime/transform/piece_sequence.h"

#include <algorithm>

namespace scenecrdt::runtime::internal {

PieceSequence::PieceSequence() { Reset(0); }

void PieceSequence::Reset(uint32_t n) {
  piece_of_pos_.assign(n + 1, 0);
  pieces_.assign(1, Piece{});
  free_pieces_.clear();
  num_pieces_ = 0;
  if (n > 0) {
    const uint32_t p = NewPiece(1, n + 1);
    LinkRaw(0, p, p);
  }
}

// ---- Edits ----

void PieceSequence::AppendPosition(uint32_t pos) {
  piece_of_pos_.push_back(0);
  const uint32_t piece = NewPiece(pos, pos + 1);
  LinkAfter(pieces_[0].prev, piece, piece);
}

void PieceSequence::MoveToEnd(uint32_t pos, uint32_t count) {
  uint32_t first, last;
  CutRange(pos, count, first, last);
  LinkAfter(pieces_[0].prev, first, last);
}

void PieceSequence::MoveAfter(uint32_t pos, uint32_t count, uint32_t anchor) {
  uint32_t first, last;
  CutRange(pos, count, first, last);
  LinkAfter(SplitAfter(anchor), first, last);
}

void PieceSequence::Remove(uint32_t pos) {
  uint32_t first, last;
  CutRange(pos, 1, first, last);
  FreePiece(first);
}

// ---- Pieces ----

uint32_t PieceSequence::NewPiece(uint32_t begin, uint32_t end) {
  uint32_t id;
  if (!free_pieces_.empty()) {
    id = free_pieces_.back();
    free_pieces_.pop_back();
  } else {
    id = static_cast<uint32_t>(pieces_.size());
    pieces_.push_back(Piece{});
  }
  pieces_[id] = Piece{begin, end, 0, 0};
  if (label_.size() < pieces_.size()) label_.resize(pieces_.size());
  Relabel(begin, end, id);
  ++num_pieces_;
  return id;
}

void PieceSequence::FreePiece(uint32_t p) {
  free_pieces_.push_back(p);
  --num_pieces_;
}

void PieceSequence::Relabel(uint32_t begin, uint32_t end, uint32_t piece) {
  std::fill(piece_of_pos_.begin() + begin, piece_of_pos_.begin() + end, piece);
  work_ += (end - begin) / 16;
}

void PieceSequence::Unlink(uint32_t first, uint32_t last) {
  const uint32_t prev = pieces_[first].prev;
  const uint32_t next = pieces_[last].next;
  pieces_[prev].next = next;
  pieces_[next].prev = prev;
}

void PieceSequence::LinkRaw(uint32_t anchor, uint32_t first, uint32_t last) {
  const uint32_t next = pieces_[anchor].next;
  pieces_[anchor].next = first;
  pieces_[first].prev = anchor;
  pieces_[last].next = next;
  pieces_[next].prev = last;
  AssignLabels(first, last);
}

void PieceSequence::AssignLabels(uint32_t first, uint32_t last) {
  // Order maintenance: labels increase along the sequence, so comparing two positions is
  // O(1) however fragmented the layout is. A linked run takes labels spread over the gap
  // between its neighbours' (appends at the end advance by at most 2^32, so the detached
  // subtrees an update parks there do not use the tail up); when the gap is too small, a
  // window around it is relabelled (RelabelWindow).
  const uint32_t left = pieces_[first].prev;
  const uint32_t right = pieces_[last].next;
  uint64_t k = 1;
  for (uint32_t q = first; q != last; q = pieces_[q].next) ++k;
  const uint64_t lo = left == 0 ? 0 : label_[left];
  const uint64_t hi = right == 0 ? ~uint64_t{0} : label_[right];
  uint64_t step = (hi - lo) / (k + 1);
  if (step == 0) {
    RelabelWindow(left, right, k);
    return;
  }
  if (right == 0) step = std::min(step, uint64_t{1} << 32);
  uint64_t label = lo;
  for (uint32_t q = first;; q = pieces_[q].next) {
    label += step;
    label_[q] = label;
    if (q == last) break;
  }
}

void PieceSequence::RelabelWindow(uint32_t left, uint32_t right, uint64_t k) {
  // Bender et al.'s order-maintenance relabelling: grow an aligned label range of 2^i around
  // the insertion point until it holds at most (4/3)^i pieces, then spread them evenly in it.
  // Amortised O(log pieces) relabels per insertion, also for repeated insertions at one spot
  // (children toggling between two parents).
  const uint64_t center = left == 0 ? 0 : label_[left];
  uint32_t l = left;   // leftmost piece in the window (0: the window starts at the front)
  uint32_t r = right;  // first piece right of the window (0: the end)
  uint64_t count = k + (left != 0 ? 1 : 0);
  double max_items = 1.0;
  for (int i = 1; i <= 64; ++i) {
    max_items *= 4.0 / 3.0;
    const uint64_t mask = i == 64 ? ~uint64_t{0} : (uint64_t{1} << i) - 1;
    const uint64_t base = center & ~mask;
    while (l != 0 && pieces_[l].prev != 0 && label_[pieces_[l].prev] >= base) {
      l = pieces_[l].prev;
      ++count;
      ++work_;
    }
    while (r != 0 && label_[r] - base <= mask) {
      r = pieces_[r].next;
      ++count;
      ++work_;
    }
    if (i < 64 && (static_cast<double>(count) > max_items || count >= mask)) continue;
    // Spread the window's pieces over [base + step, base + mask].
    const uint64_t step = mask / (count + 1);
    uint64_t label = base;
    for (uint32_t q = l == 0 ? pieces_[0].next : l; q != r; q = pieces_[q].next) {
      label += step;
      label_[q] = label;
    }
    ++relabels_;
    return;
  }
}

void PieceSequence::LinkAfter(uint32_t anchor, uint32_t first, uint32_t last) {
  LinkRaw(anchor, first, last);
  TryMerge(last);
  TryMerge(anchor);
}

void PieceSequence::TryMerge(uint32_t a) {
  if (a == 0) return;
  const uint32_t b = pieces_[a].next;
  if (b == 0 || pieces_[a].end != pieces_[b].begin) return;
  const uint32_t len_a = pieces_[a].end - pieces_[a].begin;
  const uint32_t len_b = pieces_[b].end - pieces_[b].begin;
  if (len_a >= len_b) {
    Relabel(pieces_[b].begin, pieces_[b].end, a);
    pieces_[a].end = pieces_[b].end;
    Unlink(b, b);
    FreePiece(b);
  } else {
    Relabel(pieces_[a].begin, pieces_[a].end, b);
    pieces_[b].begin = pieces_[a].begin;
    Unlink(a, a);
    FreePiece(a);
  }
}

uint32_t PieceSequence::SplitBefore(uint32_t pos) {
  const uint32_t p = piece_of_pos_[pos];
  const uint32_t begin = pieces_[p].begin;
  const uint32_t end = pieces_[p].end;
  if (begin == pos) return p;
  // Relabel the smaller side: a split costs min(left, right).
  if (pos - begin <= end - pos) {
    const uint32_t n = NewPiece(begin, pos);
    LinkRaw(pieces_[p].prev, n, n);
    pieces_[p].begin = pos;
    return p;
  }
  const uint32_t n = NewPiece(pos, end);
  LinkRaw(p, n, n);
  pieces_[p].end = pos;
  return n;
}

uint32_t PieceSequence::SplitAfter(uint32_t pos) {
  const uint32_t p = piece_of_pos_[pos];
  if (pieces_[p].end == pos + 1) return p;
  SplitBefore(pos + 1);
  return piece_of_pos_[pos];
}

void PieceSequence::CutRange(uint32_t pos, uint32_t count, uint32_t& first, uint32_t& last) {
  SplitBefore(pos);
  uint32_t remaining = count;
  uint32_t q = piece_of_pos_[pos];
  for (;;) {
    const uint32_t len = pieces_[q].end - pieces_[q].begin;
    if (remaining <= len) break;
    remaining -= len;
    q = pieces_[q].next;
    ++work_;
  }
  const uint32_t q_begin = pieces_[q].begin;
  if (remaining < pieces_[q].end - q_begin) SplitBefore(q_begin + remaining);
  first = piece_of_pos_[pos];
  last = piece_of_pos_[q_begin];
  Unlink(first, last);
}

// ---- Reads ----

SequenceKey PieceSequence::KeyOf(uint32_t pos) const {
  const uint32_t p = PieceOf(pos);
  return SequenceKey{label_[p], pos - pieces_[p].begin};
}

void PieceSequence::Walk(uint32_t pos, uint32_t count, bool past_end, uint32_t& piece,
                         uint32_t& at) const {
  uint32_t p = PieceOf(pos);
  at = pos;
  uint32_t remaining = count;
  // A walk that stops exactly at a piece's end either stays there (past_end: a key just
  // past the last position) or moves on to the next piece's first position.
  while (past_end ? remaining > pieces_[p].end - at : remaining >= pieces_[p].end - at) {
    remaining -= pieces_[p].end - at;
    p = pieces_[p].next;
    at = pieces_[p].begin;
  }
  piece = p;
  at += remaining;
}

SequenceKey PieceSequence::KeyAfter(uint32_t pos, uint32_t count) const {
  uint32_t p, at;
  Walk(pos, count, true, p, at);
  return SequenceKey{label_[p], at - pieces_[p].begin};
}

uint32_t PieceSequence::PositionAt(uint32_t pos, uint32_t offset) const {
  uint32_t p, at;
  Walk(pos, offset, false, p, at);
  return at;
}

int64_t PieceSequence::Check(std::span<uint32_t> seq_index) const {
  uint32_t index = 0;
  std::size_t pieces = 0;
  uint64_t label = 0;
  for (uint32_t p = pieces_[0].next; p != 0; p = pieces_[p].next) {
    ++pieces;
    if (pieces_[pieces_[p].next].prev != p) return -1;
    if (label_[p] <= label) return -1;  // labels increase along the sequence
    label = label_[p];
    if (pieces_[p].begin >= pieces_[p].end || pieces_[p].end > seq_index.size()) return -1;
    for (uint32_t i = pieces_[p].begin; i < pieces_[p].end; ++i) {
      if (piece_of_pos_[i] != p) return -1;
      seq_index[i] = index++;
    }
  }
  if (pieces != num_pieces_) return -1;
  return index;
}

}  // namespace scenecrdt::runtime::internal
