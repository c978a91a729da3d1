"""What a debugger move showed, and the recorded states the user's code read, kept in
the action log for the exported notebook."""
from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from ..export.states import shown, stable
from ..snapshots.snapshot import Snapshot
from .actions import current_source

LOG = logging.getLogger("icedtea_jupyter")
_LARGEST = 200_000  # characters kept per move; a larger view is re-shown unchecked
_MOST_WORKERS = 64


def shown_by(snapshot: Any) -> str | None:
    """The text the export prints after this move (None: too large to keep, or the
    view could not be read)."""
    try:
        if len(snapshot.workers()) > _MOST_WORKERS:
            return None
        text = shown(snapshot)
    except Exception:  # a view that cannot be shown: the move is logged without it
        LOG.debug("icedtea: no text for a move", exc_info=True)
        return None
    return text if len(text) <= _LARGEST else None


class LoggedSnapshot(Snapshot):
    """``run.snapshot(k)`` whose ``state`` reads from the user's code (not the sidebar's
    or the panel's views) are logged as ``run.snapshot(k).state(op, p)`` with the value."""

    record: Callable[[str, str | None], Any]

    @classmethod
    def of(cls, snapshot: Snapshot, record: Callable[[str, str | None], Any]) -> Snapshot:
        logged = cls(snapshot.history, snapshot.interaction)
        logged.record = record
        return logged

    def state(self, operator: str, partition: int) -> dict | None:
        value = super().state(operator, partition)
        if current_source() == "api":
            text = stable(value)
            self.record(f"run.snapshot({self.index}).state({operator!r}, {partition!r})",
                        text if len(text) <= _LARGEST else None)
        return value
