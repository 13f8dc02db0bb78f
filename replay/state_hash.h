// SPDX-License-Identifier: Apache-2.0
// Owns the command line's computation of the canonical state hash (docs/CRDT.md "Canonical
// state hash"): the same bytes as CrdtStore::StateHash, hashed with OpenSSL's SHA-256 (which
// uses the CPU's SHA instructions; small states keep the runtime's, which starts faster) over
// registers the caller has already sorted, so printing a state sorts it once.
// tests/tools/state_json_test.cc checks it against CrdtStore::StateHashHex.
#pragma once

#include <span>
#include <string>
#include <vector>

#include "scenecrdt/runtime/crdt_store.h"

namespace scenecrdt::replay {

// Every register of `store`, sorted by (component, entity) as CrdtStore::SortedRegisters:
// a store holding only Transforms is sorted by a radix sort of (entity, slot) pairs.
std::vector<runtime::RegisterView> SortedRegisterViews(const runtime::CrdtStore& store);

// The lowercase hex SHA-256 of the canonical state: `registers` must be
// SortedRegisterViews(store), `sets` store.SortedAppendSets(). Equal to store.StateHashHex().
std::string CanonicalStateHashHex(const runtime::CrdtStore& store,
                                  std::span<const runtime::RegisterView> registers,
                                  std::span<const runtime::CrdtStore::AppendSetView> sets);

}  // namespace scenecrdt::replay
