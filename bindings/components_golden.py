#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Turns the golden @dcl/ecs component expectations (tests/data/components/ecs_components.json,
docs/COMPONENTS.md) into lines the C# test reads without a JSON parser, one block per frame:
  frame <offset> <length>
  value <entity> <component> <hex>          (one per LWW value; "-" for an empty payload)
  grow <entity> <component> <hex>,<hex>...  (a grow-only set, values sorted)
  changed|added|removed <entity>:<component> ...
usage: components_golden.py ECS_COMPONENTS.json > GOLDEN.txt"""
import json
import sys


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    with open(sys.argv[1], encoding="utf-8") as f:
        golden = json.load(f)
    out = []
    for frame in golden["frames"]:
        out.append(f"frame {frame['offset']} {frame['length']}")
        for key, value in sorted(frame["values"].items()):
            entity, component = key.split(":")
            out.append(f"value {entity} {component} {value or '-'}")
        for key, values in sorted(frame["growOnly"].items()):
            entity, component = key.split(":")
            out.append(f"grow {entity} {component} {','.join(values)}")
        for name in ("changed", "added", "removed"):
            out.append(" ".join([name] + [f"{e}:{c}" for e, c in frame[name]]))
    sys.stdout.write("\n".join(out) + "\n")


if __name__ == "__main__":
    main()
