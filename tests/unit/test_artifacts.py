"""Artifacts of a worker that does not share the run store travel over the control channel
in bounded frames, are written by the coordinator and acknowledged (no Spark)."""
import json
import os
import socket
import time
import uuid

import pyarrow as pa
import pytest

from icedtea_jupyter.coordinator.coordinator import Coordinator
from icedtea_jupyter.coordinator.server import ControlServer
from icedtea_jupyter.dag import Dag
from icedtea_jupyter.executor import artifacts, channel, protocol
from icedtea_jupyter.executor.spec import RunSpec
from icedtea_jupyter.store import layout
from icedtea_jupyter.store.run_store import RunStore
from tests.waiting import wait_until

WORKER = {"operator": 0, "partition": 1, "stage": 0, "attempt": 0, "task": 7}


@pytest.fixture
def kernel(tmp_path, monkeypatch):
    """A coordinator and its store; ``frames``: the body size of every artifact frame it
    took; ``worker_run``: the RunSpec of a worker that cannot see the store."""
    run_id = f"run-{uuid.uuid4().hex[:8]}"
    dag = Dag()
    dag.add("parse", "python", "map", [])
    store = RunStore.create(str(tmp_path / "kernel"), run_id)
    coordinator = Coordinator(run_id, store, dag, [], lambda event, data: None)
    frames = []
    receive = coordinator.inbox.receive
    monkeypatch.setattr(coordinator.inbox, "receive", lambda message, body, connection: (
        frames.append((message["seq"], len(body))), receive(message, body, connection)))
    coordinator.frames = frames
    spec = coordinator.run_spec
    # the worker's own disk: the same path names another (empty) folder
    coordinator.worker_run = RunSpec(run_id, spec.address, spec.secret,
                                     str(tmp_path / "elsewhere" / run_id),
                                     store_token=spec.store_token)
    yield coordinator
    coordinator.server.close()


def test_a_large_artifact_travels_in_bounded_frames_and_is_written_whole(kernel):
    data = bytes(range(256)) * (10 * 1024 + 7)  # 2.5 MiB and a bit
    assert artifacts.deliver(kernel.worker_run, "inputs", WORKER, data)
    path = layout.recorded_inputs_path(kernel.store.path, WORKER)
    with open(path, "rb") as f:
        assert f.read() == data
    sizes = [size for _, size in kernel.frames]
    assert [seq for seq, _ in kernel.frames] == [0, 1, 2]
    assert max(sizes) <= protocol.ARTIFACT_FRAME_BYTES and sum(sizes) == len(data)
    assert kernel.inbox.received == {"inputs": 1}
    assert not os.path.exists(kernel.worker_run.store_path)  # nothing on the worker's disk


def test_tables_and_sketches_arrive_as_the_files_a_shared_worker_writes(kernel):
    links = pa.table({"out_start": pa.array([0, 5], pa.int64())})
    assert artifacts.deliver(kernel.worker_run, "lineage", WORKER, links)
    assert artifacts.deliver(kernel.worker_run, "skew", WORKER, {"n": 3, "keys": [["a", 3, 0]]})
    assert artifacts.deliver(kernel.worker_run, "checkpoint", dict(WORKER, index=2), b"pickle")
    with pa.memory_map(layout.lineage_path(kernel.store.path, WORKER)) as source:
        assert pa.ipc.open_file(source).read_all().equals(links)
    with open(layout.skew_path(kernel.store.path, WORKER)) as f:
        assert json.load(f) == {"n": 3, "keys": [["a", 3, 0]]}
    [(name, path)] = layout.checkpoints(kernel.store.path)
    assert (name.index, name.partition, name.key) == (2, 1, "op0-t7")


def test_a_worker_that_shares_the_store_writes_it_itself(kernel):
    shared = kernel.run_spec  # the kernel's own path and token: a worker on its disk
    assert artifacts.deliver(shared, "inputs", WORKER, b"here")
    assert kernel.frames == []
    with open(layout.recorded_inputs_path(kernel.store.path, WORKER), "rb") as f:
        assert f.read() == b"here"


def raw_worker(kernel):
    """An authenticated connection to the coordinator, speaking frames by hand."""
    sock = socket.create_connection(kernel.run_spec.address, timeout=5)
    challenge, _ = protocol.read_frame(sock)
    sock.sendall(protocol.encode({"type": "hello", "v": protocol.PROTOCOL_VERSION,
                                  "run": kernel.run_id, "pid": 1, "mac": protocol.sign(
                                      kernel.secret, challenge["nonce"])}))
    assert protocol.read_frame(sock)[0]["type"] == "welcome"
    return sock


def frame(ident, seq, last, size, body, kind="inputs", where=WORKER):
    return protocol.encode({"type": "artifact", "kind": kind, "where": where, "id": ident,
                            "seq": seq, "last": last, "size": size}, body)


def test_bad_artifacts_are_refused_with_a_reason_and_leave_no_file(kernel):
    sock = raw_worker(kernel)
    cases = [
        (frame(1, 0, True, 3, b"abc", where=dict(WORKER, operator="../../x")), "integers"),
        (frame(2, 0, True, 3, b"abc", kind="manifest"), "not an artifact kind"),
        (frame(3, 1, True, 3, b"abc"), "out of order"),
        (frame(4, 0, True, 9, b"abc"), "3 bytes of the 9 announced"),
        (frame(5, 0, True, 1 << 21, b"x" * (protocol.ARTIFACT_FRAME_BYTES + 1)), "at most"),
    ]
    for data, reason in cases:
        sock.sendall(data)
        ack, _ = protocol.read_frame(sock)
        assert ack["type"] == "artifact_ack" and ack["ok"] is False and reason in ack["reason"]
    sock.close()
    leftovers = [f for _, _, files in os.walk(kernel.store.path) for f in files
                 if f.endswith(".tmp") or f.endswith(".arrow")]
    assert leftovers == []


def test_an_artifact_cut_off_by_its_workers_death_is_dropped_and_named(kernel):
    sock = raw_worker(kernel)
    sock.sendall(frame(9, 0, False, 10, b"half!"))
    wait_until(lambda: kernel.frames, 5, "the first frame to arrive")
    sock.close()
    [path] = kernel.inbox.close()
    assert path == layout.recorded_inputs_path(kernel.store.path, WORKER)
    assert not any(name.endswith(".tmp") for name in os.listdir(os.path.dirname(path)))


def test_an_artifact_never_acknowledged_is_said_by_the_worker_with_its_host_and_the_fix(
        tmp_path, monkeypatch, capfd):
    sent = []
    server = ControlServer("run-deaf", b"s" * 32, lambda m, b, c: sent.append(m),
                           lambda: {})  # takes every frame, answers none
    try:
        run = RunSpec("run-deaf", server.address, b"s" * 32, str(tmp_path / "nowhere"),
                      store_token="t")
        monkeypatch.setattr(artifacts, "ACK_TIMEOUT", 0.3)
        assert not artifacts.deliver(run, "lineage", WORKER, b"links")
        wait_until(lambda: any(m["type"] == "alert" for m in sent), 5, "the worker's alert")
    finally:
        server.close()
        channel._CHANNELS.pop("run-deaf", None)
    [alert] = [m for m in sent if m["type"] == "alert"]
    assert alert["artifact"] == "lineage" and alert["host"] in alert["message"]
    assert alert["refused"] is False and "0.3 s" in alert["reason"]
    assert "did not acknowledge it within 0.3 s" in alert["message"]
    assert "does not share the store" in alert["message"] and "Fix:" in alert["message"]
    assert alert["message"] in capfd.readouterr().err


def test_after_the_coordinator_closed_a_worker_off_host_records_nothing_at_once(kernel):
    """The run ended (its manifest is on a disk this worker cannot read): a job after it
    (a trace's regenerated records) records nothing, and waits for no answer."""
    assert artifacts.deliver(kernel.worker_run, "skew", WORKER, {"n": 1})
    live = channel.channel_for(kernel.worker_run)
    kernel.server.close()
    wait_until(lambda: live.closed, 5, "the worker to see its connection closed")
    started = time.monotonic()
    assert not artifacts.deliver(kernel.worker_run, "skew", WORKER, {"n": 2})
    assert time.monotonic() - started < 1
    assert isinstance(channel.channel_for(kernel.worker_run), channel.NullChannel)
    assert kernel.inbox.received == {"skew": 1}


def test_an_artifact_the_coordinator_cannot_write_is_said_with_the_stores_fix(kernel,
                                                                            monkeypatch):
    def refuse(key, message, body):
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(kernel.inbox, "_take", refuse)
    assert not artifacts.deliver(kernel.worker_run, "skew", WORKER, {"n": 1})
    wait_until(lambda: kernel.alerts, 5, "the worker's alert to reach the coordinator")
    [alert] = kernel.alerts
    assert alert["refused"] is True and "Permission denied" in alert["reason"]
    assert alert["operator"] == "parse"  # named as the run names it
    assert "Fix: make the run store writable by the kernel" in alert["message"]
    assert kernel.inbox.received == {}
