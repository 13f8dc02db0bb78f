#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Writes a seeded random `scenecrdt encode` ops document (docs/CLI.md) to stdout: Transform
PUTs with reparents (loops of two and three entities included), parents that never get a Transform (placeholders),
DELETE_COMPONENTs, DELETE_ENTITYs, versioned entities, equal-timestamp conflicts, non-uniform
scales, unnormalised rotations, and odd floats (negative zero, subnormals, huge values).

usage: gen_ops.py SEED [COUNT]"""
import json
import random
import sys


def main() -> int:
    if len(sys.argv) not in (2, 3):
        print(__doc__, file=sys.stderr)
        return 2
    seed = int(sys.argv[1])
    count = int(sys.argv[2]) if len(sys.argv) == 3 else 400
    rng = random.Random(seed)
    numbers = list(range(512, 512 + 20))
    odd_floats = [-0.0, 1e-40, 3.0e38, -2.5e-7, 0.1, 1.0 / 3.0]

    def entity():
        number = rng.choice(numbers)
        # Newer versions retire older ones: kept to a few numbers, so loops survive.
        if number >= 528 and rng.random() < 0.3:
            return {"number": number, "version": rng.randint(1, 2)}
        return number

    def value(scale):
        if rng.random() < 0.03:
            return rng.choice(odd_floats)
        return round(rng.uniform(-scale, scale), rng.randint(0, 7))

    ops = []
    for _ in range(count):
        kind = rng.random()
        timestamp = rng.randint(0, 10)  # small: ties between different data are common
        if kind < 0.72:
            op = {"op": "put", "entity": entity(), "timestamp": timestamp,
                  "position": [value(5), value(5), value(5)],
                  "rotation": [value(1), value(1), value(1), value(1) + 1.5],
                  "scale": [value(1) + 1.5, value(1) + 1.5, 1.0 if rng.random() < 0.5 else 2.0]}
            parent = rng.random()
            if parent < 0.2:
                op["parent"] = 0
            elif parent < 0.9:
                op["parent"] = rng.choice(numbers)  # loops form and break
            else:
                op["parent"] = rng.choice([700, 701, {"number": 520, "version": 1}])
            ops.append(op)
        elif kind < 0.82:
            ops.append({"op": "delete", "entity": entity(), "timestamp": timestamp})
        elif kind < 0.84:
            ops.append({"op": "delete_entity", "entity": entity()})
        elif kind < 0.92:
            # A parenting loop of two or three entities (parked at root while it lasts).
            members = rng.sample(numbers[:8], rng.randint(2, 3))
            for i, member in enumerate(members):
                ops.append({"op": "put", "entity": member, "timestamp": rng.randint(6, 14),
                            "position": [value(2), 1.0, 0.0],
                            "parent": members[(i + 1) % len(members)]})
        else:
            # A conflict: the same key and timestamp twice with different data.
            e = entity()
            for x in (1.0, 2.0):
                ops.append({"op": "put", "entity": e, "timestamp": 11 + seed % 3,
                            "position": [x, -x, 0.5 * x], "parent": rng.choice([0] + numbers)})
    json.dump({"comment": f"gen_ops.py seed {seed}", "ops": ops}, sys.stdout)
    sys.stdout.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
