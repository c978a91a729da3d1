"""Messages of the ``icedtea`` comm (kernel side). Methods, their params and events come
from ``protocol.json`` (``schema.py``), which ``labextension/src/comm/protocol.ts`` is
checked against; ``docs/protocol.md`` documents every message.

Frontend -> kernel: ``{"kind": "request", "id": int, "method": str, "params": {}}``
Kernel -> frontend: ``{"kind": "reply", "id": int, "ok": true, "result": ...}``
                    ``{"kind": "reply", "id": int, "ok": false, "error": {"type", "message"}}``
                    ``{"kind": "event", "event": str, "data": {...}}``
"""
from __future__ import annotations

from .schema import SCHEMA, enum_values, fields, python_type

PROTOCOL_VERSION: int = SCHEMA["version"]

# method -> required params (name -> type), in the schema's order
REQUEST_METHODS: dict[str, dict[str, type]] = {
    method: {name: python_type(kind) for name, (kind, required)
             in fields(spec["params"]).items() if required}
    for method, spec in SCHEMA["requests"].items()}

# optional params of every request: ``source`` names the side for the action log
SOURCES = enum_values("Source")
DEFAULT_SOURCE = "sidebar"

# run.added, run.progress, run.status, run.alert, run.interaction, debug.moved (a jump or
# step, from anywhere), debug.preparing (fork checkpoints), run.action
EVENT_TYPES: tuple[str, ...] = tuple(SCHEMA["events"])


class RequestError(Exception):
    """A request the kernel cannot serve; sent back as an error reply."""

    def __init__(self, message: str, kind: str = "bad_request") -> None:
        super().__init__(message)
        self.kind = kind


def validate_request(message: object) -> tuple[int, str, dict]:
    """``(id, method, params)`` of a well-formed request, else RequestError."""
    if not isinstance(message, dict) or message.get("kind") != "request":
        raise RequestError("not a request: expected an object with kind 'request'")
    request_id = message.get("id")
    if not isinstance(request_id, int) or isinstance(request_id, bool):
        raise RequestError("the request has no integer id")
    method = message.get("method")
    if method not in REQUEST_METHODS:
        raise RequestError(f"unknown method {method!r}", "unknown_method")
    params = message.get("params", {})
    if not isinstance(params, dict):
        raise RequestError("params must be an object")
    for name, expected in REQUEST_METHODS[method].items():
        value = params.get(name)
        if not isinstance(value, expected) or (expected is int and isinstance(value, bool)):
            raise RequestError(f"{method}: parameter {name!r} is missing or not a "
                               f"{expected.__name__}")
    if params.get("source", DEFAULT_SOURCE) not in SOURCES:
        raise RequestError(f"{method}: parameter 'source' must be one of {', '.join(SOURCES)}")
    return request_id, method, params


def reply(request_id: int, result: object) -> dict:
    return {"kind": "reply", "id": request_id, "ok": True, "result": result}


def error_reply(request_id: int | None, kind: str, message: str) -> dict:
    return {"kind": "reply", "id": request_id, "ok": False,
            "error": {"type": kind, "message": message}}


def event(name: str, data: dict) -> dict:
    assert name in EVENT_TYPES, name
    return {"kind": "event", "event": name, "data": data}
