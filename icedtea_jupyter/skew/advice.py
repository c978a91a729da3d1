"""What to do about a skewed operator, with the code to do it, from the measured loads.

Each piece of advice names its remedy, says why, gives the rewritten lines of the cell
and how much the heaviest partition would shrink, estimated from the key counts:

- an RDD aggregation (``reduceByKey``, ``aggregateByKey``, ``foldByKey``,
  ``combineByKey``): ``salt`` the heavy keys (a two-stage aggregation: ``s.mitigate()``
  does it), or ``partitions`` (more reduce partitions: a single key still lands whole);
- ``groupByKey``: ``aggregate`` (a ``reduceByKey``/``aggregateByKey`` combines on the map
  side), or ``partitions``;
- a join or cogroup: ``broadcast`` the small side (no shuffle at all), else ``salt`` the
  heavy keys on one side and replicate them on the other; a DataFrame join:
  ``skew_join`` (AQE's ``spark.sql.adaptive.skewJoin`` splits the skewed partitions);
- a grouped pandas function: ``salt`` (group by key and salt, then combine the parts);
- any other operator (its input partitions are skewed): ``repartition``.
"""
from __future__ import annotations

import ast
from dataclasses import asdict, dataclass

from .source import FRAME_JOIN

AGGREGATIONS = {"reduceByKey": 0, "foldByKey": 1, "aggregateByKey": 2, "combineByKey": 2}
JOINS = {"join", "leftOuterJoin", "rightOuterJoin", "fullOuterJoin", "cogroup", "groupWith"}
BROADCAST_RDD = ("small = sc.broadcast(dict(right.collect()))\n"
                 "joined = left.flatMap(lambda kv: [(kv[0], (kv[1], small.value[kv[0]]))] "
                 "if kv[0] in small.value else [])")
BROADCAST_FRAME = ("from pyspark.sql import functions as F\n"
                   "joined = left.join(F.broadcast(right), on)  # the small side as right")
SKEW_JOIN = ('spark.conf.set("spark.sql.adaptive.enabled", "true")\n'
             'spark.conf.set("spark.sql.adaptive.skewJoin.enabled", "true")\n'
             'spark.conf.set("spark.sql.adaptive.skewJoin.skewedPartitionFactor", "5")')
SKEW_JOIN_THRESHOLD = ('\nspark.conf.set('
                       '"spark.sql.adaptive.skewJoin.skewedPartitionThresholdInBytes", "64MB")')


@dataclass
class Advice:
    """One remedy: ``remedy`` (salt, partitions, aggregate, broadcast, skew_join,
    own_partitions, repartition), why, the code, and the heaviest partition's load
    before and after."""

    remedy: str
    why: str
    code: str
    heaviest: float
    after: float

    @property
    def shrink(self) -> float:
        """How much smaller the heaviest partition would be (0.4: 40% smaller)."""
        return 1 - self.after / self.heaviest if self.heaviest else 0.0

    def as_dict(self) -> dict:
        return dict(asdict(self), shrink=self.shrink)

    def __str__(self) -> str:
        return (f"{self.remedy}: {self.why} (heaviest partition {self.heaviest:,.0f} → "
                f"~{self.after:,.0f}, {self.shrink:.0%} smaller)\n{self.code}")


@dataclass
class Situation:
    """What the advice depends on: the operator, its loads, its heavy keys."""

    api: str
    loads: dict[int, float]  # partition -> load
    heavy: dict[int, float]  # partition -> records of the heavy keys there
    heavy_keys: list
    top_key: float  # records of the heaviest key
    cell: str
    inputs: list[float]  # a join's inputs' records, when known


def advise(s: Situation) -> list[Advice]:
    """The remedies for ``s``, best first (none when there is no load)."""
    if not s.loads or max(s.loads.values()) <= 0:
        return []
    if s.api in AGGREGATIONS:
        return [_salt(s), _more_partitions(s)]
    if s.api == "groupByKey":
        return [_aggregate(s), _more_partitions(s)]
    if s.api in JOINS or s.api == FRAME_JOIN:
        return _join(s)
    if s.api == "applyInPandas":
        return [_salt_groups(s)]
    if s.api == "partitionBy":
        return [_own_partitions(s), _more_partitions(s)]
    return [_repartition(s)]


def _heaviest(s: Situation) -> tuple[int, float]:
    part = max(s.loads, key=lambda p: s.loads[p])
    return part, s.loads[part]


def _spread_heavy(s: Situation) -> float:
    """The heaviest partition once the heavy keys' records spread over all partitions."""
    spread = sum(s.heavy.values()) / max(len(s.loads), 1)
    return max(load - s.heavy.get(p, 0) + spread for p, load in s.loads.items())


def _salt(s: Situation) -> Advice:
    _, top = _heaviest(s)
    salts = max(len(s.loads), 2)
    return Advice("salt", f"split the {len(s.heavy_keys)} heavy key(s) over {salts} "
                          "partitions and merge their partial results (s.mitigate() does it)",
                  salted_code(s.cell, s.api, s.heavy_keys, salts), top, _spread_heavy(s))


def _more_partitions(s: Situation) -> Advice:
    _, top = _heaviest(s)
    n = len(s.loads)
    after = max(s.top_key, s.top_key + (top - s.top_key) / 2)
    return Advice("partitions", f"twice the reduce partitions ({2 * n}): the other keys "
                                "spread, but each key still lands whole in one partition",
                  f"# numPartitions={2 * n} in the .{s.api}(...) call", top, after)


def _own_partitions(s: Situation) -> Advice:
    """A partitionBy whose heavy keys get a partition each, the other keys staying put."""
    _, top = _heaviest(s)
    n = len(s.loads)
    after = max([s.top_key] + [load - s.heavy.get(p, 0) for p, load in s.loads.items()])
    keys = ", ".join(repr(k) for k in s.heavy_keys)
    code = (f"HEAVY = {{key: i for i, key in enumerate([{keys}])}}\n"
            "def spread(key):  # each heavy key a partition of its own, the rest as before\n"
            f"    return {n} + HEAVY[key] if key in HEAVY else portable_hash(key) % {n}\n"
            f".partitionBy({n} + len(HEAVY), spread)")
    return Advice("own_partitions", f"give the {len(s.heavy_keys)} heavy key(s) partitions "
                                    "of their own: a key still lands whole in one partition, "
                                    "but no longer beside the others", code, top, after)


def _aggregate(s: Situation) -> Advice:
    _, top = _heaviest(s)
    return Advice("aggregate", "groupByKey ships every value; an aggregation combines each "
                               "key's values on the map side first",
                  "# .groupByKey().mapValues(f)  →  .aggregateByKey(zero, seq, comb)",
                  top, _spread_heavy(s))


def _join(s: Situation) -> list[Advice]:
    _, top = _heaviest(s)
    total = sum(s.loads.values())
    balanced = total / max(len(s.loads), 1)
    frame = s.api == FRAME_JOIN
    advice = []
    if len(s.inputs) == 2 and min(s.inputs) <= 0.1 * max(s.inputs):
        small = "right" if s.inputs[1] <= s.inputs[0] else "left"
        advice.append(Advice("broadcast", f"the {small} side is small ({min(s.inputs):,.0f} "
                                          "records): broadcast it and join on the map side, "
                                          "no shuffle",
                             BROADCAST_FRAME if frame else BROADCAST_RDD, top, balanced))
    why = ("AQE splits a skewed shuffle partition (> factor × median and > a threshold in "
           "bytes) into pieces joined with copies of the other side's partition" if frame
           else "for a DataFrame join, AQE splits skewed partitions "
                "(> factor × median and > threshold)")
    advice.append(Advice("skew_join", why, SKEW_JOIN + (SKEW_JOIN_THRESHOLD if frame else ""),
                         top, max(_spread_heavy(s), balanced)))
    return advice


def _salt_groups(s: Situation) -> Advice:
    _, top = _heaviest(s)
    return Advice("salt", "a heavy group is one call: if the function's results can be "
                          "combined, group by the key and a salt, then combine the parts",
                  "df.withColumn('salt', (F.rand(seed=0) * 8).cast('int'))\n"
                  "  .groupBy(KEY, 'salt').applyInPandas(f, schema)\n"
                  "  .groupBy(KEY).applyInPandas(combine, schema)", top, _spread_heavy(s))


def _repartition(s: Situation) -> Advice:
    _, top = _heaviest(s)
    n = len(s.loads)
    return Advice("repartition", "the operator's input partitions are uneven: repartition "
                                 "them before it",
                  f".repartition({n})", top, sum(s.loads.values()) / max(n, 1))


def salted_code(cell: str, api: str, heavy: list, salts: int) -> str:
    """The cell's ``.api(...)`` call rewritten as a salted two-stage aggregation."""
    call = find_call(cell, api)
    header = (f"from icedtea_jupyter.skew import Salt, unsalt\n"
              f"HEAVY = {set(heavy)!r}\n")
    if call is None:
        return header + (f".mapPartitionsWithIndex(Salt(HEAVY, {salts})).{api}(...)"
                         f".map(unsalt).reduceByKey(<merge>)")
    text, merge = call
    receiver, _, rest = text.rpartition(f".{api}(")
    return (header + f"{receiver}.mapPartitionsWithIndex(Salt(HEAVY, {salts}))"
                     f".{api}({rest}.map(unsalt).reduceByKey({merge})")


def find_call(cell: str, api: str) -> tuple[str, str] | None:
    """The source of the cell's first ``.api(...)`` call and of its merging function."""
    try:
        tree = ast.parse(cell)
    except SyntaxError:
        return None
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
                and node.func.attr == api:
            index = AGGREGATIONS.get(api, 0)
            args = node.args
            merge = ast.get_source_segment(cell, args[index]) if len(args) > index else None
            text = ast.get_source_segment(cell, node)
            if text is not None:
                return text, merge or "<merge>"
    return None
