"""How long replay processes live: the kernel keeps those of the runs it debugged last.

``run.debugger()`` starts a debugger's processes (a root, its parked forks, the active
one: ``remote.py``) once per run. They end when the debugger is closed: pushed out by
newer runs' debuggers (``MAX_LIVE``), its run replaced by a re-run of the same cell or
deleted (``close_debugger``), or the kernel exiting (``close_all``, at ``atexit``). A
kernel that dies without exiting is the root's own watch (``process.end_with_parent``).
"""
from __future__ import annotations

import atexit
import threading
from typing import Any, Protocol


class Closable(Protocol):
    closed: bool

    def close(self) -> None: ...


MAX_LIVE = 3
_LIVE: list[Closable] = []  # the debuggers whose replay processes are kept, oldest first
_LOCK = threading.Lock()


def keep(debugger: Closable) -> None:
    """A new debugger's processes are kept; the oldest beyond ``MAX_LIVE`` are closed
    (they start again when their run is next debugged)."""
    with _LOCK:
        _LIVE.append(debugger)
        stale = _LIVE[:-MAX_LIVE]
        del _LIVE[:-MAX_LIVE]
    for old in stale:
        old.close()


def forget(debugger: Closable) -> None:
    """A closed debugger: no longer kept."""
    with _LOCK:
        if debugger in _LIVE:
            _LIVE.remove(debugger)


def live() -> list[Closable]:
    with _LOCK:
        return list(_LIVE)


def close_debugger(run: Any) -> bool:
    """End the replay processes of ``run``'s debugger, if it has any; ``run.debugger()``
    starts them again. True if it had."""
    debugger = getattr(run, "current_debugger", None)
    if debugger is None or debugger not in live() or debugger.closed:
        return False
    debugger.close()
    return True


def close_all() -> None:
    """End every replay process of this kernel."""
    for debugger in live():
        debugger.close()


atexit.register(close_all)  # the kernel exits (a shutdown from JupyterLab, exit(), EOF)
