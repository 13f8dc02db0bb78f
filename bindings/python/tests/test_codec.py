# SPDX-License-Identifier: Apache-2.0
"""scenecrdt.decode / encode: the objects of `scenecrdt decode`'s JSON lines, byte-exact round
trips, the CLI's refusals as ValueError with the message's line."""
import json
import math
import os

import pytest
from hypothesis import given, settings

import scenecrdt
from scenecrdt import testing

SOURCE = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))


def test_decode_equals_cli_json_lines(run_cli):
    path = os.path.join(SOURCE, "examples", "sample_scene.dcl")
    lines = run_cli("decode", path).decode().splitlines()
    data = open(path, "rb").read()
    assert scenecrdt.decode(data) == [json.loads(line) for line in lines]
    assert scenecrdt.encode(scenecrdt.decode(data)) == data


def test_encode_equals_cli_encode(run_cli, tmp_path):
    path = os.path.join(SOURCE, "tests", "data", "conflicts.ops.json")
    doc = json.load(open(path))
    ops = doc["ops"] if isinstance(doc, dict) else doc
    run_cli("encode", path, "-o", str(tmp_path / "out.dcl"))
    assert scenecrdt.encode(ops) == (tmp_path / "out.dcl").read_bytes()


@settings(max_examples=100, deadline=None, database=None)
@given(testing.streams(max_size=8))
def test_round_trip(stream):
    data = b"".join(stream)
    assert scenecrdt.encode(scenecrdt.decode(data)) == data


def test_non_finite_floats():
    m = {"type": "put", "entity": 512, "component": 1, "timestamp": 1,
         "transform": {"position": [math.nan, math.inf, -math.inf], "rotation": [0, 0, 0, 1],
                       "scale": ["0x7fc00001", 1, 1], "parent": 0}}
    back = scenecrdt.decode(scenecrdt.encode([m]))[0]["transform"]
    assert back["position"] == ["NaN", "Infinity", "-Infinity"]
    assert back["scale"][0] == "0x7fc00001"


def test_errors():
    good = {"type": "delete_entity", "entity": 600}
    with pytest.raises(scenecrdt.EncodeError) as e:
        scenecrdt.encode([good, good, {"type": "put", "entity": 512, "component": 1,
                                       "timestamp": 1, "postion": [1, 2, 3]}])
    assert isinstance(e.value, ValueError)
    assert e.value.line == 3 and e.value.index == 2
    assert 'unknown key "postion"' in str(e.value) and "message 2 (line 3)" in str(e.value)
    with pytest.raises(scenecrdt.EncodeError) as e:
        scenecrdt.encode([good, "not a dict"])
    assert e.value.index == 1
    data = scenecrdt.encode([good, good])
    with pytest.raises(scenecrdt.DecodeError) as e:
        scenecrdt.decode(data + data[:5])
    assert isinstance(e.value, ValueError) and e.value.offset == len(data)
    assert f"at byte offset {len(data)}" in str(e.value)
    assert scenecrdt.encode([]) == b"" and scenecrdt.decode(b"") == []
