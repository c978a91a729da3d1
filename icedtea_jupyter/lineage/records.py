"""The records of a trace, regenerated with Spark from the pipeline this kernel ran.

Lineage tables hold positions; the records at them are recomputed, like time travel's
inputs (``replay/inputs.py``): a job over the partitions concerned of the operator's
RDD, keeping only the positions asked for. A run reopened after a kernel restart has
no pipeline: its traces have positions and no records (their notes say so).
"""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pyarrow as pa

from ..executor.lineage import KeyIndex, KeyNumbers, Picker

Positions = dict[int, set[int]]  # partition -> positions


def fetch(rdd: Any, wanted: dict[int, list[int] | None]) -> dict[tuple[int, int], Any]:
    """(partition, position) -> record, for the wanted positions of ``rdd``."""
    parts = sorted(p for p in wanted if 0 <= p < rdd.getNumPartitions())
    if not parts:
        return {}
    picked = rdd.mapPartitionsWithIndex(Picker(wanted))
    rows = rdd.context.runJob(picked, lambda records: records, parts)
    return {(part, position): record for part, position, record in rows}


def key_index(rdd: Any, parts: list[int]) -> dict[int, dict[Any, Any]]:
    """Partition -> {key: positions} of ``rdd``'s records on ``parts``."""
    parts = sorted(p for p in parts if 0 <= p < rdd.getNumPartitions())
    if not parts:
        return {}
    indexed = rdd.mapPartitionsWithIndex(KeyIndex())
    return dict(rdd.context.runJob(indexed, lambda records: records, parts))


def key_numbers(rdd: Any, parts: list[int]) -> dict[int, pa.Array]:
    """Partition -> each record's key numbered as first seen there (``KeyNumbers``),
    for ``rdd``'s records on ``parts``: a map side's links to its combiners."""
    parts = sorted(p for p in parts if 0 <= p < rdd.getNumPartitions())
    if not parts:
        return {}
    numbered = rdd.mapPartitionsWithIndex(KeyNumbers())
    return {part: _uint32(numbers)
            for part, numbers in rdd.context.runJob(numbered, lambda records: records, parts)}


def _uint32(numbers: Any) -> pa.Array:
    return pa.Array.from_buffers(pa.uint32(), len(numbers), [None, pa.py_buffer(numbers)])


def everything(rdd: Any) -> dict[int, list[int] | None]:
    """Every partition of ``rdd``, whole."""
    return dict.fromkeys(range(rdd.getNumPartitions()))


def untag_combiner(record: Any) -> Any:
    """A map side's output ``(key, (partition, position, combiner))`` as ``(key, combiner)``."""
    key, (_, _, combiner) = record
    return key, combiner


Fetch = Callable[[int, dict[int, list[int] | None]], dict[tuple[int, int], Any]]
