// SPDX-License-Identifier: Apache-2.0
// Owns the JSON document describing a CRDT state, printed by `replay` and `pull`
// (docs/CLI.md): transforms, deleted transforms, other components, append sets, entity
// states and the canonical state hash.
#pragma once

#include <span>
#include <string>

#include "scenecrdt/replay/chunked_text.h"
#include "scenecrdt/runtime/crdt_store.h"

namespace scenecrdt::replay {

// Writes the state object (no trailing newline, no closing brace: callers may add members
// such as "world" and then close it with '}'). `entities` lists the ids to report states for.
// Streams: memory is the sorted register list (48 bytes per register), not the text.
void WriteStateJsonBody(const runtime::CrdtStore& store,
                        std::span<const protocol::EntityId> entities, ChunkedText& out);

// The same text appended to a string.
void AppendStateJsonBody(const runtime::CrdtStore& store,
                         std::span<const protocol::EntityId> entities, std::string& out);

}  // namespace scenecrdt::replay
