"""A pipeline's result and lineage computed in plain Python, without Spark or icedtea.

Records are carried with the set of source records they came from (their witnesses,
Titian's backward lineage): ``map``/``filter``/``flatMap`` keep a record's witnesses, a
shuffle or a sort passes them on, an aggregation unions its group's, ``union`` brings the
second source's records in. Source records are numbered: ``DATA`` first, then ``OTHER``.
A pipeline with a step whose output depends on order or position (a stateful operator,
``zipWithIndex``) is not emulated (``emulable`` is False): only Spark's plain run is its
oracle.
"""
from __future__ import annotations

from collections import Counter
from typing import Any

from .grammar import ELEMENTWISE, STATEFUL, Pipeline

Item = tuple[Any, frozenset[int]]  # a record and its witnesses


def emulable(pipeline: Pipeline) -> bool:
    return not any(s.kind in STATEFUL for s in pipeline.steps)


def emulate(pipeline: Pipeline) -> list[Item]:
    """The pipeline's output records (as a bag) with their witnesses."""
    items: list[Item] = [(r, frozenset([i])) for i, r in enumerate(pipeline.data)]
    offset = len(pipeline.data)
    for step in pipeline.steps:
        if step.kind in ELEMENTWISE:
            items = _elementwise(step.kind, eval(step.function()), items)  # noqa: S307
        elif step.kind == "union":
            items += [(r, frozenset([offset + i])) for i, r in enumerate(pipeline.other)]
        elif step.kind == "reduceByKey":
            items = _grouped(items, lambda kv: kv[0],
                             lambda key, rows: (key, sum(v or 0 for _, v in rows)))
        elif step.kind == "groupCount":
            items = _grouped(items, lambda kv: kv[0], lambda key, rows: (key, len(rows)))
        elif step.kind == "distinct":
            items = _grouped(items, lambda kv: kv, lambda key, rows: key)
    return items


def sources(pipeline: Pipeline) -> list:
    return list(pipeline.data) + list(pipeline.other)


def witnesses(pipeline: Pipeline, items: list[Item], row: Any) -> Counter:
    """The source records (a bag of their reprs) of every output record equal to ``row``."""
    found: set[int] = set()
    for record, ids in items:
        if record == row:
            found |= ids
    everything = sources(pipeline)
    return Counter(repr(everything[i]) for i in found)


def forward(pipeline: Pipeline, items: list[Item], source: Any) -> set[str]:
    """The output records (their reprs) that a source record equal to ``source`` went into."""
    everything = sources(pipeline)
    ids = {i for i, r in enumerate(everything) if r == source}
    return {repr(record) for record, found in items if found & ids}


def bag(records: list) -> Counter:
    return Counter(map(repr, records))


def _elementwise(kind: str, f: Any, items: list[Item]) -> list[Item]:
    if kind == "filter":
        return [(r, w) for r, w in items if f(r)]
    if kind == "flatMap":
        return [(out, w) for r, w in items for out in f(r)]
    if kind == "mapValues":
        return [((r[0], f(r[1])), w) for r, w in items]
    return [(f(r), w) for r, w in items]


def _grouped(items: list[Item], key: Any, make: Any) -> list[Item]:
    groups: dict[Any, list[Item]] = {}
    for item in items:
        groups.setdefault(key(item[0]), []).append(item)
    return [(make(k, [r for r, _ in group]), frozenset().union(*(w for _, w in group)))
            for k, group in groups.items()]

