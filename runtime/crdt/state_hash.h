// SPDX-License-Identifier: Apache-2.0
// Owns the canonical state hash of a CRDT store (docs/CRDT.md "Canonical state hash"): SHA-256
// over a canonical serialisation, equal iff the states are equal whatever the arrival order or
// memory layout, and the same content as readable text for diffs. CrdtStore::StateHash and
// CrdtStore::CanonicalText call these.
#pragma once

#include <string>

#include "scenecrdt/runtime/sha256.h"

namespace scenecrdt::runtime {
class CrdtStore;
}  // namespace scenecrdt::runtime

namespace scenecrdt::runtime::internal {

Sha256::Digest StateHash(const CrdtStore& store);
std::string CanonicalText(const CrdtStore& store);

}  // namespace scenecrdt::runtime::internal
