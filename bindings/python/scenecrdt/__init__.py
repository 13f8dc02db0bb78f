# SPDX-License-Identifier: Apache-2.0
"""scenecrdt: replicated Decentraland SDK7 scene transforms, from Python (docs/BINDINGS.md).

Runtime    a replica of one scene: apply DCL CRDT bytes, update, read world matrices
           (column-major 16-tuples, or numpy arrays), write Transforms (DCL bytes to send).
Client     a networked replica joined to a `scenecrdt serve` (bots, test tools).
decode     DCL bytes -> list of dicts, the objects of `scenecrdt decode`'s JSON lines.
encode     list of dicts -> DCL bytes, as `scenecrdt encode` (strict: unknown keys refused).
testing    Hypothesis strategies and assert_converges (imports hypothesis).

Every call goes through the C ABI (libscenecrdt.so.1, docs/C-ABI.md); decode and encode use
the command line's own JSON code. Errors: Error (RuntimeError) with `status`/`status_name`,
DecodeError and ArgumentError (also ValueError), EncodeError (ValueError, with `line`),
KeyError for an entity that is not in the scene."""
import json
import math

from ._errors import ArgumentError, DecodeError, EncodeError, Error
from ._native import ABI_VERSION, NO_SENDER_TIME, Client, Runtime, now_us
from . import _native

__all__ = ["ABI_VERSION", "NO_SENDER_TIME", "ArgumentError", "Client", "DecodeError",
           "EncodeError", "Error", "Runtime", "decode", "encode", "now_us"]

# JSON has no NaN or infinities: the CLI writes them as these strings (docs/CLI.md).
_NON_FINITE = {math.inf: "Infinity", -math.inf: "-Infinity"}


def decode(data):
    """The messages of a DCL CRDT stream as dicts, exactly the JSON objects `scenecrdt decode`
    prints (floats as Python floats, non-finite ones as the CLI's strings). A malformed stream
    raises DecodeError (a ValueError) whose `offset` is the faulty message's byte offset."""
    text = _native.decode_json_lines(bytes(data))
    return [json.loads(line, parse_int=_parse_int) for line in text.splitlines()]


def _parse_int(text):
    # The CLI prints a float32 -0 as "-0", which json would read as the integer 0.
    return -0.0 if text == "-0" else int(text)


def _json_safe(value):
    if isinstance(value, float) and not math.isfinite(value):
        return "NaN" if math.isnan(value) else _NON_FINITE[value]
    if isinstance(value, dict):
        return {k: _json_safe(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_json_safe(v) for v in value]
    return value


def encode(messages):
    """DCL bytes for a list of message dicts (decode's objects, or the reference "ops" form
    of docs/CLI.md). Refusals raise EncodeError (a ValueError) naming the message: `index` is
    its position in the list, and the text is the CLI's (`unknown key "postion" ...`)."""
    lines = []
    for i, m in enumerate(messages):
        if not isinstance(m, dict):
            error = EncodeError(f"message {i} (line {i + 1}): expected a dict, got "
                                f"{type(m).__name__}")
            error.line, error.index = i + 1, i
            raise error
        lines.append(json.dumps(_json_safe(m), separators=(",", ":")))
    if not lines:
        return b""
    return _native.encode_json_lines("\n".join(lines) + "\n")
