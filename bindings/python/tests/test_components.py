# SPDX-License-Identifier: Apache-2.0
"""Component reads of scenecrdt.Runtime (docs/COMPONENTS.md): the golden stream of a real
@dcl/ecs 7.28 Engine (tests/data/components) gives the bytes its schemas serialized and the
lists of its own diff, applied directly and through a real `scenecrdt serve` to a Client;
values, grow-only sets, absent keys and the lists on hand-made messages."""
import json
import os
import struct
import time

import pytest

import scenecrdt

SOURCE = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))
GOLDEN = os.path.join(SOURCE, "tests", "data", "components")


def golden():
    with open(os.path.join(GOLDEN, "ecs_components.json"), encoding="utf-8") as f:
        expected = json.load(f)
    with open(os.path.join(GOLDEN, "ecs_components.dcl"), "rb") as f:
        return expected, f.read()


def key(text):
    entity, component = text.split(":")
    return int(entity), int(component)


def check_frame(rt, frame, where):
    for k, value in frame["values"].items():
        assert rt.component(*key(k)) == bytes.fromhex(value), (where, k)
    for k, values in frame["growOnly"].items():
        got = rt.append_values(*key(k))
        assert sorted(v.hex() for _, v in got) == values, (where, k)
        assert all(ts == 0 for ts, _ in got), "@dcl/ecs appends with timestamp 0"
        with pytest.raises(scenecrdt.Error) as e:
            rt.component(*key(k))
        assert e.value.status_name == "SC_E_GROW_ONLY" and "append_values" in str(e.value)


def test_golden_dcl_ecs_stream():
    expected, stream = golden()
    rt = scenecrdt.Runtime()
    for f, frame in enumerate(expected["frames"]):
        rt.apply(stream[frame["offset"]:frame["offset"] + frame["length"]])
        rt.update()
        check_frame(rt, frame, f"frame {f}")
        assert rt.changed_components() == [tuple(p) for p in frame["changed"]], f
        assert rt.added_components() == [tuple(p) for p in frame["added"]], f
        assert rt.removed_components() == [tuple(p) for p in frame["removed"]], f


def message(kind, entity, component, timestamp, data=b""):
    return struct.pack("<6I", 24 + len(data), kind, entity, component, timestamp, len(data)) + data


def test_values_sets_and_lists():
    rt = scenecrdt.Runtime()
    rt.apply(message(1, 512, 1018, 1, b"\x01\x02\x03") + message(1, 513, 1018, 1) +
             message(4, 512, 1063, 0, b"\x09"))
    assert rt.component(512, 1018) == b"\x01\x02\x03"  # before any update
    assert rt.component(513, 1018) == b""  # an empty payload is a value
    assert rt.component(514, 1018) is None
    assert rt.append_values(512, 1063) == [(0, b"\x09")]
    assert rt.append_values(512, 1018) is None
    assert rt.changed_components() == []
    rt.update()
    assert rt.added_components() == [(512, 1018), (512, 1063), (513, 1018)]
    assert rt.changed_components() == rt.added_components()
    rt.apply(message(1, 512, 1018, 2, b"\x04") + struct.pack("<3I", 12, 3, 513))
    rt.update()
    assert rt.changed_components() == [(512, 1018)]
    assert rt.added_components() == []
    assert rt.removed_components() == [(513, 1018)]
    rt.write_transform(600, position=(1, 2, 3))
    assert len(rt.component(600, 1)) == 44  # the Transform's wire bytes
    rt.close()
    with pytest.raises(scenecrdt.Error, match="after close"):
        rt.component(512, 1018)


def test_golden_stream_through_a_server(server_url, run_cli, tmp_path):
    """The engine's stream sent to a real server; a Client's replica holds the engine's bytes."""
    expected, stream = golden()
    path = tmp_path / "ecs_components.dcl"
    path.write_bytes(stream)
    scene = f"components-{os.getpid()}"
    run_cli("send", "--server", server_url, "--scene", scene, str(path))
    last = expected["frames"][-1]
    with scenecrdt.Client(server_url, scene) as client:
        deadline = time.monotonic() + 20
        while not client.state_ready:
            assert time.monotonic() < deadline, "joined"
            client.poll(20)
        client.poll(0)
        check_frame(client.runtime, last, "served")
        present = {key(k) for k in list(last["values"]) + list(last["growOnly"])}
        assert set(client.runtime.added_components()) <= present
