"""The action log of a run: every UI action as its equivalent Python call, in order.

Interactions, jumps and steps record themselves, from whichever side they come: the
sidebar (comm requests), the in-cell panel or the user's own code (``"api"``, the
default). A caller states its side with ``with acting_as("panel"): ...`` around the
API call; the source lives in a context variable, so it is per thread and per call.
The log persists append-only in the run store (``store/layout.py``) and is reloaded
when the run is reopened, so a debugging session can be replayed or exported.
"""
from __future__ import annotations

import contextlib
import contextvars
import json
import threading
import time
from collections.abc import Callable, Iterator

from ..store import layout
from ..store.run_store import read_lines

SOURCES = ("api", "sidebar", "panel")
WIRE = ("time", "source", "call")  # what the views are told of an action
_SOURCE: contextvars.ContextVar[str] = contextvars.ContextVar("icedtea_source", default="api")


def current_source() -> str:
    """The side the current call comes from ("api" unless a view said otherwise)."""
    return _SOURCE.get()


@contextlib.contextmanager
def acting_as(source: str) -> Iterator[None]:
    """Record the API calls made inside the block as coming from ``source``."""
    if source not in SOURCES:
        raise ValueError(f"unknown action source {source!r} (one of {', '.join(SOURCES)})")
    token = _SOURCE.set(source)
    try:
        yield
    finally:
        _SOURCE.reset(token)


class ActionLog:
    """``{"time", "source", "call"}`` dicts in the order they happened (thread-safe)."""

    def __init__(self, store_path: str, on_added: Callable[[dict], None]) -> None:
        self.path = layout.actions_path(store_path)
        self.on_added = on_added
        self._actions = read_lines(self.path)
        self._lock = threading.RLock()

    def record(self, call: str, shown: str | None = None, **kept: object) -> dict:
        """Append ``call`` with the current source (and, for a move, what it ``shown``:
        the export prints it again; ``kept``: how, ``bounded=True`` or ``unshown=why``);
        tells ``on_added`` in log order."""
        action: dict = {"time": time.time(), "source": _SOURCE.get(), "call": call}
        if shown is not None:
            action["shown"] = shown
        action.update({k: v for k, v in kept.items() if v is not None})
        with self._lock:
            self._actions.append(action)
            try:
                with open(self.path, "a", encoding="utf-8") as out:
                    out.write(json.dumps(action) + "\n")
            except OSError:  # a read-only store (someone else's run): kept in memory
                pass
            self.on_added({k: action[k] for k in WIRE})  # for views: not what it showed
        return action

    def list(self) -> list[dict]:
        with self._lock:
            return [dict(action) for action in self._actions]

