// SPDX-License-Identifier: Apache-2.0
// Owns the JSON-lines form of DCL CRDT messages used by `decode` and `encode`
// (docs/CLI.md): one object per message, fields the type does not carry omitted, Transform
// PUTs also shown decoded.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "scenecrdt/protocol/crdt_message.h"
#include "scenecrdt/protocol/json.h"
#include "scenecrdt/protocol/result.h"
#include "scenecrdt/protocol/transform.h"

namespace scenecrdt::cli {

// Appends `"position":[x,y,z],"rotation":[x,y,z,w],"scale":[x,y,z],"parent":U32` (floats in
// their shortest round-trip form): the Transform fields of `decode` and `replay`.
void AppendTransformJsonFields(const protocol::Transform& t, std::string& out);

// Appends one JSON object (no newline) describing `m`.
void AppendMessageJson(const protocol::CrdtMessage& m, std::string& out);

// Encodes the message described by `obj` and appends its bytes to `out`. Accepts the
// `decode` format and the reference "ops" format (op/entity objects/top-level Transform
// fields): see docs/CLI.md. Errors are kParse with a reason.
Result<void> EncodeMessageJson(const protocol::JsonValue& obj, std::vector<uint8_t>& out);

// Parses a whole `encode` input: JSON lines, a JSON array of messages, or an object with an
// "ops" array. On error, `error_line` (1-based, 0 when unknown) tells where.
Result<std::vector<uint8_t>> EncodeJsonText(std::string_view text, std::size_t* error_line);

}  // namespace scenecrdt::cli
