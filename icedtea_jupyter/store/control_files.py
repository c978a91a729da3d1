"""The run store's live-control files (``control/*.jsonl``, written by ``control/``),
and the edits made at hits applied to an operator's input for replay.

An edit is ``{operator, partition, index, action, kind, record, replacement}``: ``index``
is the record's position in the operator's input as Spark gave it, ``action`` ``skip`` or
``replace``, ``kind`` ``condition`` (the operator never took the record) or ``error`` (it
took it and raised: a skipped one gave no output).
"""
from __future__ import annotations

import bisect
import os
from typing import Any

from ..executor.control import SkippedRecord
from ..executor.state import decode
from . import layout
from .run_store import append_lines, read_lines


def append(run_path: str, name: str, *rows: dict) -> None:
    path = layout.control_path(run_path, name)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    append_lines(path, *rows)


def read(run_path: str, name: str) -> list[dict]:
    return read_lines(layout.control_path(run_path, name))


def edits_of(run_path: str, operator: int, partition: int) -> list[dict]:
    return [e for e in read(run_path, "edits")
            if e["operator"] == operator and e["partition"] == partition]


def spark_row(fields: dict) -> Any:
    from pyspark.sql import Row

    return Row(**fields)


def apply_edits(records: list, edits: list[dict]) -> list:
    """``records`` (an operator's input as Spark gives it) as the operator took them in
    the run: skipped ones out (or, taken and skipped after an exception, a
    ``SkippedRecord``), replaced ones replaced."""
    if not edits:
        return records
    by_index = {e["index"]: e for e in edits}
    taken = []
    for index, record in enumerate(records):
        edit = by_index.get(index)
        if edit is None:
            taken.append(record)
        elif edit["action"] == "replace":
            taken.append(decode(edit["replacement"], spark_row))
        elif edit["kind"] == "error":
            taken.append(SkippedRecord())
    return taken


def apply_error_edits(taken: list, edits: list[dict]) -> list:
    """``taken`` (an operator's input as it took it, recorded with ``--record-inputs``:
    conditional edits already made, a culprit kept raw) with the edits made after an
    exception: a skipped culprit becomes a ``SkippedRecord``, a replaced one its
    replacement. An edit's index counts Spark's input, so the records skipped at
    conditional breakpoints before it are taken off."""
    errors = [e for e in edits if e["kind"] == "error"]
    if not errors:
        return taken
    dropped = sorted(e["index"] for e in edits
                     if e["kind"] == "condition" and e["action"] == "skip")
    edited = list(taken)
    for edit in errors:
        at = edit["index"] - bisect.bisect_left(dropped, edit["index"])
        edited[at] = SkippedRecord() if edit["action"] == "skip" \
            else decode(edit["replacement"], spark_row)
    return edited
