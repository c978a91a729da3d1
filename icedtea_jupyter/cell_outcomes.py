"""What became of each cell the kernel ran: whether it raised, and which run a
``%%icedtea`` cell started. The export (``export/cells.py``) never re-runs a cell that
failed, nor one whose run failed or never ended.

Kept per position in IPython's history (``history_manager.input_hist_raw``), by
history session: a cell is stored there before it runs, so the cell running now is
the last entry. ``post_run_cell`` notes the outcome of each cell that went to history
(``pre_run_cell`` clears its place first).
"""
from __future__ import annotations

from typing import Any

_KEY = "_icedtea_cell_outcomes"


def _outcomes(shell: Any) -> dict[tuple[int, int], dict]:
    if shell is None:  # a magic outside a shell: nothing is noted
        return {}
    found = getattr(shell, _KEY, None)
    if found is None:
        found = {}
        setattr(shell, _KEY, found)
    return found


def _current(shell: Any) -> tuple[int, int] | None:
    """The history session and position of the cell running now."""
    manager = getattr(shell, "history_manager", None)
    cells = getattr(manager, "input_hist_raw", None)
    if not cells:
        return None
    return int(getattr(manager, "session_number", 0) or 0), len(cells) - 1


def note_run(shell: Any, run_id: str | None) -> None:
    """The ``%%icedtea`` cell running now started run ``run_id``."""
    key = _current(shell)
    if key is not None and run_id is not None:
        _outcomes(shell).setdefault(key, {})["run"] = run_id


def after_cell(shell: Any, result: Any) -> None:
    """``post_run_cell``: whether the cell raised (its exception's name)."""
    if not getattr(getattr(result, "info", None), "store_history", False):
        return
    key = _current(shell)
    if key is None:
        return
    error = result.error_before_exec or result.error_in_exec
    outcome = _outcomes(shell).setdefault(key, {})
    outcome["error"] = type(error).__name__ if error is not None else None
    outcome.setdefault("run", None)


def before_cell(shell: Any, info: Any) -> None:
    """``pre_run_cell``: the place the cell is about to take in the history forgets what
    an earlier cell there did (a history reset reuses places)."""
    key = _current(shell)
    if key is not None and getattr(info, "store_history", False):
        _outcomes(shell).pop((key[0], key[1] + 1), None)  # not stored yet: the next place


def outcomes(shell: Any, count: int) -> list[dict | None]:
    """The outcomes of the history's first ``count`` cells after its empty first entry
    (None: not known, a cell that ran before the extension was loaded)."""
    key = _current(shell)
    session = key[0] if key is not None else 0
    known = _outcomes(shell)
    return [known.get((session, index)) for index in range(1, count + 1)]


def watch(shell: Any) -> None:
    """Note the outcome of every cell from now on (once per shell)."""
    events = getattr(shell, "events", None)
    if events is None or getattr(shell, _KEY + "_watched", False):
        return
    events.register("pre_run_cell", lambda info: before_cell(shell, info))
    events.register("post_run_cell", lambda result: after_cell(shell, result))
    setattr(shell, _KEY + "_watched", True)
