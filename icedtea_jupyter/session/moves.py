"""What a debugger move showed, and the recorded states the user's code read, kept in
the action log for the exported notebook.

A view up to ``LARGEST`` characters is kept whole; a larger one in its bounded form
(``export/states.py``: each long state as its start, length and SHA-256 digest), which
the export prints again and nbval compares. A view that cannot be kept at all (too
many workers, or unreadable) is logged with ``unshown``: why, which the export says."""
from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from ..export.states import bounded, shown, stable, traced
from ..snapshots.snapshot import Snapshot
from .actions import current_source

LOG = logging.getLogger("icedtea_jupyter")
LARGEST = 200_000  # characters kept whole per move; a larger view is kept bounded
_MOST_WORKERS = 64


def shown_by(snapshot: Any) -> dict:
    """The action log's fields for this move: ``shown`` (the text the export prints
    after it), ``bounded`` (True: in its bounded form), or ``unshown`` (why not kept)."""
    try:
        workers = len(snapshot.workers())
        if workers > _MOST_WORKERS:
            return {"unshown": f"the view has {workers} workers, more than the "
                               f"{_MOST_WORKERS} an exported move prints"}
        text = shown(snapshot)
        if len(text) <= LARGEST:
            return {"shown": text}
        return {"shown": shown(snapshot, bounded_states=True), "bounded": True}
    except Exception as exc:  # a view that cannot be shown: the move is logged without it
        LOG.debug("icedtea: no text for a move", exc_info=True)
        return {"unshown": f"its view could not be read ({type(exc).__name__})"}


def kept_text(text: str) -> dict:
    """The action log's fields for a value read as ``text`` (whole, or bounded)."""
    return {"shown": text} if len(text) <= LARGEST else {"shown": bounded(text),
                                                         "bounded": True}


def logged_trace(trace: Any, call: str, record: Callable[..., Any]) -> Any:
    """``trace`` with its ``call`` and what it found (``traced``) in the action log; its
    ``replay()`` logs itself with the outputs it gave."""
    try:
        found = {"shown": traced(trace)}
    except Exception as exc:  # a trace that cannot be counted is logged without it
        found = {"unshown": f"the trace could not be counted ({type(exc).__name__})"}
    record(call, **found)
    trace.call = call

    def log(replayed: str, outputs: list | None = None) -> Any:  # what replay() gave
        return record(replayed, **(kept_text(stable(outputs)) if outputs is not None else {}))

    trace.log = log
    return trace


class LoggedSnapshot(Snapshot):
    """``run.snapshot(k)`` whose ``state`` reads from the user's code (not the sidebar's
    or the panel's views) are logged as ``run.snapshot(k).state(op, p)`` with the value."""

    record: Callable[..., Any]

    @classmethod
    def of(cls, snapshot: Snapshot, record: Callable[..., Any]) -> Snapshot:
        logged = cls(snapshot.history, snapshot.interaction)
        logged.record = record
        return logged

    def state(self, operator: str, partition: int) -> dict | None:
        value = super().state(operator, partition)
        if current_source() == "api":
            self.record(f"run.snapshot({self.index}).state({operator!r}, {partition!r})",
                        **kept_text(stable(value)))
        return value
