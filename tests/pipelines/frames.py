"""DataFrame pipelines drawn from a grammar: ``createDataFrame`` of ``(k, v)`` rows, then
DataFrame calls (JVM operators), row ``@udf`` columns, a scalar ``@pandas_udf``,
``mapInPandas`` and ``groupBy().applyInPandas`` (hosted Python operators), and
``collect()``. Rows stay ``(k string, v long)`` with nulls, so any step may follow any
other. ``emulate`` computes the result and each output row's source rows in plain
Python with SQL's semantics (a null fails a comparison, ``sum`` skips nulls)."""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from hypothesis import strategies as st

from .grammar import RECORDS

PREAMBLE = '''
import pandas as pd
from pyspark.sql import functions as F
from pyspark.sql.functions import pandas_udf

def scaled(a, b, name):
    """A row UDF named ``name``: v * a + b (null: b)."""
    f = lambda v: (v or 0) * a + b
    f.__name__ = name
    return F.udf(f, "long")

def shifted(b, name):
    """A scalar pandas UDF named ``name``: v + b (null stays null)."""
    def f(v: pd.Series) -> pd.Series:
        return v + b
    f.__name__ = name
    return pandas_udf(f, "long")

def halves(batches):
    """mapInPandas: each row's v halved (floor; null stays null)."""
    for batch in batches:
        yield batch.assign(v=batch["v"].astype("Int64") // 2)

def group_sizes(group: pd.DataFrame) -> pd.DataFrame:
    """applyInPandas: one row per group, its size."""
    return pd.DataFrame({"k": [group["k"].iloc[0]], "v": [len(group)]})
'''

STEPS = {
    "udf": ".withColumn('v', scaled({a}, {b}, {name!r})(F.col('v')))",
    "pandas_udf": ".withColumn('v', shifted({b}, {name!r})(F.col('v')))",
    "filter": ".filter(F.col('v') % {m} != {r})",
    "mapInPandas": ".mapInPandas(halves, 'k string, v long')",
    "sum": ".groupBy('k').agg(F.sum('v').alias('v'))",
    "applyInPandas": ".groupBy('k').applyInPandas(group_sizes, 'k string, v long')",
    "distinct": ".distinct()",
    "repartition": ".repartition({n})",
    "union": ".union(spark.createDataFrame(OTHER, 'k string, v long'))",
}
PYTHON = {"udf", "pandas_udf", "mapInPandas", "applyInPandas"}


@dataclass
class FrameStep:
    kind: str
    index: int
    params: dict = field(default_factory=dict)

    @property
    def name(self) -> str | None:
        return f"s{self.index}_{self.kind}" if self.kind in ("udf", "pandas_udf") else None

    def code(self) -> str:
        return STEPS[self.kind].format(name=self.name, **self.params)


@dataclass
class FramePipeline:
    data: list
    partitions: int
    steps: list[FrameStep]
    other: list = field(default_factory=list)
    flags: tuple[str, ...] = ()
    theta: str | None = None  # --interesting (a UDF's name)

    ordered_result = False  # compared as bags

    def preamble(self) -> str:
        return PREAMBLE

    def chain(self, upto: int | None = None) -> str:
        steps = self.steps if upto is None else self.steps[:upto]
        return "spark.createDataFrame(DATA, 'k string, v long')" + "".join(
            s.code() for s in steps)

    def cell(self) -> str:
        return f"out = [tuple(r) for r in {self.chain()}.collect()]"

    def describe(self) -> str:
        return (f"flags={list(self.flags)}\nDATA={self.data!r}\nOTHER={self.other!r}\n"
                f"{self.cell()}")


def emulate(pipeline: FramePipeline) -> list[tuple[tuple, frozenset[int]]]:
    """The output rows (a bag) with their source rows' numbers (``DATA``, then ``OTHER``)."""
    rows = [(tuple(r), frozenset([i])) for i, r in enumerate(pipeline.data)]
    offset = len(pipeline.data)
    for step in pipeline.steps:
        p = step.params
        if step.kind == "udf":
            rows = [((k, (v or 0) * p["a"] + p["b"]), w) for (k, v), w in rows]
        elif step.kind == "pandas_udf":
            rows = [((k, None if v is None else v + p["b"]), w) for (k, v), w in rows]
        elif step.kind == "filter":
            rows = [((k, v), w) for (k, v), w in rows
                    if v is not None and math.fmod(v, p["m"]) != p["r"]]  # Java's %
        elif step.kind == "mapInPandas":
            rows = [((k, None if v is None else v // 2), w) for (k, v), w in rows]
        elif step.kind == "sum":
            rows = _grouped(rows, lambda r: r[0], lambda k, vs: (k, _sql_sum(vs)))
        elif step.kind == "applyInPandas":
            rows = _grouped(rows, lambda r: r[0], lambda k, vs: (k, len(vs)))
        elif step.kind == "distinct":
            rows = _grouped(rows, lambda r: r, lambda key, vs: key)
        elif step.kind == "union":
            rows += [(tuple(r), frozenset([offset + i])) for i, r in enumerate(pipeline.other)]
    return rows


def _grouped(rows: list, key: Any, make: Any) -> list:
    groups: dict[Any, list] = {}
    for row, w in rows:
        groups.setdefault(key(row), []).append((row, w))
    return [(make(k, [r[1] for r, _ in g]), frozenset().union(*(w for _, w in g)))
            for k, g in groups.items()]


def _sql_sum(values: list) -> int | None:
    present = [v for v in values if v is not None]
    return sum(present) if present else None


@st.composite
def frame_pipelines(draw: st.DrawFn) -> FramePipeline:
    chosen = []
    for index in range(draw(st.integers(1, 4))):
        params = {"a": draw(st.integers(1, 5)), "b": draw(st.integers(-3, 3)),
                  "m": draw(st.integers(2, 7)), "n": draw(st.integers(1, 4))}
        params["r"] = draw(st.integers(0, params["m"] - 1))
        chosen.append(FrameStep(draw(st.sampled_from(sorted(STEPS))), index, params))
    other = draw(RECORDS) if any(s.kind == "union" for s in chosen) else []
    flags = tuple(sorted(draw(st.sets(st.sampled_from(["--lineage", "--skew"])))))
    pipeline = FramePipeline(draw(RECORDS), draw(st.integers(1, 4)), chosen, other, flags)
    udfs = [s.name for s in chosen if s.name]
    if udfs and draw(st.booleans()):
        pipeline.theta = draw(st.sampled_from(udfs))
    return pipeline
