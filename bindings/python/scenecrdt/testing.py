# SPDX-License-Identifier: Apache-2.0
"""Hypothesis strategies for testing message ordering (docs/BINDINGS.md "scenecrdt.testing").

messages()          one valid DCL message (bytes) over a small entity/component space:
                    Transform PUTs whose parents make cycles and point at entities without a
                    Transform, -0, subnormals, infinities and NaNs with payload bits; other
                    components' PUTs and DELETEs, APPEND_VALUEs, DELETE_ENTITYs of versioned
                    entities, equal timestamps (ties broken by the payload bytes).
streams()           lists of such messages (what one replica originates, in order).
schedules(stream)   deliveries of a stream: batches of message indices, permuted, with
                    duplicates and held-back messages, every message delivered at least once.
assert_converges()  plays every drawn schedule on a fresh runtime and asserts the state hash
                    and the world matrices (bitwise) equal those of the stream in order.
                    Hypothesis shrinks a failure to a minimal stream and schedule.

A schedule is applied batch by batch: each batch is one `apply` of the concatenated messages,
then one `update` (a rendered frame)."""
import json
import struct

from hypothesis import HealthCheck, given, note, settings as hypothesis_settings
from hypothesis import strategies as st

from . import Runtime, decode, encode

# The small space where conflicts happen: 4 numbers x 2 versions, a parent-only entity (a
# placeholder when it never gets a Transform), two plain components and one append set.
NUMBERS = (512, 513, 514, 515)
ENTITIES = tuple(n | v << 16 for v in (0, 1) for n in NUMBERS)
PLACEHOLDER_PARENT = 516
COMPONENTS = (1001, 1002)
APPEND_COMPONENT = 1003
TRANSFORM = 1

# Transform fields as the JSON form writes them (docs/CLI.md), odd floats on purpose: -0,
# subnormals, +-3e38, infinities, NaNs with payload bits (strings), unnormalised rotations.
# Few draws per message keep generation and shrinking fast.
_F32 = st.floats(width=32, allow_nan=False, allow_infinity=False, min_value=-1e4, max_value=1e4)
_POSITIONS = st.one_of(
    st.sampled_from([(0, 0, 0), (1, 2, 3), (-0.0, 0.5, -1), (1e-40, -3e38, 3e38),
                     ("NaN", "0x7fc00001", "Infinity"), (0.1, 1 / 3, 7.25)]),
    st.tuples(_F32, _F32, _F32))
_ROTATIONS = st.sampled_from([(0, 0, 0, 1), (0, 0.70710677, 0, 0.70710677), (1, 2, 3, 4),
                              (0, 0, 0, 0), ("0xffc00000", 0, 0, 1), (-0.0, 0, 0, -1)])
_SCALES = st.sampled_from([(1, 1, 1), (2, 2, 2), (1, -1, 0.5), (0, 0, 0),
                           ("-Infinity", 1, 1), ("0x7f800001", 1, 1)])
_PARENTS = st.sampled_from((0,) + NUMBERS + (PLACEHOLDER_PARENT,))
_KINDS = st.sampled_from(["transform", "transform", "transform", "delete_transform", "put",
                          "delete", "append", "delete_entity"])


@st.composite
def message_dicts(draw):
    """One message as the JSON object of `scenecrdt decode` (Transform PUTs most often)."""
    kind = draw(_KINDS)
    entity = draw(st.sampled_from(ENTITIES))
    if kind == "delete_entity":
        return {"type": "delete_entity", "entity": entity}
    timestamp = draw(st.integers(0, 3))
    if kind == "transform":
        return {"type": "put", "entity": entity, "component": TRANSFORM, "timestamp": timestamp,
                "transform": {"position": list(draw(_POSITIONS)),
                              "rotation": list(draw(_ROTATIONS)),
                              "scale": list(draw(_SCALES)), "parent": draw(_PARENTS)}}
    if kind == "delete_transform":
        return {"type": "delete", "entity": entity, "component": TRANSFORM,
                "timestamp": timestamp}
    if kind == "delete":
        return {"type": "delete", "entity": entity,
                "component": draw(st.sampled_from(COMPONENTS)), "timestamp": timestamp}
    payload = draw(st.binary(max_size=4)).hex()
    component = draw(st.sampled_from(COMPONENTS)) if kind == "put" else APPEND_COMPONENT
    return {"type": kind, "entity": entity, "component": component, "timestamp": timestamp,
            "dataHex": payload}


def split_messages(data):
    """The messages of a DCL stream as separate byte strings (each starts with its u32 length,
    docs/PROTOCOL.md)."""
    out, pos = [], 0
    while pos < len(data):
        length = struct.unpack_from("<I", data, pos)[0]
        out.append(data[pos:pos + length])
        pos += length
    return out


def messages():
    """One valid DCL message, as bytes (encode() of a message_dicts() object)."""
    return message_dicts().map(lambda m: encode([m]))


def streams(min_size=1, max_size=12):
    """A list of messages (bytes), in the order one replica originated them (encoded at once)."""
    return st.lists(message_dicts(), min_size=min_size, max_size=max_size).map(
        lambda ms: split_messages(encode(ms)))


@st.composite
def schedules(draw, stream):
    """A delivery of `stream`: a list of batches of indices into it. Drawn as a permutation,
    duplicates inserted anywhere, some messages held back to the end, then cut into batches;
    shrinks towards one batch in stream order."""
    n = len(stream)
    order = list(draw(st.permutations(range(n))))
    if n:
        for index in draw(st.lists(st.integers(0, n - 1), max_size=n)):
            order.insert(draw(st.integers(0, len(order))), index)
        held = draw(st.sets(st.integers(0, n - 1), max_size=n))
        order = [i for i in order if i not in held] + [i for i in order if i in held]
    cuts = sorted(draw(st.sets(st.integers(1, max(1, len(order) - 1)), max_size=4)))
    bounds = [0] + [c for c in cuts if c < len(order)] + [len(order)]
    return [order[a:b] for a, b in zip(bounds, bounds[1:]) if b > a]


def _world(rt):
    """The world as bytes: entity ids, then every matrix's float32 bits (NaNs compared by bits)."""
    ids, matrices = rt.world_array()
    return ids.tobytes() + matrices.tobytes()


def play(stream, schedule, runtime=Runtime):
    """Applies `schedule` (batches of indices into `stream`) to a fresh runtime: one apply and
    one update per batch. Returns (state hash, world bytes)."""
    rt = runtime()
    for batch in schedule:
        rt.apply(b"".join(stream[i] for i in batch))
        rt.update()
    return rt.state_hash(), _world(rt)


def _describe(stream):
    return "\n".join(json.dumps(m) for m in decode(b"".join(stream)))


DEFAULT_SETTINGS = hypothesis_settings(
    max_examples=100, deadline=None, database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


def assert_converges(streams=streams(), schedules=schedules, *, runtime=Runtime,
                     schedules_per_stream=3, settings=None):
    """Draws streams and, for each, `schedules_per_stream` schedules; every schedule played on a
    fresh `runtime()` must give the state hash and world of the stream applied in order.
    `runtime` is any factory of objects with apply(bytes), update(), state_hash() and
    world_array(). On a divergence Hypothesis shrinks to a minimal stream and schedule and
    raises AssertionError naming them (the messages as `scenecrdt decode` JSON)."""
    @(settings or DEFAULT_SETTINGS)
    @given(st.data())
    def run(data):
        stream = data.draw(streams, label="stream")
        reference = play(stream, [list(range(len(stream)))], runtime)
        for k in range(schedules_per_stream):
            schedule = data.draw(schedules(stream), label=f"schedule {k}")
            got = play(stream, schedule, runtime)
            if got != reference:
                what = "state hash" if got[0] != reference[0] else "world matrices"
                note(f"stream:\n{_describe(stream)}")
                raise AssertionError(
                    f"diverged ({what}): schedule {schedule} of a stream of {len(stream)} "
                    f"messages gives {got[0]}, in order {reference[0]}\n"
                    f"stream:\n{_describe(stream)}")

    run()


__all__ = ["assert_converges", "message_dicts", "messages", "play", "schedules",
           "split_messages", "streams", "DEFAULT_SETTINGS", "ENTITIES", "COMPONENTS",
           "APPEND_COMPONENT", "TRANSFORM"]
