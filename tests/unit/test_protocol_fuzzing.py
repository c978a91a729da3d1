"""Hypothesis-generated frames against a run's coordinator over real loopback sockets, and
generated requests against the comm handlers: nothing raises, every bad input is refused
or answered with an error, and an authenticated worker's stream stays usable after it."""
import json
import socket
import struct
import tempfile
import time

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from icedtea_jupyter.comm import messages
from icedtea_jupyter.comm.target import handle
from icedtea_jupyter.coordinator.coordinator import Coordinator
from icedtea_jupyter.dag import Dag
from icedtea_jupyter.executor import protocol
from icedtea_jupyter.executor.state import Summary, decode, encode
from icedtea_jupyter.session import registry
from icedtea_jupyter.store.run_store import RunStore
from tests.waiting import wait_until

SETTINGS = settings(max_examples=40, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow])
KNOWN = {"operator": 0, "partition": 0, "stage": 0, "attempt": 0, "task": 1}

JSON = st.recursive(
    st.none() | st.booleans() | st.integers(-2**70, 2**70) | st.floats(allow_nan=False)
    | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=5), inner,
                                                               max_size=4),
    max_leaves=12)
TAG = st.sampled_from(["dict", "tuple", "set", "int", "float", "bytes", "datetime", "date",
                       "time", "decimal", "row", "summary", "object", "nope"])
TAGGED = st.recursive(  # tagged-JSON values, well formed or not
    JSON, lambda inner: st.builds(lambda tag, fields: {"$t": tag, **fields}, TAG,
                                  st.dictionaries(st.sampled_from(["v", "items", "attrs"]),
                                                  inner, max_size=2)),
    max_leaves=8)
WORKER = st.fixed_dictionaries({name: st.integers(-3, 3) for name in protocol.WORKER_FIELDS})


def _typed(name: str, kind) -> st.SearchStrategy:
    """A value of the schema's type for field ``name``: the right shape, any content."""
    if name == "worker":
        return st.one_of(st.just(KNOWN), WORKER)
    if name == "reports":
        return st.lists(st.builds(lambda w, i, c, s, d: {"type": "snapshot", "worker": w,
                                                         "index": i, "count": c, "status": s,
                                                         "delta": d},
                                  WORKER, st.integers(-2, 5), st.integers(-2, 10**6),
                                  st.text(max_size=6), TAGGED), max_size=3)
    simple = {int: st.integers(-2**40, 2**40), str: st.text(max_size=10), dict: JSON}
    return simple.get(kind, TAGGED) if not isinstance(kind, tuple) else TAGGED


WELL_TYPED = st.sampled_from(sorted(set(protocol.WORKER_MESSAGES) - {"hello"})).flatmap(
    lambda kind: st.fixed_dictionaries(
        {"type": st.just(kind),
         **{name: _typed(name, t) for name, t in protocol.WORKER_MESSAGES[kind].items()}},
        optional={"error": TAGGED, "log": TAGGED, "delta": TAGGED, "record": TAGGED,
                  "forward": TAGGED, "started": JSON, "seconds": JSON}))
ANY_SHAPE = st.dictionaries(st.sampled_from(["type", "worker", "records_in", "status", "index",
                                             "reports", "agent", "payload"]),
                            JSON | TAGGED, max_size=5)
FRAME = st.one_of(
    WELL_TYPED.map(lambda m: ("message", protocol.encode(m, b""))),
    st.tuples(WELL_TYPED, st.binary(max_size=64)).map(
        lambda mb: ("message", protocol.encode(*mb))),
    ANY_SHAPE.map(lambda m: ("message", protocol.encode(m))),
    st.binary(max_size=40).map(lambda raw: ("bad header", struct.pack(">II", len(raw), 0) + raw)),
    st.integers(1, 5000).map(lambda depth: ("bad header", _frame(b"[" * depth * 200))),
)


def _frame(header: bytes) -> bytes:
    return struct.pack(">II", len(header), 0) + header


class RunUnderFire:
    """A run's coordinator with one operator (id 0), its store in a temporary folder."""

    def __init__(self) -> None:
        self.folder = tempfile.TemporaryDirectory(ignore_cleanup_errors=True)  # a write may
        # still be under way in the server thread when the test ends
        dag = Dag()
        dag.add("parse", "python", "map", [])
        self.store = RunStore.create(self.folder.name, "run-f")
        self.coordinator = Coordinator("run-f", self.store, dag, [], lambda kind, data: None)
        self.server = self.coordinator.server

    def connect(self, authenticate: bool = True) -> socket.socket:
        sock = socket.create_connection(self.server.address, timeout=5)
        challenge, _ = protocol.read_frame(sock)
        if authenticate:
            sock.sendall(protocol.encode({"type": "hello", "v": protocol.PROTOCOL_VERSION,
                                          "run": "run-f", "pid": 1,
                                          "mac": protocol.sign(self.coordinator.secret,
                                                               challenge["nonce"])}))
            assert protocol.read_frame(sock)[0]["type"] == "welcome"
        return sock

    def sentinel_arrives(self, sock: socket.socket, text: str) -> None:
        sock.sendall(protocol.encode({"type": "alert", "worker": KNOWN, "source": "fuzz",
                                      "message": text}))
        wait_until(lambda: any(a.get("message") == text for a in self.coordinator.alerts), 60,
                   f"the alert {text!r} sent after the frames")

    def close(self) -> None:
        self.server.close()
        self.folder.cleanup()


def error_replies(sock: socket.socket) -> list[str]:
    """The error replies already sent on ``sock`` (read until it has nothing more; the
    broadcasts among them, an interaction a message asked for, are skipped)."""
    reasons = []
    sock.settimeout(0.3)
    try:
        while True:
            reply, _ = protocol.read_frame(sock)
            protocol.validate(reply, protocol.COORDINATOR_MESSAGES)  # an error, or a broadcast
            if reply["type"] == "error":
                reasons.append(reply["reason"])
    except TimeoutError:
        return reasons


def chunks(data: bytes, cuts: list[int]) -> list[bytes]:
    points = sorted({c % (len(data) + 1) for c in cuts} | {0, len(data)})
    return [data[a:b] for a, b in zip(points, points[1:])]


@SETTINGS
@given(st.lists(FRAME, min_size=1, max_size=8), st.lists(st.integers(0, 10**6), max_size=12))
def test_an_authenticated_stream_survives_any_sequence_of_frames(frames, cuts):
    run = RunUnderFire()
    try:
        sock = run.connect()
        data = b"".join(frame for _, frame in frames)
        for piece in chunks(data, cuts):  # frames split and joined at arbitrary boundaries
            sock.sendall(piece)
            time.sleep(0.001)
        run.sentinel_arrives(sock, "after the frames")
        replies = error_replies(sock)
        bad = sum(kind == "bad header" for kind, _ in frames)
        invalid = sum(kind == "message" and not _valid(frame) for kind, frame in frames)
        assert bad + invalid <= len(replies) <= len(frames)
        assert all(key[0] == 0 for key, _ in run.coordinator.worker_states())  # known ops only
        run.store.worker_table()  # the store stays readable
    finally:
        run.close()


def _valid(frame: bytes) -> bool:
    header_len = struct.unpack(">II", frame[:8])[0]
    try:
        protocol.validate(json.loads(frame[8:8 + header_len]), protocol.WORKER_MESSAGES)
    except protocol.ProtocolError:
        return False
    return True


@SETTINGS
@given(st.binary(max_size=300))
def test_random_bytes_before_authentication_change_nothing(garbage):
    run = RunUnderFire()
    try:
        sock = run.connect(authenticate=False)
        try:
            sock.sendall(garbage)
            sock.shutdown(socket.SHUT_WR)
        except OSError:
            pass
        sock.close()
        good = run.connect()  # the server still welcomes a worker with the run's secret
        run.sentinel_arrives(good, "welcome after garbage")
        assert not run.coordinator.workers and len(run.coordinator.alerts) == 1
    finally:
        run.close()


@SETTINGS
@given(WELL_TYPED, st.binary(max_size=16), st.integers(1, 10**6))
def test_a_frame_cut_short_by_a_closed_connection_records_nothing(message, body, cut):
    run = RunUnderFire()
    try:
        sock = run.connect()
        frame = protocol.encode(dict(message, worker=KNOWN) if "worker" in message else message,
                                body)
        sock.sendall(frame[:cut % len(frame)])
        sock.close()
        other = run.connect()
        run.sentinel_arrives(other, "after a truncated frame")
        assert not run.coordinator.workers
    finally:
        run.close()


def test_a_mac_of_any_characters_is_refused_not_crashed_on():
    run = RunUnderFire()
    try:
        sock = socket.create_connection(run.server.address, timeout=5)
        protocol.read_frame(sock)
        sock.sendall(protocol.encode({"type": "hello", "v": protocol.PROTOCOL_VERSION,
                                      "run": "run-f", "pid": 1, "mac": "é" * 64}))
        reply, _ = protocol.read_frame(sock)
        assert reply["type"] == "error" and reply["reason"] == "authentication failed"
    finally:
        run.close()


REQUEST = st.fixed_dictionaries(
    {"kind": st.sampled_from(["request", "event", "x"]),
     "method": st.sampled_from(list(messages.REQUEST_METHODS)) | st.text(max_size=8)},
    optional={"id": st.integers(-5, 10**12) | st.text(max_size=3) | st.none(),
              "params": st.dictionaries(st.sampled_from(["run", "index", "operator", "partition",
                                                         "path", "source", "record", "n"]),
                                        JSON, max_size=4) | JSON})


@settings(max_examples=300, deadline=None)
@given(REQUEST | JSON)
def test_any_comm_request_is_answered_and_changes_no_run(message):
    before = list(registry.runs())
    answer = handle(message)
    json.dumps(answer)  # the reply can be sent
    assert answer["ok"] in (True, False) and (answer["ok"] or answer["error"]["message"])
    assert registry.runs() == before


@settings(max_examples=500, deadline=None)
@given(TAGGED)
def test_any_tagged_json_from_a_worker_decodes_without_raising(value):
    decoded = decode(value)
    if isinstance(decoded, Summary) and "malformed" in decoded.get("note", ""):
        assert decoded["repr"]  # the user sees what came


@settings(max_examples=300, deadline=None)
@given(st.recursive(st.none() | st.booleans() | st.integers() | st.text(max_size=4)
                    | st.binary(max_size=4) | st.floats(allow_nan=False),
                    lambda inner: st.lists(inner, max_size=3)
                    | st.tuples(inner, inner)
                    | st.frozensets(st.integers() | st.text(max_size=3), max_size=3)
                    | st.dictionaries(st.text(max_size=3) | st.integers(), inner, max_size=3),
                    max_leaves=10))
def test_tagged_json_round_trips_plain_values(value):
    assert decode(json.loads(json.dumps(encode(value), allow_nan=False))) == value
