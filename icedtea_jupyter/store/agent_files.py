"""The files the samples and summaries agents' coordinators write, and their reading."""
from __future__ import annotations

import json
import os
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from . import layout
from .run_store import write_json


def write_sample(run: str, op_id: int, rows: list[dict]) -> None:
    """Operator ``op_id``'s merged sample as Parquet (a column whose values mix types
    is kept as their strings)."""
    path = layout.with_parent(layout.sample_path(run, op_id))
    try:
        table = pa.Table.from_pylist(rows)
    except (pa.ArrowException, OverflowError):
        names = list(dict.fromkeys(k for row in rows for k in row))
        table = pa.table({n: pa.array([_text(row.get(n)) for row in rows], pa.string())
                          for n in names})
    tmp = layout.temp_path(path)
    pq.write_table(table, tmp)
    os.replace(tmp, path)


def _text(value: Any) -> str | None:
    return None if value is None else str(value)


def read_sample(run: str, op_id: int) -> pa.Table | None:
    """Operator ``op_id``'s sample, or None if none was written."""
    path = layout.sample_path(run, op_id)
    return pq.read_table(path) if os.path.exists(path) else None


def write_summary(run: str, op_id: int, summary: dict) -> None:
    write_json(layout.with_parent(layout.summary_path(run, op_id)), summary)


def read_summary(run: str, op_id: int) -> dict | None:
    """Operator ``op_id``'s merged summary, or None if none was written."""
    path = layout.summary_path(run, op_id)
    if not os.path.exists(path):
        return None
    with open(path, encoding="utf-8") as stream:
        return json.load(stream)
