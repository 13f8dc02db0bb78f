// SPDX-License-Identifier: Apache-2.0
// Owns the public knobs and figures of propagation: LayoutPolicy (when the preorder layout is
// patched, compacted or rebuilt, when an update streams or splits across threads, which kernel
// instruction set runs) and PropagationStats (what the last Update did). TransformSystem takes
// the first and reports the second; the machinery behind them is internal
// (runtime/transform/propagation.h, docs/PROPAGATION.md).
#pragma once

#include <cstddef>
#include <cstdint>

namespace scenecrdt::runtime {

// Instruction set of the block kernels. Every choice gives bit-identical world matrices.
enum class KernelIsa : uint8_t {
  kAuto = 0,  // the best the CPU supports
  kSse2 = 1,  // baseline x86-64 (or portable C++ elsewhere)
  kAvx2 = 2,  // AVX2, chosen at run time (the build does not need -mavx2)
};

// When the layout is rebuilt from scratch instead of patched (defaults suit 1 M entities).
struct LayoutPolicy {
  // Rebuild when one update changes the structure of more than
  // max(min_rebuild_changes, live / rebuild_divisor) slots.
  std::size_t min_rebuild_changes = 4096;
  uint32_t rebuild_divisor = 8;
  // Compact (copy the sequence out in order) when pieces > min_pieces + live /
  // min_piece_length, or dead positions > min_pieces + live / 2 (hard limits); or when the
  // piece changes that computes walked since the last compaction (plus those of a full sweep
  // about to run) exceed min_pieces + live / compact_debt_divisor: fragmentation costs only
  // when computes cross pieces, so a scene that reparents but rarely sweeps rarely compacts.
  std::size_t min_pieces = 256;
  uint32_t min_piece_length = 4;
  uint32_t compact_debt_divisor = 4;
  // SceneGraph: a batch of more than this many edge changes (and more than nodes / 8)
  // recomputes every loop at once instead of walking per edge.
  std::size_t min_bulk_graph_changes = 1024;
  // Updates computing fewer entities than this stay on one thread; larger ones use up to
  // UpdateOptions::threads threads with at least min_parallel_entities / 2 entities each.
  uint32_t min_parallel_entities = 16384;
  // Updates of scenes with at least this many nodes, or computing that many, stream
  // (ancestor ring + non-temporal stores): beyond the caches, writing around the cache saves
  // the read-for-ownership of every destination line, for a full sweep as for scattered
  // dirty subtrees. Smaller scenes keep their results in cache.
  uint32_t min_streaming_entities = 1u << 15;
  // Entries of the streaming ancestor ring (rounded up to a power of two, >= 2). A parent whose
  // entry was overwritten by a deeper entity is read from the world array instead.
  uint32_t stream_stack_depth = 1024;
  // Kernel instruction set (kAuto: the best the CPU has).
  KernelIsa kernel_isa = KernelIsa::kAuto;
};

struct PropagationStats {
  std::size_t positions = 0;    // size of the world array (root + live + dead)
  std::size_t live = 0;         // nodes laid out
  std::size_t dead = 0;         // positions no longer used (until the next rebuild)
  std::size_t pieces = 0;       // pieces in the sequence
  std::size_t rebuilds = 0;     // layout rebuilds (DFS over the graph) so far
  std::size_t compactions = 0;  // defragmentations (sequence copied out in order) so far
  std::size_t relabels = 0;     // order-label windows relabelled so far
  std::size_t computed = 0;     // world matrices computed by the last Update
  bool last_full_sweep = false;
  bool last_rebuild = false;
  bool last_parallel = false;  // the last Update ran on more than one thread
  std::size_t last_parts = 1;  // threads the last Update's compute ran on
  bool last_streaming = false;
  const char* kernel = "";  // instruction set of the block kernels in use
};

}  // namespace scenecrdt::runtime
