"""Summaries: per operator and field of its input, count, nulls, distinct, min/max, mean,
quantiles (``--agent summaries``).

Each worker appends its input records to a list by a C call per record (the worker
keeps its fast block loop) and, about four times a second and at its end, folds the
list into one ``FieldSketch`` per field, column by column: exact counts, nulls, min,
max, sum and sum of squares, and Apache DataSketches' HyperLogLog (distinct values)
and KLL (quantiles) sketches. The coordinator merges the workers' sketches of each
operator and writes them to the run store (``summaries/op<o>.json``);
``run.summaries(operator)`` and ``run.summary_diff(other)`` read them (``summaries/``).

Workers import DataSketches (and the numpy it brings): the one library beside pyarrow
that the executor island lets an agent use, for its sketches.
"""
from __future__ import annotations

import base64
import threading
from collections.abc import Iterator
from itertools import filterfalse
from operator import methodcaller
from typing import Any

import datasketches as ds
import numpy as np

from ..coordinator.agent import CoordinatorAgent
from ..executor.agent import Agent
from .fields import field_names, field_values, plain
from .samples import _attempt, successful_attempts

HLL_LG_K = 12  # HyperLogLog: 4,096 buckets, about 1.6 % relative error
KLL_K = 200  # KLL: about 1.65 % normalized rank error


def _pack(sketch: Any) -> str:
    packed = sketch.serialize_compact() if isinstance(sketch, ds.hll_sketch) \
        else sketch.serialize()
    return base64.b64encode(packed).decode("ascii")


class FieldSketch:
    """What is known of one field: exact counts and extremes, sketched distinct values
    and quantiles. ``add`` folds a column of values; ``merge`` another FieldSketch."""

    def __init__(self) -> None:
        self.count = self.nulls = self.numbers = 0
        self.kinds: set[str] = set()
        self.low: Any = None
        self.high: Any = None
        self.total = self.squares = 0.0
        self.hll = ds.hll_sketch(HLL_LG_K)
        self.kll = ds.kll_doubles_sketch(KLL_K)

    def add(self, column: list) -> None:
        """Fold a column of values (None is a null)."""
        self.count += len(column)
        nulls = column.count(None)
        self.nulls += nulls
        values = [v for v in column if v is not None] if nulls else column
        if not values:
            return
        types = set(map(type, values))
        if types <= {int, float, bool} and types != {bool}:
            self._numbers(np.asarray(values, dtype=np.float64))
            return
        texts = values if types == {str} else list(map(repr, values))
        self.kinds.add("text" if types == {str} else "other")
        for text in set(texts):
            self.hll.update(text)
        self._extremes(min(texts), max(texts))

    def _numbers(self, array: np.ndarray) -> None:
        self.kinds.add("number")
        finite = array[np.isfinite(array)]
        self.numbers += len(finite)
        self.total += float(finite.sum())
        self.squares += float(np.square(finite).sum())
        self.kll.update(finite)
        for value in np.unique(array).tolist():
            self.hll.update(value)
        if len(finite):
            self._extremes(float(finite.min()), float(finite.max()))

    def _extremes(self, low: Any, high: Any) -> None:
        try:
            self.low = low if self.low is None or low < self.low else self.low
            self.high = high if self.high is None or high > self.high else self.high
        except TypeError:  # numbers and texts in one field: the extremes of the first kind
            pass

    def to_json(self) -> dict:
        return {"count": self.count, "nulls": self.nulls, "numbers": self.numbers,
                "kinds": sorted(self.kinds), "min": plain(self.low), "max": plain(self.high),
                "sum": self.total, "squares": self.squares, "hll": _pack(self.hll),
                "kll": _pack(self.kll)}

    @classmethod
    def from_json(cls, data: dict) -> FieldSketch:
        sketch = cls()
        sketch.count, sketch.nulls = data["count"], data["nulls"]
        sketch.numbers, sketch.kinds = data["numbers"], set(data["kinds"])
        sketch.low, sketch.high = data["min"], data["max"]
        sketch.total, sketch.squares = data["sum"], data["squares"]
        sketch.hll = ds.hll_sketch.deserialize(base64.b64decode(data["hll"]))
        sketch.kll = ds.kll_doubles_sketch.deserialize(base64.b64decode(data["kll"]))
        return sketch

    def merge(self, other: FieldSketch) -> None:
        self.count += other.count
        self.nulls += other.nulls
        self.numbers += other.numbers
        self.kinds |= other.kinds
        self.total += other.total
        self.squares += other.squares
        if other.low is not None:
            self._extremes(other.low, other.high)
        union = ds.hll_union(HLL_LG_K)
        union.update(self.hll)
        union.update(other.hll)
        self.hll = union.get_result()
        self.kll.merge(other.kll)


def fold(sketches: dict[str, FieldSketch], batch: list) -> None:
    """Fold a batch of records into the sketches of their fields, column by column."""
    shapes = set(map(type, batch))
    if len(shapes) == 1 and issubclass(shapes.pop(), tuple) and \
            len(set(map(len, batch))) == 1:
        for name, column in zip(field_names(batch[0]), zip(*batch)):
            sketches.setdefault(name, FieldSketch()).add(list(column))
        return
    if not all(isinstance(r, dict) for r in batch):  # mixed shapes: each as a dict
        batch = [dict(zip(field_names(r), field_values(r))) for r in batch]
    for key in dict.fromkeys(k for r in batch for k in r):  # a missing field is a null
        sketches.setdefault(str(key), FieldSketch()).add(
            list(map(methodcaller("get", key), batch)))


class SummariesCoordinator(CoordinatorAgent):
    """Merges each operator's field sketches and writes them when the run ends."""

    def __init__(self) -> None:
        super().__init__()
        self.parts: dict[tuple[int, int], dict] = {}  # (operator, partition): its sketches
        self._lock = threading.Lock()
        self.run: Any = None

    def init(self, run: Any) -> None:
        self.run = run

    def receive_message(self, worker: dict, payload: Any) -> None:
        with self._lock:  # a partition's later job or retry replaces its earlier one
            self.parts[(worker["operator"], worker["partition"])] = dict(payload, worker=worker)

    def finish(self) -> None:
        if self.run is None:
            return
        from ..store.agent_files import write_summary

        ok = successful_attempts(self.run)
        merged: dict[int, dict[str, FieldSketch]] = {}
        with self._lock:
            parts = [p for _, p in sorted(self.parts.items())
                     if ok is None or _attempt(p["worker"]) in ok]
        for part in parts:
            fields = merged.setdefault(part["worker"]["operator"], {})
            for name, data in part["fields"].items():
                sketch = FieldSketch.from_json(data)
                if name in fields:
                    fields[name].merge(sketch)
                else:
                    fields[name] = sketch
        for operator, fields in merged.items():
            write_summary(self.run.path, operator,
                          {"fields": {n: s.to_json() for n, s in fields.items()}})


class SummariesAgent(Agent):
    """Sketches every field of the worker's input; sends the sketches when it ends."""

    name = "summaries"
    coordinator = SummariesCoordinator

    def __init__(self) -> None:
        super().__init__()
        self.batch: list = []
        self.sketches: dict[str, FieldSketch] = {}

    def observe_input(self, records: Iterator) -> Iterator:
        return filterfalse(self.batch.append, records)  # list.append returns None: kept

    def heartbeat(self) -> None:
        if self.batch:
            batch = self.batch.copy()
            self.batch.clear()  # the same list: the input's filterfalse appends to it
            fold(self.sketches, batch)

    def finish(self) -> None:
        self.heartbeat()
        self.send_to_coordinator({"fields": {n: s.to_json() for n, s in self.sketches.items()}})
