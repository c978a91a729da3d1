"""Summaries: per operator and field of its input, count, nulls, distinct, min/max, mean,
quantiles (``--agent summaries``).

Each worker counts its input exactly and sketches a uniform sample of it: each record
with probability ``rate`` (default 1 %, 1.0 for every record), picked by skip counts so
that the records passed over cost no Python code (``Agent.input_picks``: the worker
keeps its fast block loop). About four times a second and at its end the worker folds the picked
records into one ``FieldSketch`` per field, column by column: counts, nulls, min, max,
sum and sum of squares, and Apache DataSketches' HyperLogLog (distinct values) and KLL
(quantiles) sketches. Shares (nulls, quantiles, means) are the sample's; counts are
scaled to the exact input count; a distinct count over a sample is a lower bound. The coordinator merges the workers' sketches of each
operator and writes them to the run store (``summaries/op<o>.json``);
``run.summaries(operator)`` and ``run.summary_diff(other)`` read them (``summaries/``).

Workers import DataSketches (and the numpy it brings): the one library beside pyarrow
that the executor island lets an agent use, for its sketches.
"""
from __future__ import annotations

import base64
import random
from collections import deque
from collections.abc import Iterator
from operator import itemgetter, methodcaller
from typing import Any

import datasketches as ds
import numpy as np

from ..executor.agent import Agent
from .fields import field_names, field_values, plain
from .reports import PartitionReports
from .streams import bernoulli_gaps

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
            self._numbers(values)
            return
        texts = values if types == {str} else list(map(repr, values))
        self.kinds.add("text" if types == {str} else "other")
        deque(map(self.hll.update, texts), 0)
        self._extremes(min(texts), max(texts))

    def _numbers(self, values: list) -> None:
        self.kinds.add("number")
        array = np.asarray(values, dtype=np.float64)
        finite = array[np.isfinite(array)]
        self.numbers += len(finite)
        self.total += float(finite.sum())
        self.squares += float(np.dot(finite, finite))
        self.kll.update(finite)
        deque(map(self.hll.update, values), 0)
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
    if not any(issubclass(shape, (tuple, dict)) for shape in shapes):  # scalars
        sketches.setdefault("value", FieldSketch()).add(list(batch))
        return
    if len(shapes) == 1 and issubclass(shapes.pop(), tuple) and \
            len(set(map(len, batch))) == 1:
        for i, name in enumerate(field_names(batch[0])):
            sketches.setdefault(name, FieldSketch()).add(list(map(itemgetter(i), batch)))
        return
    if not all(isinstance(r, dict) for r in batch):  # mixed shapes: each as a dict
        batch = [dict(zip(field_names(r), field_values(r))) for r in batch]
    for key in dict.fromkeys(k for r in batch for k in r):  # a missing field is a null
        sketches.setdefault(str(key), FieldSketch()).add(
            list(map(methodcaller("get", key), batch)))


class SummariesCoordinator(PartitionReports):
    """Merges each operator's field sketches and writes them when the run ends."""

    def finish(self) -> None:
        if self.run is None:
            return
        from ..store.agent_files import write_summary

        for operator, parts in self.reports().items():
            fields: dict[str, FieldSketch] = {}
            for part in parts:
                for name, data in part["fields"].items():
                    sketch = FieldSketch.from_json(data)
                    if name in fields:
                        fields[name].merge(sketch)
                    else:
                        fields[name] = sketch
            write_summary(self.run.path, operator,
                          {"records": sum(p["records"] for p in parts), "rate": parts[0]["rate"],
                           "fields": {n: s.to_json() for n, s in fields.items()}})


class SummariesAgent(Agent):
    """Sketches every field of the worker's input; sends the sketches when it ends."""

    name = "summaries"
    coordinator = SummariesCoordinator
    rate = 0.01  # the share of the input sketched (a subclass may set 1.0: every record)

    def __init__(self) -> None:
        super().__init__()
        self.batch: list = []
        self.sketches: dict[str, FieldSketch] = {}

    def input_picks(self) -> Iterator[int]:
        return bernoulli_gaps(self.rate, random.Random())

    def take(self, record: Any) -> None:
        self.batch.append(record)

    def heartbeat(self) -> None:
        if self.batch:
            batch = self.batch.copy()
            self.batch.clear()  # the same list: the input stream appends to it
            fold(self.sketches, batch)

    def finish(self) -> None:
        self.heartbeat()
        records = self.context.counts()["records_in"] if self.context is not None else 0
        self.send_to_coordinator({"records": records, "rate": self.rate,
                                  "fields": {n: s.to_json() for n, s in self.sketches.items()}})


class SummariesOfEveryRecord(SummariesAgent):
    """The summaries agent sketching every record: exact counts and nulls (a trial run,
    already a sample, uses it in place of ``SummariesAgent``)."""

    rate = 1.0
