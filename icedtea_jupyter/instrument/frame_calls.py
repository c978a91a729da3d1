"""The DataFrame calls a recording cell made, kept as called (receiver, arguments), so
that DataFrame lineage (``lineage/dataframe.py``) can make them again on the cell's
DataFrames with hidden id columns added at their sources."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class FrameCall:
    """``receiver.<api>(*args, **kwargs)``; ``function``: a hosted operator's."""

    api: str
    receiver: Any
    args: tuple
    kwargs: dict
    function: Any = None


def column_text(column: Any) -> str:
    """A Column's expression text: ``Column<'plus_one(v)'>`` gives ``plus_one(v)``."""
    text = str(column)
    return text[len("Column<'"):-len("'>")] if text.startswith("Column<'") else text


def remember(recorder: Any, node_id: int, call: FrameCall) -> None:
    """Keep ``call`` as the one that made node ``node_id`` (in a ``--lineage`` run; a
    join's in a ``--skew`` run, whose keys Spark counts on request)."""
    if not getattr(recorder.run, "lineage", False) and not (
            getattr(recorder.run, "skew", False) and call.api == "join"):
        return
    calls = recorder.__dict__.setdefault("frame_calls", {})
    calls[node_id] = call


def calls_of(recorder: Any) -> dict[int, FrameCall]:
    """Node -> the DataFrame call that made it (none for a reopened run)."""
    return getattr(recorder, "frame_calls", {}) if recorder is not None else {}
