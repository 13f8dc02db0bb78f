#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The Python side of the binding overhead figures (docs/BINDINGS.md "Overhead"): the median
time of one Runtime.world_array() (a copy of every entity's id and matrix into new numpy
arrays, one C ABI call) and, for scale, of world_matrix() per entity.

usage: PYTHONPATH=<build>/bindings/python copy_world.py STREAM.dcl CALLS"""
import sys
import time

import scenecrdt


def main():
    if len(sys.argv) != 3:
        raise SystemExit(__doc__)
    rt = scenecrdt.Runtime()
    rt.apply(open(sys.argv[1], "rb").read())
    rt.update()
    calls = int(sys.argv[2])
    for _ in range(20):
        rt.world_array()
    samples = []
    for _ in range(calls):
        start = time.perf_counter_ns()
        ids, _ = rt.world_array()
        samples.append((time.perf_counter_ns() - start) / 1e3)
    samples.sort()
    print(f"python world_array entities={len(ids)} calls={calls} "
          f"median_us={samples[calls // 2]:.1f} min_us={samples[0]:.1f}")
    entities = ids.tolist()
    start = time.perf_counter_ns()
    for e in entities:
        rt.world_matrix(e)
    print(f"python world_matrix per entity: {(time.perf_counter_ns() - start) / 1e3 / len(entities):.2f} us")


if __name__ == "__main__":
    main()
