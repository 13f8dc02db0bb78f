#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Turns the JSON of `scenecrdt replay --world` into exact bits for the binding tests:
  hash <stateHash>
  count <n>
  <entity> <parent> <parked 0|1> <placeholder 0|1> <16 float32 bit patterns, 8 hex digits>
Replay prints floats as shortest round-trip decimals, "NaN"/"Infinity"/"-Infinity" or
"0x7fc00001"-style bits (docs/CLI.md); each is rounded to float32 exactly here, so the C# and
Python tests compare bits without trusting a runtime's decimal parser.

usage: world_bits.py REPLAY.json > EXPECTED.txt
       world_bits.py --each A.json B.json ...   (writes A.expected, B.expected beside them)
       (or import: float32_bits, load_world)"""
import json
import struct
import sys
from fractions import Fraction


def float32_bits(text):
    """The float32 bits of one of replay's float texts, rounded exactly (ties to even)."""
    special = {"NaN": 0x7FC00000, "Infinity": 0x7F800000, "-Infinity": 0xFF800000}
    if text in special:
        return special[text]
    if text.startswith("0x"):
        return int(text, 16)
    exact = Fraction(text)
    if exact == 0:
        return 0x80000000 if text.startswith("-") else 0
    guess = struct.unpack("<I", struct.pack("<f", float(text)))[0]
    # float(text) rounds twice (to double, then to float32): keep the float32 nearest to the
    # exact value among the guess and its neighbours.
    best = None
    for bits in (guess - 1, guess, guess + 1):
        if bits < 0 or bits > 0xFFFFFFFF or (bits & 0x7F800000) == 0x7F800000:
            continue
        value = Fraction(struct.unpack("<f", struct.pack("<I", bits))[0])
        key = (abs(value - exact), bits & 1)
        if best is None or key < best[0]:
            best = (key, bits)
    return best[1]


def load_world(path):
    """(state hash, [(entity, parent, parked, placeholder, [16 bit patterns])]) of a file."""
    with open(path, encoding="utf-8") as f:
        doc = json.load(f, parse_float=str, parse_int=str)
    nodes = []
    for node in doc["world"]:
        bits = [float32_bits(str(v)) for v in node["localToWorld"]]
        if len(bits) != 16:
            raise ValueError(f"entity {node['entity']}: {len(bits)} floats")
        nodes.append((int(node["entity"]), int(node["parent"]), bool(node["parked"]),
                      bool(node["placeholder"]), bits))
    return doc["stateHash"], nodes


def write_text(path, out):
    state_hash, nodes = load_world(path)
    print("hash", state_hash, file=out)
    print("count", len(nodes), file=out)
    for entity, parent, parked, placeholder, bits in nodes:
        print(entity, parent, int(parked), int(placeholder), *(f"{b:08x}" for b in bits),
              file=out)


def main() -> int:
    if len(sys.argv) == 2 and sys.argv[1] != "--each":
        write_text(sys.argv[1], sys.stdout)
        return 0
    if len(sys.argv) < 3 or sys.argv[1] != "--each":
        print(__doc__, file=sys.stderr)
        return 2
    for path in sys.argv[2:]:
        base = path[:-len(".json")] if path.endswith(".json") else path
        with open(base + ".expected", "w", encoding="utf-8") as out:
            write_text(path, out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
