#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Calls the installed libscenecrdt.so from Python through ctypes, as a P/Invoke-style
binding would (docs/C-ABI.md): applies a DCL stream, updates, reads every world matrix with
one bulk copy and checks them, the effective parents and the state hash against
`scenecrdt replay --world`; then the error paths (a malformed stream: SC_E_DECODE and an
sc_last_error text; an unknown entity: SC_E_NOT_FOUND; a too-small buffer: the size needed),
a local write whose bytes replay elsewhere, and interpolation with its stats. With a server
URL, also the client (sc_client_*): two clients join, one writes, the other sees the write in
its read-only view.

usage: ctypes_check.py LIBSCENECRDT.so STREAM.dcl REPLAY_WORLD.json [SERVER_URL]"""
import time
import ctypes
import json
import struct
import sys
import os

# One float-text rule for every test that compares bits with replay (bindings/world_bits.py).
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "bindings"))
from world_bits import float32_bits  # noqa: E402

SC_OK = 0
SC_E_INVALID_ARGUMENT = -1
SC_E_NOT_FOUND = -2
SC_E_BUFFER_TOO_SMALL = -3
SC_E_DECODE = -4
SC_E_READ_ONLY = -6
SC_NO_SENDER_TIME = -(2**63)


class Transform(ctypes.Structure):
    _fields_ = [("position", ctypes.c_float * 3), ("rotation", ctypes.c_float * 4),
                ("scale", ctypes.c_float * 3), ("parent", ctypes.c_uint32)]


class NodeInfo(ctypes.Structure):
    _fields_ = [("struct_size", ctypes.c_uint32), ("effective_parent", ctypes.c_uint32),
                ("declared_parent", ctypes.c_uint32), ("parked", ctypes.c_int32),
                ("placeholder", ctypes.c_int32)]


class InterpolationOptions(ctypes.Structure):
    _fields_ = [("struct_size", ctypes.c_uint32), ("snap_distance", ctypes.c_float),
                ("fixed_delay_us", ctypes.c_int64), ("initial_delay_us", ctypes.c_int64),
                ("min_delay_us", ctypes.c_int64), ("max_delay_us", ctypes.c_int64),
                ("interval_multiple", ctypes.c_double), ("jitter_multiple", ctypes.c_double),
                ("catch_up", ctypes.c_double), ("slow_down", ctypes.c_double),
                ("max_extrapolation_us", ctypes.c_int64), ("max_interval_us", ctypes.c_int64)]


class InterpolationStats(ctypes.Structure):
    _fields_ = ([("struct_size", ctypes.c_uint32), ("buffer_depth", ctypes.c_uint32),
                 ("tracked_entities", ctypes.c_uint32), ("active_entities", ctypes.c_uint32)] +
                [(n, ctypes.c_int64) for n in ("playback_time_us", "delay_us", "target_delay_us",
                                                "interval_us", "jitter_us")] +
                [(n, ctypes.c_uint64) for n in ("frames", "stalled_frames", "extrapolated_frames",
                                                 "snaps", "entities_added", "entities_removed",
                                                 "late_batches", "resets", "dropped_samples",
                                                 "time_regressions")])


def load(path):
    lib = ctypes.CDLL(path)
    rt = ctypes.c_void_p
    u8p, u32p, fp = (ctypes.POINTER(ctypes.c_uint8), ctypes.POINTER(ctypes.c_uint32),
                     ctypes.POINTER(ctypes.c_float))
    size_t, sizep = ctypes.c_size_t, ctypes.POINTER(ctypes.c_size_t)
    signatures = {
        "sc_abi_version": (ctypes.c_uint32, []),
        "sc_last_error": (ctypes.c_char_p, []),
        "sc_error_name": (ctypes.c_char_p, [ctypes.c_int]),
        "sc_runtime_create": (rt, []),
        "sc_runtime_destroy": (None, [rt]),
        "sc_runtime_apply": (ctypes.c_int, [rt, u8p, size_t]),
        "sc_runtime_apply_at": (ctypes.c_int, [rt, u8p, size_t, ctypes.c_int64, ctypes.c_int64]),
        "sc_runtime_update": (ctypes.c_int, [rt]),
        "sc_runtime_entity_count": (size_t, [rt]),
        "sc_runtime_world_matrix": (ctypes.c_int, [rt, ctypes.c_uint32, fp]),
        "sc_runtime_copy_world": (ctypes.c_int, [rt, u32p, fp, size_t, sizep]),
        "sc_runtime_node_info": (ctypes.c_int, [rt, ctypes.c_uint32, ctypes.POINTER(NodeInfo)]),
        "sc_runtime_state_hash": (ctypes.c_int, [rt, ctypes.c_char_p, size_t]),
        "sc_runtime_write_transform": (ctypes.c_int, [rt, ctypes.c_uint32,
                                                      ctypes.POINTER(Transform), u8p, size_t,
                                                      sizep]),
        "sc_interpolation_options_default": (ctypes.c_int,
                                             [ctypes.POINTER(InterpolationOptions)]),
        "sc_runtime_enable_interpolation": (ctypes.c_int,
                                            [rt, ctypes.POINTER(InterpolationOptions)]),
        "sc_runtime_update_interpolated": (ctypes.c_int, [rt, ctypes.c_int64]),
        "sc_runtime_interpolated_world_matrix": (ctypes.c_int, [rt, ctypes.c_uint32, fp]),
        "sc_runtime_interpolation_stats": (ctypes.c_int,
                                           [rt, ctypes.POINTER(InterpolationStats)]),
        "sc_client_connect": (ctypes.c_void_p, [ctypes.c_char_p, ctypes.c_char_p,
                                                ctypes.c_char_p]),
        "sc_client_destroy": (None, [ctypes.c_void_p]),
        "sc_client_poll": (ctypes.c_int, [ctypes.c_void_p, ctypes.c_uint32]),
        "sc_client_state_ready": (ctypes.c_int, [ctypes.c_void_p]),
        "sc_client_runtime": (rt, [ctypes.c_void_p]),
        "sc_client_write_transform": (ctypes.c_int, [ctypes.c_void_p, ctypes.c_uint32,
                                                     ctypes.POINTER(Transform)]),
        "sc_client_flush": (ctypes.c_int, [ctypes.c_void_p]),
    }
    for name, (restype, argtypes) in signatures.items():
        fn = getattr(lib, name)
        fn.restype = restype
        fn.argtypes = argtypes
    return lib


def bits_of(value):
    return struct.unpack("<I", struct.pack("<f", value))[0]


def check(condition, message, lib=None):
    if not condition:
        detail = f" ({lib.sc_last_error().decode()})" if lib is not None else ""
        raise SystemExit(f"ctypes_check.py: {message}{detail}")


def main():
    if len(sys.argv) not in (4, 5):
        raise SystemExit(__doc__)
    lib = load(sys.argv[1])
    with open(sys.argv[2], "rb") as f:
        stream = f.read()
    with open(sys.argv[3], encoding="utf-8") as f:
        replay = json.load(f, parse_float=str, parse_int=str)
    check(lib.sc_abi_version() == 1, "ABI version")

    rt = lib.sc_runtime_create()
    check(rt, "sc_runtime_create", lib)
    buf = (ctypes.c_uint8 * len(stream)).from_buffer_copy(stream)
    check(lib.sc_runtime_apply(rt, buf, len(stream)) == SC_OK, "apply", lib)
    check(lib.sc_runtime_update(rt) == SC_OK, "update", lib)
    digest = ctypes.create_string_buffer(65)
    check(lib.sc_runtime_state_hash(rt, digest, 65) == SC_OK, "state hash", lib)
    check(digest.value.decode() == replay["stateHash"], "state hash differs from replay")

    # One bulk copy of every entity and matrix, sized by a query.
    count = ctypes.c_size_t(0)
    world = replay["world"]
    status = lib.sc_runtime_copy_world(rt, None, None, 0, ctypes.byref(count))
    check(status == (SC_E_BUFFER_TOO_SMALL if world else SC_OK), "size query", lib)
    check(count.value == len(world) == lib.sc_runtime_entity_count(rt), "entity count")
    entities = (ctypes.c_uint32 * count.value)()
    matrices = (ctypes.c_float * (16 * count.value))()
    check(lib.sc_runtime_copy_world(rt, entities, matrices, count.value,
                                    ctypes.byref(count)) == SC_OK, "copy_world", lib)
    info = NodeInfo(struct_size=ctypes.sizeof(NodeInfo))
    for i, node in enumerate(world):
        check(entities[i] == int(node["entity"]), f"entity {i}")
        got = [bits_of(matrices[16 * i + k]) for k in range(16)]
        want = [float32_bits(str(v)) for v in node["localToWorld"]]
        check(got == want, f"entity {entities[i]}: matrix bits {got} != replay {want}")
        check(lib.sc_runtime_node_info(rt, entities[i], ctypes.byref(info)) == SC_OK, "info", lib)
        check(info.effective_parent == int(node["parent"]) and
              bool(info.parked) == node["parked"] and
              bool(info.placeholder) == node["placeholder"], f"node {entities[i]} differs")

    # Errors: statuses and texts, never an exception or a crash.
    bad = (ctypes.c_uint8 * 4)(3, 0, 0, 0)
    check(lib.sc_runtime_apply(rt, bad, 4) == SC_E_DECODE, "a malformed stream was accepted")
    text = lib.sc_last_error().decode()
    check(text.startswith("sc_runtime_apply: malformed DCL stream") and "offset 0" in text,
          f"sc_last_error: {text!r}")
    check(lib.sc_error_name(SC_E_DECODE) == b"SC_E_DECODE", "sc_error_name")
    out = (ctypes.c_float * 16)()
    check(lib.sc_runtime_world_matrix(rt, 0xFFFF, out) == SC_E_NOT_FOUND, "unknown entity")
    check("65535" in lib.sc_last_error().decode(), "unknown entity text")
    check(lib.sc_runtime_world_matrix(None, 512, out) == SC_E_INVALID_ARGUMENT, "NULL handle")
    if world:
        small = ctypes.c_size_t(0)
        check(lib.sc_runtime_copy_world(rt, entities, matrices, 0, ctypes.byref(small)) ==
              SC_E_BUFFER_TOO_SMALL and small.value == len(world), "too small a buffer")
    digest_after = ctypes.create_string_buffer(65)
    lib.sc_runtime_state_hash(rt, digest_after, 65)
    check(digest_after.value == digest.value, "a refused call changed the state")

    # A local write hands out the bytes another replica applies.
    t = Transform((1.5, 0, 0), (0, 0, 0, 1), (1, 1, 1), 0)
    msg = (ctypes.c_uint8 * 68)()
    length = ctypes.c_size_t(0)
    check(lib.sc_runtime_write_transform(rt, 4000, ctypes.byref(t), msg, 68,
                                         ctypes.byref(length)) == SC_OK and length.value == 68,
          "write", lib)
    peer = lib.sc_runtime_create()
    check(lib.sc_runtime_apply(peer, msg, length.value) == SC_OK, "peer apply", lib)
    check(lib.sc_runtime_update(peer) == SC_OK, "peer update", lib)
    check(lib.sc_runtime_world_matrix(peer, 4000, out) == SC_OK and out[12] == 1.5, "peer", lib)

    # Interpolation: a remote move shows after the delay, the stats say so.
    options = InterpolationOptions()
    check(lib.sc_interpolation_options_default(ctypes.byref(options)) == SC_OK, "defaults")
    check(options.struct_size == ctypes.sizeof(InterpolationOptions), "options layout")
    options.fixed_delay_us = 100_000
    options.max_extrapolation_us = 0  # past the newest batch: hold
    check(lib.sc_runtime_enable_interpolation(peer, ctypes.byref(options)) == SC_OK, "enable",
          lib)
    t.position[0] = 3.5
    check(lib.sc_runtime_write_transform(rt, 4000, ctypes.byref(t), msg, 68,
                                         ctypes.byref(length)) == SC_OK, "write", lib)
    check(lib.sc_runtime_apply_at(peer, msg, length.value, 1_000_000, SC_NO_SENDER_TIME) ==
          SC_OK, "apply_at", lib)
    shown = []
    for render in (1_050_000, 1_200_000):
        check(lib.sc_runtime_update_interpolated(peer, render) == SC_OK, "update", lib)
        check(lib.sc_runtime_interpolated_world_matrix(peer, 4000, out) == SC_OK, "read", lib)
        shown.append(out[12])
    # The first frame is still on its way (playback is 100 ms behind), the second is there.
    check(1.5 <= shown[0] < 3.5 and shown[1] == 3.5, f"interpolated x {shown}")
    stats = InterpolationStats(struct_size=ctypes.sizeof(InterpolationStats))
    check(lib.sc_runtime_interpolation_stats(peer, ctypes.byref(stats)) == SC_OK, "stats", lib)
    check(stats.frames == 2 and stats.delay_us == 100_000, "stats values")
    lib.sc_runtime_destroy(peer)
    lib.sc_runtime_destroy(rt)
    clients = ""
    if len(sys.argv) == 5:
        check_client(lib, sys.argv[4].encode())
        clients = ", a client's write seen by another client"
    print(f"ctypes_check.py: {sys.argv[2]}: {len(world)} entities, bit-identical to replay; "
          f"errors, writes and interpolation as documented{clients}")


def check_client(lib, url):
    """Two clients join `url`, scene ctypes; one writes entity 4200, the other sees it."""
    check(lib.sc_client_connect(b"http://nowhere:1", b"ctypes", None) is None, "bad URL")
    writer = lib.sc_client_connect(url, b"ctypes", None)
    reader = lib.sc_client_connect(url, b"ctypes", None)
    check(writer is not None and reader is not None, "sc_client_connect", lib)
    deadline = time.monotonic() + 30

    def poll_until(done):
        while not done():
            check(lib.sc_client_poll(writer, 0) >= 0 and lib.sc_client_poll(reader, 5) >= 0,
                  "sc_client_poll", lib)
            check(time.monotonic() < deadline, "timed out waiting for the server", lib)

    poll_until(lambda: lib.sc_client_state_ready(writer) == 1 and
               lib.sc_client_state_ready(reader) == 1)
    t = Transform((7.25, 1, 0), (0, 0, 0, 1), (1, 1, 1), 0)
    check(lib.sc_client_write_transform(writer, 4200, ctypes.byref(t)) == SC_OK, "write", lib)
    check(lib.sc_client_flush(writer) == SC_OK, "flush", lib)
    view = lib.sc_client_runtime(reader)
    out = (ctypes.c_float * 16)()
    poll_until(lambda: lib.sc_runtime_world_matrix(view, 4200, out) == SC_OK)
    check(out[12] == 7.25 and out[13] == 1.0, f"client sees x {out[12]}, y {out[13]}")
    msg = (ctypes.c_uint8 * 68)()
    length = ctypes.c_size_t(0)
    check(lib.sc_runtime_write_transform(view, 4201, ctypes.byref(t), msg, 68,
                                         ctypes.byref(length)) == SC_E_READ_ONLY, "read-only")
    lib.sc_client_destroy(writer)
    lib.sc_client_destroy(reader)


if __name__ == "__main__":
    main()
