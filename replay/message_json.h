// SPDX-License-Identifier: Apache-2.0
// Owns the JSON-lines form of DCL CRDT messages used by `decode` and `encode`
// (docs/CLI.md): one object per message, fields the type does not carry omitted, Transform
// PUTs also shown decoded. Reading is strict: a key a message type does not use, a missing
// field or a value of the wrong kind is refused with a sentence that names it.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "scenecrdt/json/reader.h"
#include "scenecrdt/protocol/crdt_message.h"
#include "scenecrdt/protocol/result.h"
#include "scenecrdt/protocol/transform.h"

namespace scenecrdt::replay {

// Appends `"position":[x,y,z],"rotation":[x,y,z,w],"scale":[x,y,z],"parent":U32` (floats in
// their shortest round-trip form): the Transform fields of `decode`; `replay`'s state writer
// (replay/state_json.cc) writes the same text in place.
void AppendTransformJsonFields(const protocol::Transform& t, std::string& out);

// Appends one JSON object (no newline) describing `m`.
void AppendMessageJson(const protocol::CrdtMessage& m, std::string& out);

// Encodes the message described by `obj` and appends its bytes to `out`. Accepts the
// `decode` format and the reference "ops" format (op/entity objects/top-level Transform
// fields): see docs/CLI.md. On refusal the error is kParse and `problem` says what is wrong,
// naming the key (`unknown key "postion" in a message of type put (accepted keys: ...)`,
// `missing timestamp: ...`).
Result<void> EncodeMessageJson(const json::Json& obj, std::vector<uint8_t>& out,
                               std::string& problem);

// Why an `encode` input was refused: the 1-based line of the message (or of the JSON syntax
// error) and the sentence of EncodeMessageJson or the JSON reader.
struct EncodeProblem {
  std::size_t line = 0;
  std::string message;
};

// Encodes a whole `encode` input: JSON lines, a JSON array of messages, or an object with an
// "ops" array (and optionally a "comment"). On refusal the error is kParse and `problem` is
// filled.
Result<std::vector<uint8_t>> EncodeJsonText(std::string_view text, EncodeProblem& problem);

}  // namespace scenecrdt::replay
