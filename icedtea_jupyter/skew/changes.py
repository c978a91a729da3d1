"""What changed in a live skew view since the last one sent: the rows to put and the rows
to take away, so that the sidebar redraws only those (issue 13's live budgets).

A view (``SkewReport.live_view``) has four row lists keyed by their identity:
partitions (by partition), the bars' stacked rows (by partition and key segment), the
heat map's cells (by operator and partition) and the load over time's points (by
series and time). The short lists (heavy keys, flags)
and the counts travel whole.
"""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

ROW_KEYS: dict[str, Callable[[dict], Any]] = {
    "partitions": lambda row: row["partition"],
    "bars": lambda row: (row["partition"], row["segment"]),
    "cells": lambda row: (row["operator"], row["partition"]),
    "timeline": lambda row: (row["series"], row["seconds"]),
}
WHOLE = ("keys", "skewed", "error", "records", "estimated", "bound", "waiting_note",
         "timeline_note")


class LiveChanges:
    """The rows last sent for one (run, operator); ``changes(view)`` diffs a new view."""

    def __init__(self, operator: str, timeline_operator: str = "", span: int = 1) -> None:
        self.operator = operator
        self.timeline_operator = timeline_operator  # whose load over time was sent
        self.span = span  # the partitions a heat map column spans in the chart sent
        self._sent: dict[str, dict[Any, dict]] = {kind: {} for kind in ROW_KEYS}
        self._whole: dict[str, Any] = {}

    def same_charts(self, view: dict) -> bool:
        """Whether ``view``'s rows fit the charts sent: the same operator's load over
        time, heat map columns of the same span (a view without cells: unknown, yes)."""
        return (view["timeline_operator"] == self.timeline_operator
                and view.get("span", self.span) == self.span)

    def changes(self, view: dict) -> dict | None:
        """The changed rows of ``view`` (``{kind: rows}``, ``removed_<kind>: keys`` and
        the changed whole fields), or None when nothing changed. A kind ``view`` lacks
        is unchanged."""
        out: dict[str, Any] = {}
        for kind, key_of in ROW_KEYS.items():
            if kind not in view:  # not read this time (``live_view(every=False)``)
                out[kind], out[f"removed_{kind}"] = [], []
                continue
            rows = {_hashable(key_of(row)): row for row in view[kind]}
            sent = self._sent[kind]
            changed = [row for key, row in rows.items() if sent.get(key) != row]
            removed = [list(key) if isinstance(key, tuple) else key
                       for key in sent if key not in rows]
            self._sent[kind] = rows
            out[kind], out[f"removed_{kind}"] = changed, removed
        for name in WHOLE:
            if self._whole.get(name, ...) != view[name]:
                out[name] = self._whole[name] = view[name]
        moved = any(out[kind] or out[f"removed_{kind}"] for kind in ROW_KEYS)
        return out if moved or set(out) & set(WHOLE) else None


def _hashable(key: Any) -> Any:
    return tuple(key) if isinstance(key, list) else key
