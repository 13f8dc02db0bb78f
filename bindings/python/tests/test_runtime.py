# SPDX-License-Identifier: Apache-2.0
"""scenecrdt.Runtime against `scenecrdt replay --world` (bit for bit), local writes, the
lists, numpy arrays, interpolation and the error paths."""
import os
import struct
import subprocess
import sys

import pytest

import scenecrdt

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", ".."))
from world_bits import load_world  # noqa: E402  (bindings/world_bits.py)

HERE = os.path.dirname(os.path.abspath(__file__))
SOURCE = os.path.abspath(os.path.join(HERE, "..", "..", ".."))


def bits(values):
    return [struct.unpack("<I", struct.pack("<f", v))[0] for v in values]


def streams(run_cli, tmp_path):
    """(name, DCL bytes): generated shapes, seeded random ops (loops, placeholders, odd
    floats), the conflict table and the sample scene."""
    out = []
    for shape in ("random", "deep", "wide"):
        path = tmp_path / f"{shape}.dcl"
        run_cli("gen", "--shape", shape, "--entities", "400", "--seed", "3", "-o", str(path))
        out.append((shape, path))
    for seed in (1, 2):
        ops = subprocess.run([sys.executable, os.path.join(SOURCE, "tests", "package", "gen_ops.py"),
                              str(seed)], capture_output=True, check=True).stdout
        path = tmp_path / f"ops{seed}.dcl"
        run_cli("encode", "-", "-o", str(path), stdin=ops)
        out.append((f"ops{seed}", path))
    path = tmp_path / "conflicts.dcl"
    run_cli("encode", os.path.join(SOURCE, "tests", "data", "conflicts.ops.json"), "-o", str(path))
    out.append(("conflicts", path))
    out.append(("sample_scene", os.path.join(SOURCE, "examples", "sample_scene.dcl")))
    return out


def test_replay_equals_replay_world(run_cli, tmp_path):
    for name, path in streams(run_cli, tmp_path):
        (tmp_path / f"{name}.json").write_bytes(run_cli("replay", str(path), "--world"))
        state_hash, nodes = load_world(tmp_path / f"{name}.json")
        rt = scenecrdt.Runtime()
        stats = rt.apply(open(path, "rb").read())
        rt.update()
        assert stats["messages"] > 0, name
        assert rt.state_hash() == state_hash, name
        assert rt.entity_count == len(nodes), name
        by_entity = {n["entity"]: n for n in rt.nodes()}
        for entity, parent, parked, placeholder, expected in nodes:
            assert bits(rt.world_matrix(entity)) == expected, (name, entity)
            node = by_entity[entity]
            assert (node["parent"], node["parked"], node["placeholder"]) == \
                (parent, parked, placeholder), (name, entity)
        ids, matrices = rt.world_array()
        assert ids.tolist() == [n[0] for n in nodes], name
        # matrices[i][row][column]; the C ABI's floats are columns: transpose back for bits.
        raw = matrices.transpose(0, 2, 1).reshape(len(nodes), 16)
        assert [list(row.view("uint32")) for row in raw] == [n[4] for n in nodes], name


def test_world_array_is_math_indexed():
    rt = scenecrdt.Runtime()
    rt.apply(rt.write_transform(600, position=(1, 2, 3)))
    rt.update()
    ids, m = rt.world_array()
    assert ids.dtype.name == "uint32" and m.dtype.name == "float32" and m.shape == (1, 4, 4)
    assert list(m[0][:3, 3]) == [1, 2, 3]          # translation: last column
    assert list(m[0] @ [0, 0, 0, 1]) == [1, 2, 3, 1]
    assert rt.world_matrix(600)[12:15] == (1.0, 2.0, 3.0)


def test_writes_lists_and_transform():
    a, b = scenecrdt.Runtime(), scenecrdt.Runtime()
    msg = a.write_transform(600, (1, 2, 3), (0, 0, 0, 1), (1, 1, 1), 0)
    assert isinstance(msg, bytes) and 0 < len(msg) <= 68
    assert a.write_transform(600, (1, 2, 3)) == b""        # nothing changed: nothing to send
    child = a.write_transform(601, position=(1, 0, 0), parent=600)
    stats = b.apply(msg + child)
    assert stats == {"messages": 2, "changed": 2, "ignored": 0, "refused": 0}
    assert b.apply(msg)["ignored"] == 1
    b.update()
    assert sorted(b.added()) == [600, 601] and sorted(b.changed()) == [600, 601]
    assert b.transform(601) == {"position": (1.0, 0.0, 0.0), "rotation": (0.0, 0.0, 0.0, 1.0),
                                "scale": (1.0, 1.0, 1.0), "parent": 600}
    assert b.world_matrix(601)[12:15] == (2.0, 2.0, 3.0)
    b.apply(a.delete_entity(601))
    b.update()
    assert b.removed() == [601]
    with pytest.raises(KeyError):
        b.world_matrix(601)
    with pytest.raises(KeyError):
        b.transform(601)
    assert b.apply_stats()["calls"] == 3


def test_errors():
    rt = scenecrdt.Runtime()
    with pytest.raises(scenecrdt.DecodeError) as e:
        rt.apply(b"\xc8\x00\x00\x00\x01")
    assert isinstance(e.value, ValueError) and e.value.status_name == "SC_E_DECODE"
    assert "offset 0" in str(e.value)
    with pytest.raises(scenecrdt.Error) as e:
        rt.delete_entity(5)
    assert e.value.status_name == "SC_E_REFUSED"
    with pytest.raises(scenecrdt.ArgumentError):
        rt.update_interpolated(2**62)
    with pytest.raises(TypeError):
        rt.enable_interpolation(no_such_option=1)
    with pytest.raises(scenecrdt.ArgumentError):
        rt.enable_interpolation(interval_multiple=0.5)
    rt.close()
    rt.close()
    assert rt.closed
    with pytest.raises(scenecrdt.Error, match="after close"):
        rt.update()
    with scenecrdt.Runtime() as scoped:
        scoped.update()
    assert scoped.closed


def test_interpolation():
    sender, rt = scenecrdt.Runtime(), scenecrdt.Runtime()
    rt.enable_interpolation(fixed_delay_us=100_000)
    assert rt.interpolation_enabled
    t0 = 1_000_000
    rt.apply_at(sender.write_transform(600, position=(0, 0, 0)), t0)
    rt.apply_at(sender.write_transform(600, position=(1, 0, 0)), t0 + 50_000)
    rt.update_interpolated(t0 + 125_000)
    assert 0.1 < rt.interpolated_world_matrix(600)[12] < 0.9
    assert rt.world_matrix(600)[12] == 1.0
    ids, m = rt.world_array(interpolated=True)
    assert ids.tolist() == [600] and 0.1 < m[0][0, 3] < 0.9
    assert rt.interpolation_stats()["frames"] == 1
    rt.disable_interpolation()
    assert not rt.interpolation_enabled
