"""``log_result(fn, *args)``: IcedTea's logResult for non-deterministic calls.

While recording, calls ``fn`` and keeps its result in the replay log of the operator
whose code made the call; while replaying, returns the logged result instead.
"""
from __future__ import annotations

import sys
from contextvars import ContextVar
from typing import Any, Callable

from .host import WorkerHost
from .state import encode

#: set by the replay engine: an object with ``next_result()``
replaying: ContextVar[Any] = ContextVar("icedtea_replaying", default=None)

_LOOPS = {WorkerHost.map_records.__code__, WorkerHost.filter_records.__code__,
          WorkerHost.flat_map_records.__code__, WorkerHost.run_partition.__code__}


def _calling_host() -> WorkerHost | None:
    frame = sys._getframe(2)
    while frame is not None:
        if frame.f_code in _LOOPS:
            return frame.f_locals.get("self")
        frame = frame.f_back
    return None


def log_result(fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    """Call ``fn(*args, **kwargs)`` and log its result for replay (or replay it)."""
    replay = replaying.get()
    if replay is not None:
        return replay.next_result()
    value = fn(*args, **kwargs)
    host = _calling_host()
    if host is not None and host.tt is not None:
        host.tt.results.append(encode(value))
    return value
