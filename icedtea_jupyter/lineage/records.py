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

from ..executor.lineage_jobs import KeyColumn, KeyIndex, KeyNumbers, Picker, TappedKeyNumbers

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


def tapped_key_numbers(upstream: Any, function: Any, parts: list[int]
                       ) -> dict[int, tuple[pa.Array, list]]:
    """Partition -> (``key_numbers`` of ``function``'s outputs, the keys of its inputs
    in position order) on ``parts``: one job over ``upstream`` (a join's output RDD)
    running ``function`` (the operator after the join) as Spark ran it."""
    parts = sorted(p for p in parts if 0 <= p < upstream.getNumPartitions())
    if not parts:
        return {}
    tapped = upstream.mapPartitionsWithIndex(TappedKeyNumbers(function), True)
    rows = upstream.context.runJob(tapped, lambda records: records, parts)
    return {part: (_uint32(numbers), keys) for part, numbers, keys in rows}


def key_columns(wanted: dict[int, tuple[Any, list[int]]]) -> dict[tuple[int, int], list]:
    """(node, partition) -> its records' keys in position order, for each node's
    ``(rdd, partitions)``: one Spark job over them all (a union of the RDDs)."""
    tagged: list[Any] = []
    parts: list[int] = []
    for node, (rdd, wanted_parts) in sorted(wanted.items()):
        offset = sum(t.getNumPartitions() for t in tagged)
        parts += [offset + p for p in sorted(wanted_parts) if 0 <= p < rdd.getNumPartitions()]
        tagged.append(rdd.mapPartitionsWithIndex(KeyColumn(node)))
    if not parts:
        return {}
    union = tagged[0].context.union(tagged) if len(tagged) > 1 else tagged[0]
    if union.getNumPartitions() != sum(t.getNumPartitions() for t in tagged):
        raise RuntimeError("Spark merged the partitions of a union of lineage RDDs")
    rows = union.context.runJob(union, lambda records: records, parts)
    return {(node, part): keys for node, part, keys in rows}


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
