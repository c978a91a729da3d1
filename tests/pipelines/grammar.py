"""Pipelines drawn from a grammar, as the cell code a user would write.

A pipeline is a source of ``(key, value)`` records (keys drawn skewed, values with
``None`` among them, duplicates, empty partitions), a chain of steps and a ``collect()``.
Every step keeps records ``(str, int | None)`` pairs, so any step may follow any other.
A step knows its code, whether it is a hosted Python operator (its ``setName`` name),
whether it keeps each partition's order (a stateful step may only follow such steps, so
that the plain run and the recorded one feed it alike) and how the emulator runs it.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from hypothesis import strategies as st

PREAMBLE = '''
from operator import add
from pyspark.rdd import portable_hash
import icedtea_jupyter

class Tally(icedtea_jupyter.Operator):
    """Per key: how many records so far (a stateful operator, its state a dict)."""
    WEIGHT = {weight}
    def open(self):
        self.seen = {{}}
        self.records = 0
    def process(self, kv):
        self.records += 1
        self.seen[kv[0]] = self.seen.get(kv[0], 0) + 1
        yield kv[0], self.seen[kv[0]] * self.WEIGHT + (kv[1] or 0)

def running(rows):
    """A running total over the partition (a generator's locals are its state)."""
    total = 0
    for kv in rows:
        total += kv[1] or 0
        yield kv[0], total
'''

# kind -> (the RDD method, the function's code with the step's parameters)
ELEMENTWISE = {
    "map": ("map", "lambda kv: (kv[0], (kv[1] or 0) * {a} + {b})"),
    "mapValues": ("mapValues", "lambda v: (v or 0) % {m} + {b}"),
    "filter": ("filter", "lambda kv: (kv[1] or 0) % {m} != {r}"),
    "flatMap": ("flatMap", "lambda kv: [kv] * ((kv[1] or 0) % 3)"),
    "rekey": ("map", "lambda kv: ('k%d' % (int(kv[0][1:]) * {a} % {m}), kv[1])"),
}
TRANSPARENT = {  # records pass unchanged; True: each partition keeps its order
    "partitionBy": (".partitionBy({n})", False),
    "repartition": (".repartition({n})", False),
    "coalesce": (".coalesce({n})", True),
    "sortBy": (".sortBy(lambda kv: (kv[0], -10**9 if kv[1] is None else kv[1]), "
               "numPartitions={n})", True),
    "sortByKey": (".map(lambda kv: ((kv[0], -10**9 if kv[1] is None else kv[1]), kv[1]))"
                  ".sortByKey(numPartitions={n}).map(lambda kv: (kv[0][0], kv[1]))", True),
    "repartitionAndSort": (
        ".map(lambda kv: ((kv[0], -10**9 if kv[1] is None else kv[1]), kv[1]))"
        ".repartitionAndSortWithinPartitions({n}, partitionFunc=lambda k: portable_hash(k[0]))"
        ".map(lambda kv: (kv[0][0], kv[1]))", True),
    "union": (".union(sc.parallelize(OTHER, {n}))", True),
}
AGGREGATIONS = {  # output order: not kept
    "reduceByKey": ".mapValues(lambda v: v or 0).reduceByKey(add).setName({name!r})",
    "groupCount": ".groupByKey().mapValues(len).setName({name!r})",
    "distinct": ".distinct()",
}
STATEFUL = {  # need an ordered input
    "tally": ".mapPartitions(Tally()).setName({name!r})",
    "running": ".mapPartitions(running).setName({name!r})",
    "zipWithIndex": ".zipWithIndex().map(lambda p: (p[0][0], p[1])).setName({name!r})",
}


@dataclass
class Step:
    kind: str
    index: int
    params: dict = field(default_factory=dict)

    @property
    def name(self) -> str | None:
        """The operator's ``setName`` (None: not a hosted Python operator we name)."""
        if self.kind in TRANSPARENT or self.kind == "distinct":
            return None
        return f"s{self.index}_{self.kind}"

    @property
    def keeps_order(self) -> bool:
        if self.kind in TRANSPARENT:
            return TRANSPARENT[self.kind][1]
        return self.kind not in AGGREGATIONS

    @property
    def orders(self) -> bool:
        """A sort: its output's order is fixed whatever its input's was."""
        return self.kind in ("sortBy", "sortByKey", "repartitionAndSort")

    def code(self) -> str:
        if self.kind in ELEMENTWISE:
            method = ELEMENTWISE[self.kind][0]
            return f".{method}({self.function()}).setName({self.name!r})"
        template = (TRANSPARENT.get(self.kind, (None,))[0] or AGGREGATIONS.get(self.kind) or
                    STATEFUL[self.kind])
        return template.format(name=self.name, **self.params)

    def function(self) -> str:
        """An elementwise step's function, as code."""
        return ELEMENTWISE[self.kind][1].format(**self.params)


@dataclass
class Pipeline:
    data: list
    partitions: int
    steps: list[Step]
    other: list = field(default_factory=list)  # a union's second source
    weight: int = 1000  # Tally.WEIGHT
    flags: tuple[str, ...] = ()
    theta: str | None = None

    def preamble(self) -> str:
        return PREAMBLE.format(weight=self.weight)

    def chain(self, upto: int | None = None) -> str:
        steps = self.steps if upto is None else self.steps[:upto]
        return f"sc.parallelize(DATA, {self.partitions})" + "".join(s.code() for s in steps)

    def cell(self) -> str:
        return f"out = {self.chain()}.collect()"

    def names(self) -> list[str]:
        return [s.name for s in self.steps if s.name]

    @property
    def ordered_result(self) -> bool:
        """Whether ``collect()``'s order is the same in every run (else compare as bags)."""
        ordered = True
        for step in self.steps:
            ordered = step.orders or (ordered and step.keeps_order)
        return ordered

    def describe(self) -> str:
        return (f"Tally.WEIGHT={self.weight} flags={list(self.flags)} theta={self.theta}\n"
                f"DATA={self.data!r}\nOTHER={self.other!r}\n{self.cell()}")


KEYS = st.integers(0, 400).map(lambda i: f"k{min(i, 40) if i % 3 else i % 7}")  # k0–k6 hot
VALUES = st.one_of(st.integers(-50, 50), st.none())
RECORDS = st.lists(st.tuples(KEYS, VALUES), min_size=0, max_size=120)


@st.composite
def steps(draw: st.DrawFn) -> list[Step]:
    count = draw(st.integers(1, 5))
    chosen: list[Step] = []
    ordered = True
    for index in range(count):
        kinds = list(ELEMENTWISE) + list(TRANSPARENT) + list(AGGREGATIONS)
        if ordered:
            kinds += list(STATEFUL)
        kind = draw(st.sampled_from(kinds))
        params = {"a": draw(st.integers(1, 5)), "b": draw(st.integers(-3, 3)),
                  "m": draw(st.integers(2, 7)), "n": draw(st.integers(1, 4))}
        params["r"] = draw(st.integers(0, params["m"] - 1))
        step = Step(kind, index, params)
        chosen.append(step)
        ordered = step.orders or (ordered and step.keeps_order)
    return chosen


FLAGS = st.sets(st.sampled_from(["--lineage", "--skew", "--record-inputs"]))


@st.composite
def pipelines(draw: st.DrawFn) -> Pipeline:
    chain = draw(steps())
    data = draw(RECORDS)
    other = draw(RECORDS) if any(s.kind == "union" for s in chain) else []
    pipeline = Pipeline(data, draw(st.integers(1, 4)), chain, other,
                        weight=draw(st.integers(1, 1000)), flags=tuple(sorted(draw(FLAGS))))
    python = [s.name for s in chain if s.name and s.kind not in AGGREGATIONS]
    if python and draw(st.booleans()):
        pipeline.theta = draw(st.sampled_from(python))
    return pipeline
