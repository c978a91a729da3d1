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

No remedy is advised that would leave the heaviest partition as heavy as it is or
heavier (salting keys that are not in it only adds their records to it): such a remedy
is replaced by a ``none`` entry that says why. The rewritten code is the call of the
operator the report is about: the one ``.setName``-d so, else the cell's n-th call of
its kind for the DAG's n-th operator of that kind.
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
    name: str = ""  # the operator's name in the DAG ...
    named: bool = False  # ... given by setName
    occurrence: int = 0  # the DAG's operators of its api (and side) before it


def advise(s: Situation) -> list[Advice]:
    """The remedies for ``s``, best first (none when there is no load); one that would
    not make the heaviest partition lighter is left out, a ``none`` entry saying so."""
    if not s.loads or max(s.loads.values()) <= 0:
        return []
    if s.api in AGGREGATIONS:
        advice = [_salt(s), _more_partitions(s)]
    elif s.api == "groupByKey":
        advice = [_aggregate(s), _more_partitions(s)]
    elif s.api in JOINS or s.api == FRAME_JOIN:
        advice = _join(s)
    elif s.api == "applyInPandas":
        advice = [_salt_groups(s)]
    elif s.api == "partitionBy":
        advice = [_own_partitions(s), _more_partitions(s)]
    else:
        advice = [_repartition(s)]
    helps = [a for a in advice if a.after < a.heaviest]
    useless = [a for a in advice if a.after >= a.heaviest]
    if useless:
        helps.append(_no_help(s, useless))
    return helps


def _no_help(s: Situation, useless: list[Advice]) -> Advice:
    part, top = _heaviest(s)
    names = " or ".join(a.remedy for a in useless)
    heavy = s.heavy.get(part, 0.0)
    return Advice("none", f"{names} would not make the heaviest partition ({part}, "
                          f"{top:,.0f}) lighter: its heavy keys carry {min(heavy, top):,.0f} "
                          f"of it (estimated ~{max(a.after for a in useless):,.0f} after); "
                          "not advised", "", top, top)


def _heaviest(s: Situation) -> tuple[int, float]:
    part = max(s.loads, key=lambda p: s.loads[p])
    return part, s.loads[part]


def _spread_heavy(s: Situation) -> float:
    """The heaviest partition once the heavy keys' records spread over all partitions
    (a partition's heavy records no more than its load: counts may be estimates)."""
    heavy = {p: min(s.heavy.get(p, 0.0), load) for p, load in s.loads.items()}
    spread = sum(heavy.values()) / max(len(s.loads), 1)
    return max(load - heavy[p] + spread for p, load in s.loads.items())


def _salt(s: Situation) -> Advice:
    _, top = _heaviest(s)
    salts = max(len(s.loads), 2)
    return Advice("salt", f"split the {len(s.heavy_keys)} heavy key(s) over {salts} "
                          "partitions and merge their partial results (s.mitigate() does it)",
                  salted_code(s.cell, s.api, s.heavy_keys, salts, s.name if s.named else None,
                              s.occurrence), top, _spread_heavy(s))


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


def salted_code(cell: str, api: str, heavy: list, salts: int, name: str | None = None,
                occurrence: int = 0) -> str:
    """The operator's ``.api(...)`` call (``find_call``) rewritten as a salted two-stage
    aggregation."""
    call = find_call(cell, api, name, occurrence)
    header = (f"from icedtea_jupyter.skew import Salt, unsalt\n"
              f"HEAVY = {set(heavy)!r}\n")
    if call is None:
        return header + (f".mapPartitionsWithIndex(Salt(HEAVY, {salts})).{api}(...)"
                         f".map(unsalt).reduceByKey(<merge>)")
    text, merge = call
    receiver, _, rest = text.rpartition(f".{api}(")
    return (header + f"{receiver}.mapPartitionsWithIndex(Salt(HEAVY, {salts}))"
                     f".{api}({rest}.map(unsalt).reduceByKey({merge})")


def find_call(cell: str, api: str, name: str | None = None,
              occurrence: int = 0) -> tuple[str, str] | None:
    """The source of the operator's ``.api(...)`` call and of its merging function: the
    call ``.setName(name)`` is applied to, else the ``occurrence``-th such call in the
    order the cell makes them (the first if it has fewer)."""
    try:
        tree = ast.parse(cell)
    except SyntaxError:
        return None
    calls = sorted(_method_calls(tree, api), key=lambda c: (c[1].end_lineno or 0,
                                                           c[1].end_col_offset or 0))
    if not calls:
        return None
    named = [receiver for call, method in _method_calls(tree, "setName")
             for receiver in [method.value] if isinstance(receiver, ast.Call)
             and isinstance(receiver.func, ast.Attribute) and receiver.func.attr == api
             and name is not None and [getattr(a, "value", None) for a in call.args] == [name]]
    call = named[0] if named else calls[occurrence if occurrence < len(calls) else 0][0]
    index = AGGREGATIONS.get(api, 0)
    args = call.args
    merge = ast.get_source_segment(cell, args[index]) if len(args) > index else None
    text = ast.get_source_segment(cell, call)
    return None if text is None else (text, merge or "<merge>")


def _method_calls(tree: ast.AST, api: str) -> list[tuple[ast.Call, ast.Attribute]]:
    """The calls of a method named ``api`` in ``tree``, each with its attribute."""
    return [(node, node.func) for node in ast.walk(tree) if isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute) and node.func.attr == api]
