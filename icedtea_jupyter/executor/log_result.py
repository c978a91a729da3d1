"""``log_result(fn, *args)``: IcedTea's logResult for non-deterministic calls.

While recording, calls ``fn`` and keeps its result in the replay log of the operator
whose code made the call; while replaying, returns the logged result instead.
"""
from __future__ import annotations

import sys
from collections.abc import Callable
from contextvars import ContextVar
from types import FrameType
from typing import Any

from .blocks import host_calling, registered_hosts
from .host import WorkerHost
from .loops import LOOP_CODES
from .state import encode
from .timetravel import TimeTravel

#: set by the replay engine: an object with ``next_result()``
replaying: ContextVar[Any] = ContextVar("icedtea_replaying", default=None)


def _calling_host() -> WorkerHost | None:
    """The host whose function made the call: the innermost record loop on the stack,
    or (hosts in blocks, no loop of theirs on the stack) the chain's host whose
    function's frame is."""
    frame: FrameType | None = sys._getframe(2)
    seen: list[FrameType] = []
    registered = registered_hosts()
    while frame is not None:
        if frame.f_code in LOOP_CODES:
            return frame.f_locals.get("host")
        host = host_calling(frame, seen, registered)
        if host is not None:
            return host
        seen.append(frame)
        frame = frame.f_back
    return None


def log_result(fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    """Call ``fn(*args, **kwargs)`` and log its result for replay (or replay it)."""
    replay = replaying.get()
    if replay is not None:
        return replay.next_result()
    value = fn(*args, **kwargs)
    host = _calling_host()
    tt = host.plugins.get(TimeTravel) if host is not None else None
    if tt is not None:
        tt.results.append(encode(value))
    return value
