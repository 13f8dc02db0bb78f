#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Turns the JSON of `scenecrdt replay --world` into the plain text the consumers read:
  hash <stateHash>
  count <n>
  <entity> <parent> <parked 0|1> <placeholder 0|1> <16 floats>   (one line per world node)
Floats keep replay's exact text (shortest round-trip decimal, or "NaN", "Infinity",
"-Infinity", "0x7fc00001"-style bits: docs/CLI.md), so the consumers compare bits.

usage: world_text.py REPLAY.json > EXPECTED.txt"""
import json
import sys


def main() -> int:
    if len(sys.argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    with open(sys.argv[1], encoding="utf-8") as f:
        doc = json.load(f, parse_float=str, parse_int=str)
    world = doc["world"]
    print("hash", doc["stateHash"])
    print("count", len(world))
    for node in world:
        flags = ["1" if node[k] else "0" for k in ("parked", "placeholder")]
        floats = [str(v) for v in node["localToWorld"]]
        if len(floats) != 16:
            print(f"world_text.py: entity {node['entity']}: {len(floats)} floats", file=sys.stderr)
            return 1
        print(node["entity"], node["parent"], *flags, *floats)
    return 0


if __name__ == "__main__":
    sys.exit(main())
