"""The control-channel wire format, shared by workers and the coordinator.

A frame is ``>II`` (header length, body length), a UTF-8 JSON header, then an
optional binary body (Arrow IPC, never pickle). Every header carries ``type``.
The first exchange authenticates: the coordinator sends a ``challenge`` with a
random nonce, the worker answers ``hello`` with HMAC-SHA256(secret, nonce) and
the protocol version, the coordinator answers ``welcome`` or ``error``.
See ``docs/protocol.md`` for every message type and its fields.
"""
from __future__ import annotations

import hashlib
import hmac
import json
import secrets
import socket
import struct
from typing import Any

PROTOCOL_VERSION = 2  # 2: artifacts (a worker's files for the store) travel in frames
MAX_HEADER_BYTES = 1 << 20
MAX_BODY_BYTES = 64 << 20
ARTIFACT_FRAME_BYTES = 1 << 20  # an artifact's bytes travel in frames of at most this
_FRAME = struct.Struct(">II")

# type -> {field: type or tuple of types}; extra fields are allowed.
WORKER_MESSAGES: dict[str, dict[str, Any]] = {
    "hello": {"v": int, "run": str, "mac": str, "pid": int},
    "worker_start": {"worker": dict},
    "progress": {"worker": dict, "records_in": int, "records_out": int},
    "worker_end": {"worker": dict, "status": str, "records_in": int, "records_out": int},
    "agent": {"worker": dict, "agent": str, "payload": (dict, list, str, int, float, bool, type(None))},
    "alert": {"worker": dict, "source": str, "message": str},
    "snapshot": {"worker": dict, "index": int, "count": int, "status": str},
    "snapshots": {"reports": list},  # a task chain's snapshot messages, θ's last
    "interact_request": {"worker": dict, "trigger": str, "request": int},
    # live control (executor/control.py)
    "paused": {"worker": dict, "pause": int, "paused": bool},
    "hit": {"worker": dict, "hit": int, "kind": str, "breakpoint": int, "index": int},
    "global_report": {"worker": dict, "breakpoint": int, "value": (int, float),
                      "reached": bool, "final": bool},
    "live_state": {"worker": dict, "request": int, "state": dict},
    # a file for the run store, in frames (executor/artifacts.py, coordinator/artifacts.py)
    "artifact": {"kind": str, "where": dict, "id": int, "seq": int, "last": bool, "size": int},
}
COORDINATOR_MESSAGES: dict[str, dict[str, Any]] = {
    "challenge": {"v": int, "nonce": str},
    "welcome": {"v": int},
    "error": {"reason": str},
    "to_agent": {"agent": str, "payload": (dict, list, str, int, float, bool, type(None))},
    "flush": {},
    "interact": {"index": int, "trigger": str},
    # live control (executor/control_state.py)
    "pause": {"pause": int},
    "resume": {"pause": int},
    "breakpoints": {"items": list},
    "decide": {"task": int, "hit": int, "action": str},
    "target": {"breakpoint": int, "task": int, "seq": int, "target": (int, float)},
    "query": {"breakpoint": int, "operator": int},
    "live_state": {"request": int, "operator": int, "partition": int},
    "stop": {},
    "g_theta": {"operators": list},  # G(θ)'s operator ids, when a UDF after θ joined it
    "interact_refused": {"request": int, "origin": int, "reason": str},  # --interact-when
    "artifact_ack": {"id": int, "ok": bool},  # an artifact written (or why not: ``reason``)
}
WORKER_FIELDS = {"operator": int, "partition": int, "stage": int, "attempt": int, "task": int}


class ProtocolError(Exception):
    """A frame or message that does not follow the protocol."""


class FrameTooLarge(ProtocolError):
    """A frame longer than the limits: left unread, so the stream cannot go on."""


class BadHeader(ProtocolError):
    """A frame of a valid size whose header is not a JSON object with a ``type``: read
    whole, so the stream goes on at the next frame."""


class EncodedJSON:
    """A value its sender has encoded as JSON text already (a large snapshot delta,
    measured for its size): spliced into the frame as it is, not encoded twice."""

    __slots__ = ("text",)

    def __init__(self, text: str) -> None:
        self.text = text


_SPLICE_MARK = secrets.token_hex(8)  # no user string can be mistaken for a splice point


def dumps(message: dict) -> str:
    """``message`` as compact JSON: ``EncodedJSON`` values spliced in as they are, any
    other value JSON cannot encode written as its ``str``."""
    spliced: list[str] = []

    def default(value: Any) -> Any:
        if isinstance(value, EncodedJSON):
            spliced.append(value.text)
            return f"\x00{_SPLICE_MARK}{len(spliced) - 1}"
        return str(value)

    text = json.dumps(message, separators=(",", ":"), default=default)
    for i, part in enumerate(spliced):
        text = text.replace(f'"\\u0000{_SPLICE_MARK}{i}"', part, 1)
    return text


def encode(message: dict, body: bytes = b"") -> bytes:
    header = dumps(message).encode()
    if len(header) > MAX_HEADER_BYTES or len(body) > MAX_BODY_BYTES:
        raise ProtocolError(f"message {message.get('type')!r} is too large to send")
    return _FRAME.pack(len(header), len(body)) + header + body


def _read_exactly(sock: socket.socket, n: int) -> bytes:
    chunks = bytearray()
    while len(chunks) < n:
        chunk = sock.recv(min(n - len(chunks), 1 << 20))
        if not chunk:
            raise ConnectionError("connection closed")
        chunks += chunk
    return bytes(chunks)


def read_frame(sock: socket.socket) -> tuple[dict, bytes]:
    """Read one frame; raises FrameTooLarge (nothing read past its lengths) or BadHeader
    (the frame read whole)."""
    header_len, body_len = _FRAME.unpack(_read_exactly(sock, _FRAME.size))
    if header_len > MAX_HEADER_BYTES or body_len > MAX_BODY_BYTES:
        raise FrameTooLarge(f"frame too large ({header_len} + {body_len} bytes)")
    raw = _read_exactly(sock, header_len)
    body = _read_exactly(sock, body_len) if body_len else b""
    try:
        message = json.loads(raw)
    except (ValueError, RecursionError) as exc:  # RecursionError: nested too deep
        raise BadHeader(f"header is not JSON: {exc}") from None
    if not isinstance(message, dict) or not isinstance(message.get("type"), str):
        raise BadHeader("header is not an object with a string 'type'")
    return message, body


def validate(message: dict, schema: dict[str, dict[str, Any]]) -> None:
    """Raise ProtocolError unless ``message`` is a known type with typed fields."""
    kind = message.get("type")
    fields = schema.get(kind) if isinstance(kind, str) else None
    if fields is None:
        raise ProtocolError(f"unknown message type {kind!r}")
    for name, expected in fields.items():
        value = message.get(name)
        if not isinstance(value, expected) or (expected is int and isinstance(value, bool)):
            raise ProtocolError(f"{kind}: field {name!r} missing or of the wrong type")
    for report in message["reports"] if kind == "snapshots" else ():
        if not isinstance(report, dict) or report.get("type") != "snapshot":
            raise ProtocolError("snapshots: every report must be a snapshot message")
        validate(report, schema)
    worker = message.get("worker")
    if worker is not None:
        for name, expected in WORKER_FIELDS.items():
            if not isinstance(worker.get(name), expected):
                raise ProtocolError(f"{kind}: worker.{name} missing or not an integer")


def sign(secret: bytes, nonce: str) -> str:
    return hmac.new(secret, nonce.encode(), hashlib.sha256).hexdigest()


def verify(secret: bytes, nonce: str, mac: str) -> bool:
    """Whether ``mac`` answers the challenge (any string: compared as UTF-8 bytes)."""
    return hmac.compare_digest(sign(secret, nonce).encode(), mac.encode("utf-8", "replace"))
