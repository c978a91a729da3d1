"""Message types of the ``icedtea`` comm (kernel side). ``labextension/src/comm/protocol.ts``
defines the same lists for the frontend; ``tests/unit/test_comm.py`` keeps them
equal; ``docs/protocol.md`` documents every message.

Frontend -> kernel: ``{"kind": "request", "id": int, "method": str, "params": {}}``
Kernel -> frontend: ``{"kind": "reply", "id": int, "ok": true, "result": ...}``
                    ``{"kind": "reply", "id": int, "ok": false, "error": {"type", "message"}}``
                    ``{"kind": "event", "event": str, "data": {...}}``
"""
from __future__ import annotations

PROTOCOL_VERSION = 1

# method -> required params (name -> type)
REQUEST_METHODS: dict[str, dict[str, type]] = {
    "hello": {},
    "runs.list": {},
    "run.get": {"run": str},
    "run.partitions": {"run": str, "operator": str},
    "run.open": {"path": str},
    # time travel (docs/protocol.md)
    "run.interactions": {"run": str},
    "run.interact": {"run": str},
    "run.snapshot": {"run": str, "index": int},
    "run.state": {"run": str, "index": int, "operator": str, "partition": int},
    "run.page": {"run": str, "index": int, "operator": str, "partition": int,
                 "variable": str, "start": int, "size": int},
    "debug.view": {"run": str},
    "debug.jump": {"run": str, "index": int},
    "debug.step_over": {"run": str, "partition": int},
    "debug.step_into": {"run": str, "partition": int, "operator": str},
    "debug.step_out": {"run": str, "partition": int},
    "debug.state": {"run": str, "operator": str, "partition": int},
    "debug.cancel": {"run": str},
    "debug.progress": {"run": str},
    "run.actions": {"run": str},
}

# optional params of every request: ``source`` names the side for the action log
SOURCES = ("sidebar", "panel")
DEFAULT_SOURCE = "sidebar"

EVENT_TYPES: tuple[str, ...] = (
    "run.added",     # data: {"run": RunListItem}
    "run.progress",  # data: {"run": id, "status", "duration", "progress": [...]}
    "run.status",    # data: {"run": id, "status", "error", "warnings"}
    "run.alert",     # data: {"run": id, "alert": {...}}
    "run.interaction",  # data: {"run": id, "interaction": Interaction} (requested, completed)
    "debug.moved",   # data: {"run": id, "view": DebugView} (a jump or step, from anywhere)
    "debug.preparing",  # data: {"run": id, "progress": ReplayProgress} (fork checkpoints)
    "run.action",    # data: {"run": id, "action": {"time", "source", "call"}}
)


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
