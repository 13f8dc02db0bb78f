# SPDX-License-Identifier: Apache-2.0
"""scenecrdt.Client through a real `scenecrdt serve`: one client writes, the other sees it;
the read-only view; closing; a bad URL."""
import os
import threading
import time

import pytest

import scenecrdt


def poll_until(done, what, *clients, seconds=20):
    deadline = time.monotonic() + seconds
    while not done():
        assert time.monotonic() < deadline, f"timed out: {what}"
        for c in clients:
            c.poll(20)


def test_two_clients(server_url):
    scene = f"python-{os.getpid()}"
    with scenecrdt.Client(server_url, scene) as writer, scenecrdt.Client(server_url, scene) as reader:
        poll_until(lambda: writer.state_ready and reader.state_ready, "joined", writer, reader)
        writer.write_transform(700, position=(4, 2, 3))
        writer.write_transform(701, position=(5, 2, 3), parent=700)
        writer.flush()

        def sees():
            try:
                return reader.runtime.world_matrix(701)[12:15] == (9.0, 4.0, 6.0)
            except KeyError:
                return False
        poll_until(sees, "the reader sees 701", writer, reader)
        assert reader.runtime.transform(701)["parent"] == 700
        writer.delete_entity(701)
        poll_until(lambda: 701 not in [n["entity"] for n in reader.runtime.nodes()],
                   "the reader loses 701", writer, reader)
        poll_until(lambda: reader.runtime.state_hash() == writer.runtime.state_hash(),
                   "equal state hashes", writer, reader)
        assert writer.stats()["connects"] >= 1 and reader.stats()["live_frames"] >= 1
        assert writer.connected and reader.connected
        view = reader.runtime
        assert view.is_view
        with pytest.raises(scenecrdt.Error) as e:
            view.apply(b"")
        assert e.value.status_name == "SC_E_READ_ONLY"
    assert writer.closed
    with pytest.raises(scenecrdt.Error, match="after close"):
        writer.poll(0)
    with pytest.raises(scenecrdt.Error, match="Client is closed"):
        view.state_hash()


def test_poll_releases_the_gil(server_url):
    with scenecrdt.Client(server_url, f"gil-{os.getpid()}") as c:
        poll_until(lambda: c.state_ready, "joined", c)
        ticks = []
        t = threading.Thread(target=lambda: [ticks.append(time.monotonic()) or time.sleep(0.01)
                                             for _ in range(10)])
        t.start()
        c.poll(300)  # nothing arrives: waits the whole timeout without the GIL
        t.join()
        assert len(ticks) == 10
        c.write_transform(600)
        assert c.runtime.transform(600)["scale"] == (1.0, 1.0, 1.0)


def test_bad_url():
    with pytest.raises(scenecrdt.ArgumentError) as e:
        scenecrdt.Client("nope://127.0.0.1:1", "s")
    assert isinstance(e.value, ValueError) and "nope" in str(e.value)
    c = scenecrdt.Client("tcp://127.0.0.1:1", "s")  # nobody listens: retried, no error
    assert c.poll(0) >= 0 and not c.state_ready
    c.close()
