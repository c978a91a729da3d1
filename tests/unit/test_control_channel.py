"""The control channel over real loopback sockets: authentication, validation, routing."""
import json
import socket
import struct

import pytest

from icedtea_jupyter.coordinator.server import ControlServer
from icedtea_jupyter.executor import channel as channel_module
from icedtea_jupyter.executor import protocol
from icedtea_jupyter.executor.spec import RunSpec
from tests.waiting import wait_until

SECRET = b"s" * 32
WORKER = {"operator": 1, "partition": 0, "stage": 0, "attempt": 0, "task": 7}


@pytest.fixture
def server():
    received = []
    srv = ControlServer("run-x", SECRET, lambda m, b, c: received.append(m),
                        lambda: {"operators": {"1": "enrich"}})
    srv.received = received
    yield srv
    srv.close()


def handshake(srv, secret=SECRET, version=protocol.PROTOCOL_VERSION, run="run-x"):
    sock = socket.create_connection(srv.address, timeout=5)
    challenge, _ = protocol.read_frame(sock)
    sock.sendall(protocol.encode({"type": "hello", "v": version, "run": run, "pid": 1,
                                  "mac": protocol.sign(secret, challenge["nonce"])}))
    reply, _ = protocol.read_frame(sock)
    return sock, reply


def test_the_server_listens_on_loopback_by_default(server):
    assert server.address[0] == "127.0.0.1"


def test_an_authenticated_worker_is_welcomed_with_operator_names(server):
    sock, reply = handshake(server)
    assert reply["type"] == "welcome" and reply["operators"] == {"1": "enrich"}
    sock.sendall(protocol.encode({"type": "worker_start", "worker": WORKER}))
    wait_until(lambda: server.received, 5, "the server to receive worker_start")
    assert server.received[0]["worker"] == WORKER
    sock.close()


@pytest.mark.parametrize("kwargs, reason", [
    ({"secret": b"wrong"}, "authentication failed"),
    ({"run": "another-run"}, "authentication failed"),
    ({"version": 99}, "protocol version"),
])
def test_bad_credentials_are_rejected_and_change_nothing(server, kwargs, reason):
    sock, reply = handshake(server, **kwargs)
    assert reply["type"] == "error" and reason in reply["reason"]
    with pytest.raises((ConnectionError, OSError)):
        sock.sendall(protocol.encode({"type": "worker_start", "worker": WORKER}))
        protocol.read_frame(sock)
    assert server.received == [] and server.rejections


def test_an_oversized_frame_is_rejected_without_reading_it(server):
    sock = socket.create_connection(server.address, timeout=5)
    protocol.read_frame(sock)
    sock.sendall(struct.pack(">II", protocol.MAX_HEADER_BYTES + 1, 0))
    reply, _ = protocol.read_frame(sock)
    assert reply["type"] == "error" and "too large" in reply["reason"]
    assert server.received == []


def test_a_non_json_handshake_is_rejected(server):
    sock = socket.create_connection(server.address, timeout=5)
    protocol.read_frame(sock)
    garbage = b"\x80\x04pickle"
    sock.sendall(struct.pack(">II", len(garbage), 0) + garbage)
    reply, _ = protocol.read_frame(sock)
    assert reply["type"] == "error" and "not JSON" in reply["reason"]


def test_a_malformed_message_gets_an_error_reply_and_the_connection_survives(server):
    sock, _ = handshake(server)
    sock.sendall(protocol.encode({"type": "worker_end", "worker": WORKER}))  # no counts
    reply, _ = protocol.read_frame(sock)
    assert reply["type"] == "error" and "missing" in reply["reason"]
    sock.sendall(protocol.encode({"type": "no_such_type"}))
    reply, _ = protocol.read_frame(sock)
    assert "unknown message type" in reply["reason"]
    sock.sendall(protocol.encode({"type": "worker_start", "worker": WORKER}))
    wait_until(lambda: len(server.received) == 1, 5, "the server to receive worker_start")


def test_a_chains_snapshots_travel_together_and_a_bad_report_refuses_the_batch(server):
    sock, _ = handshake(server)
    report = {"type": "snapshot", "worker": WORKER, "index": 1, "count": 5, "status": "running",
              "delta": {"full": {}}}
    sock.sendall(protocol.encode({"type": "snapshots", "reports": [report, {**report, "count": None}]}))
    reply, _ = protocol.read_frame(sock)
    assert reply["type"] == "error" and "count" in reply["reason"]
    sock.sendall(protocol.encode({"type": "snapshots", "reports": [report, {"type": "alert"}]}))
    reply, _ = protocol.read_frame(sock)
    assert "every report must be a snapshot" in reply["reason"]
    sock.sendall(protocol.encode({"type": "snapshots", "reports": [report, report]}))
    wait_until(lambda: len(server.received) == 1, 5, "the server to receive the snapshots")
    assert [r["count"] for r in server.received[0]["reports"]] == [5, 5]


def test_worker_client_round_trip_and_broadcast(server, tmp_path):
    run = RunSpec("run-x", server.address, SECRET, str(tmp_path))
    client = channel_module.ControlChannel.connect(run)
    assert client.operator_names == {1: "enrich"}

    class Host:
        def __init__(self):
            self.got = []

        def deliver(self, message):
            self.got.append(message)

    host = Host()
    client.register(host)
    client.send({"type": "alert", "worker": WORKER, "source": "x", "message": "hi"})
    wait_until(lambda: server.received, 5, "the server to receive the alert")
    wait_until(lambda: server.broadcast({"type": "flush"}) == 1, 5,
               "a broadcast to reach the one connected worker")
    wait_until(lambda: host.got == [{"type": "flush"}], 5, "the host to get the flush")


def test_an_unreachable_coordinator_means_local_recording(tmp_path):
    free = socket.socket()
    free.bind(("127.0.0.1", 0))
    port = free.getsockname()[1]
    free.close()
    (tmp_path / ".store-token").write_text("t0ken")  # the store is shared: shown by its token
    run = RunSpec("run-local", ("127.0.0.1", port), SECRET, str(tmp_path), connect_timeout=0.5,
                  store_token="t0ken")
    channel = channel_module._open(run)
    assert isinstance(channel, channel_module.LocalChannel)
    assert f"127.0.0.1:{port}" in channel.reason
    channel.end_worker({"type": "worker_end", "worker": WORKER, "status": "ok",
                        "records_in": 3, "records_out": 3})
    assert list((tmp_path / "workers").iterdir())


def test_an_unreachable_coordinator_and_a_store_not_shared_record_nothing(tmp_path, capfd):
    """A worker that cannot show it shares the store (no token file: another host's
    disk) writes nothing into ``store_path``, and says so on its stderr."""
    run = RunSpec("run-private", ("127.0.0.1", 9), SECRET, str(tmp_path), connect_timeout=0.5,
                  store_token="t0ken")
    channel = channel_module._open(run)
    assert isinstance(channel, channel_module.LocalChannel)
    channel.end_worker({"type": "worker_end", "worker": WORKER, "status": "ok",
                        "records_in": 3, "records_out": 3})
    channel.send({"type": "alert", "worker": WORKER, "source": "x", "message": "hi"})
    assert list(tmp_path.iterdir()) == []
    err = capfd.readouterr().err
    assert "does not share the run store" in err and "cannot read" in err
    assert err.count("icedtea:") == 1  # said once


def test_a_finished_run_records_nothing(tmp_path):
    (tmp_path / "manifest.json").write_text(json.dumps({"status": "finished"}))
    run = RunSpec("run-old", ("127.0.0.1", 9), SECRET, str(tmp_path), connect_timeout=0.5)
    assert isinstance(channel_module._open(run), channel_module.NullChannel)


def test_a_worker_learns_g_theta_from_its_welcome_and_from_a_later_broadcast(tmp_path):
    """A UDF's spec is pickled with its column, before the column is applied to θ's
    output: its worker learns that it is in G(θ) from the coordinator, when it connects
    or, if it connected before, when G(θ) grows."""
    from icedtea_jupyter.executor.spec import OperatorSpec

    g = [2]
    srv = ControlServer("run-x", SECRET, lambda m, b, c: None, lambda: {"g": list(g)})
    try:
        run = RunSpec("run-x", srv.address, SECRET, str(tmp_path))
        client = channel_module.ControlChannel.connect(run)
        udf = OperatorSpec(5, run, "udf")  # pickled before it met θ's DataFrame
        assert channel_module.in_g_now(OperatorSpec(2, run, "mapInPandas"), client)
        assert not channel_module.in_g_now(udf, client)
        g.append(5)
        wait_until(lambda: srv.broadcast({"type": "g_theta", "operators": g}) == 1, 5,
                   "the broadcast to reach the worker")
        wait_until(lambda: channel_module.in_g_now(udf, client), 5,
                   "the worker to learn G(θ) grew")
    finally:
        srv.close()
