// SPDX-License-Identifier: Apache-2.0
// Owns the deterministic network simulator behind `converge --replicas K`: K replica runtimes
// and one server store exchange a set of messages under a seeded schedule (per-link delays
// that reorder, duplicates, drops with at-least-once redelivery, partitions healed by resume,
// late joiners that start from a snapshot, render frames at random times). At the end every
// replica must hold the server's state hash, the in-order state hash, and bitwise-equal world
// matrices.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "scenecrdt/protocol/crdt_message.h"

namespace scenecrdt::replay {

struct SimOptions {
  uint32_t replicas = 3;
  double duplicate = 0.1;  // a delivery also arrives a second time
  double drop = 0.1;       // a delivery is lost, then redelivered later (at-least-once)
  double partition = 0.2;  // per replica: cut off for a while, then resumes
  double late_join = 0.2;  // per replica (not the first): joins late, from a snapshot
  double frame = 0.2;      // after a delivery, the replica renders a frame (Update)
};

struct SimResult {
  bool converged = true;
  std::string failure;  // what differed, when !converged
  uint64_t deliveries = 0;
};

// Runs one schedule of `messages` (indices `subset` of it, in origination order) for `seed`.
SimResult RunReplicaSchedule(const std::vector<protocol::CrdtMessage>& messages,
                             const std::vector<uint32_t>& subset, uint64_t seed,
                             const SimOptions& options);

}  // namespace scenecrdt::replay
