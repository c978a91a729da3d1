"""Test doubles for executor-side code: a channel that keeps what workers send."""
from __future__ import annotations

from pathlib import Path

from icedtea_jupyter.executor.spec import OperatorSpec, RunSpec


class RecordingChannel:
    connected = True

    def __init__(self) -> None:
        self.sent: list[dict] = []
        self.ended: list[dict] = []
        self.hosts: list = []
        self.operator_names = {0: "op"}

    def send(self, message: dict, body: bytes = b"") -> None:
        self.sent.append(message)

    def end_worker(self, message: dict, body: bytes = b"") -> None:
        self.ended.append(message)
        self.bodies = getattr(self, "bodies", []) + [body]

    def register(self, host) -> None:
        self.hosts.append(host)

    def unregister(self, host) -> None:
        self.hosts.remove(host)

    def of_type(self, kind: str) -> list[dict]:
        return [m for m in self.sent if m["type"] == kind]


def shared_store(path) -> str:
    """Make ``path`` a store this process shares (its token file, as a kernel writes it);
    returns the token to put in the ``RunSpec``."""
    token = "unit-test-token"
    (Path(path) / ".store-token").write_text(token)
    return token


def make_spec(agents=(), op_id: int = 0, api: str = "map") -> OperatorSpec:
    run = RunSpec("run-1", ("127.0.0.1", 1), b"secret", "/nonexistent", tuple(agents))
    return OperatorSpec(op_id, run, api, "op")


def host_with(monkeypatch, agents=(), api: str = "map"):
    from icedtea_jupyter.executor import host as host_module

    channel = RecordingChannel()
    monkeypatch.setattr(host_module, "channel_for", lambda run: channel)
    return host_module.WorkerHost(make_spec(agents, api=api), partition=3), channel


class FakeComm:
    """A comm as the kernel hands it to the ``icedtea`` target; keeps what is sent (as
    JSON, so anything that would not serialise fails here) and checks it against the
    protocol's schema: ``reply``, ``events`` and ``close`` fail on a message that breaks it."""

    def __init__(self) -> None:
        import json
        import threading

        self._json = json
        self.sent: list[dict] = []
        self._sent = threading.Condition()  # notified at each send: reply() waits on it
        self.problems: list[str] = []  # where sent messages break comm/protocol.json
        self.methods: dict[int, str] = {}  # request id -> method
        self._next_id = 0

    def on_msg(self, callback) -> None:
        self._on_msg = callback

    def on_close(self, callback) -> None:
        self._on_close = callback

    def send(self, data: dict) -> None:
        message = self._json.loads(self._json.dumps(data))
        problems = protocol_problems(message, self.methods)
        with self._sent:
            self.problems += problems
            self.sent.append(message)
            self._sent.notify_all()

    def _conforms(self) -> None:
        assert not self.problems, "the kernel sent messages the schema refuses:\n" + \
            "\n".join(self.problems)

    def request(self, method: str, **params) -> dict:
        """Send a request the way the frontend does; returns the reply."""
        return self.reply(self.send_request(method, **params))

    def send_request(self, method: str, **params) -> int:
        """Send a request without waiting for its reply; returns its id."""
        self._next_id += 1
        self.methods[self._next_id] = method
        message = {"kind": "request", "id": self._next_id, "method": method, "params": params}
        self._on_msg({"content": {"data": message}})
        return self._next_id

    def reply(self, request_id: int, timeout: float = 120.0) -> dict:
        """The reply to ``request_id``, waiting for it (jumps and steps answer from a
        thread of the comm channel)."""
        def found() -> list[dict]:
            return [m for m in self.sent if m["kind"] == "reply" and m["id"] == request_id]

        with self._sent:
            if not self._sent.wait_for(found, timeout):
                raise TimeoutError(f"no reply to request {request_id} in {timeout} s")
            self._conforms()
            return found()[-1]

    def events(self, name: str) -> list[dict]:
        self._conforms()
        return [m["data"] for m in self.sent if m["kind"] == "event" and m["event"] == name]

    def close(self) -> None:
        self._on_close({})
        self._conforms()


def protocol_problems(message: dict, methods: dict[int, str]) -> list[str]:
    """Where a message the kernel sends breaks the comm's schema (empty: it conforms)."""
    from icedtea_jupyter.comm.schema import SCHEMA, check, check_event, check_result

    if message.get("kind") == "event":
        name = message.get("event")
        if name not in SCHEMA["events"]:
            return [f"event {name!r} is not in the schema"]
        return check_event(name, message.get("data"))
    if message.get("ok") is False:
        return check(message.get("error"), {"type": "str", "message": "str"}, "error")
    method = methods.get(message.get("id"))
    return [] if method is None else check_result(method, message.get("result"))
