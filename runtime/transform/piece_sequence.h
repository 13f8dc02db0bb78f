// SPDX-License-Identifier: Apache-2.0
// Owns PieceSequence: the preorder sequence of positions as a doubly linked list of pieces,
// each a contiguous run of positions, with order-maintenance labels so that comparing two
// positions in sequence order is O(1) however fragmented the sequence is (docs/PROPAGATION.md,
// "Layout"). A subtree is the range [x, x + size) of the sequence; moving one splits and
// relinks pieces, and no position's data moves. Positions are owned by PreorderLayout; this
// class only orders them. Position 0 is the root and never in the sequence.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

namespace scenecrdt::runtime::internal {

// Position in sequence order: the piece's order label, then the offset in the piece.
struct SequenceKey {
  uint64_t label = 0;
  uint32_t offset = 0;
  friend bool operator<(const SequenceKey& a, const SequenceKey& b) {
    return a.label != b.label ? a.label < b.label : a.offset < b.offset;
  }
};

// A run of positions [begin, end); prev/next link the pieces in sequence order (0: the
// sentinel, i.e. the front or the end).
struct Piece {
  uint32_t begin = 0, end = 0, prev = 0, next = 0;
};

class PieceSequence {
 public:
  PieceSequence();

  // ---- Whole sequence ----
  // The sequence becomes positions [1, n + 1) in order, in one piece.
  void Reset(uint32_t n);

  // ---- Edits (each adds its cost to work()) ----
  // Appends the new position `pos` (the next unused one) at the end, as a piece of its own.
  void AppendPosition(uint32_t pos);
  // Moves the sequence range [pos, pos + count) to the end of the sequence.
  void MoveToEnd(uint32_t pos, uint32_t count);
  // Moves the sequence range [pos, pos + count) to right after position `anchor` (outside
  // the range).
  void MoveAfter(uint32_t pos, uint32_t count, uint32_t anchor);
  // Takes position `pos` out of the sequence.
  void Remove(uint32_t pos);

  // ---- Reads ----
  std::size_t num_pieces() const { return num_pieces_; }
  // The piece holding `pos` (no lookup when the sequence is one piece).
  uint32_t PieceOf(uint32_t pos) const {
    return num_pieces_ == 1 ? pieces_[0].next : piece_of_pos_[pos];
  }
  const Piece& piece(uint32_t p) const { return pieces_[p]; }
  // First position of the sequence (meaningful when it is not empty).
  uint32_t first_position() const { return pieces_[pieces_[0].next].begin; }
  // Address of pos's piece entry (prefetch hints only).
  const uint32_t* piece_entry(uint32_t pos) const { return &piece_of_pos_[pos]; }
  SequenceKey KeyOf(uint32_t pos) const;
  // The key just past the last of the `count` positions that start at `pos`.
  SequenceKey KeyAfter(uint32_t pos, uint32_t count) const;
  // The position `offset` steps after `pos` in sequence order (offset < positions left).
  uint32_t PositionAt(uint32_t pos, uint32_t offset) const;
  // Calls f(begin, end) for every piece, in sequence order.
  template <class F>
  void ForEachRun(F&& f) const;

  // ---- Cost accounting and checks ----
  // Relabelled positions / 16 + pieces walked, since construction (budgets of PreorderLayout).
  uint64_t work() const { return work_; }
  std::size_t relabels() const { return relabels_; }
  // Checks links, labels and piece_of_pos; writes each position's index in sequence order
  // into seq_index (sized to the positions) and returns the number of positions, or -1.
  int64_t Check(std::span<uint32_t> seq_index) const;

 private:
  uint32_t NewPiece(uint32_t begin, uint32_t end);
  void FreePiece(uint32_t p);
  void Unlink(uint32_t first, uint32_t last);
  void LinkRaw(uint32_t anchor, uint32_t first, uint32_t last);
  void AssignLabels(uint32_t first, uint32_t last);
  // Relabels a window around the gap between `left` and `right` (0: the ends) that has to
  // take `k` more pieces.
  void RelabelWindow(uint32_t left, uint32_t right, uint64_t k);
  // LinkRaw, then merges with the neighbours when contiguous in memory.
  void LinkAfter(uint32_t anchor, uint32_t first, uint32_t last);
  void Relabel(uint32_t begin, uint32_t end, uint32_t piece);
  // Ensures a piece starts at `pos`; returns that piece.
  uint32_t SplitBefore(uint32_t pos);
  // Ensures a piece ends right after `pos`; returns that piece.
  uint32_t SplitAfter(uint32_t pos);
  void TryMerge(uint32_t a);  // merges a with its successor when contiguous in memory
  // Cuts the sequence range [pos, pos + count) out; returns its first and last pieces.
  void CutRange(uint32_t pos, uint32_t count, uint32_t& first, uint32_t& last);
  // Walks `count` positions from `pos`: the piece and position where the walk stops. With
  // `past_end`, a walk that ends exactly at a piece's end stays in that piece (at its end).
  void Walk(uint32_t pos, uint32_t count, bool past_end, uint32_t& piece, uint32_t& at) const;

  std::vector<Piece> pieces_;  // pieces_[0] is the sentinel of the circular list
  std::vector<uint32_t> free_pieces_;
  std::vector<uint64_t> label_;         // per piece, increasing along the sequence
  std::vector<uint32_t> piece_of_pos_;  // per position (0 for the root and dead positions)
  std::size_t num_pieces_ = 0;
  uint64_t work_ = 0;
  std::size_t relabels_ = 0;
};

template <class F>
void PieceSequence::ForEachRun(F&& f) const {
  for (uint32_t p = pieces_[0].next; p != 0; p = pieces_[p].next)
    f(pieces_[p].begin, pieces_[p].end);
}

}  // namespace scenecrdt::runtime::internal
