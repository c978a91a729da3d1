"""The keys of a DataFrame join under ``--skew``, counted by Spark when asked.

No Python worker sees a DataFrame join's keys: Spark's JVM shuffles both inputs by them
(``hashpartitioning(keys, n)``) and joins each partition. So ``run.skew("join")`` asks
Spark, once the run has ended and only then: each input's records per key (a
``groupBy`` of the join's keys, cast to one type on both sides as the join compares
them, without the null keys a join drops before its shuffle), each key's shuffle
partition as Spark's hash partitioning computes it (``pmod(hash(keys), n)``, ``n`` from
the join's plan), the records per partition (the load the shuffle delivers, before AQE
coalesces or splits partitions) and the heaviest keys, all exact. It reads both inputs
once more. The result is kept in the run store (``layout.frame_join_keys_path``) for
later kernels. A broadcast join shuffles nothing: the report says so instead, also
when adaptive execution made it one at run time (``final_plans.py``).
"""
from __future__ import annotations

import json
import logging
import os
import re
from collections.abc import Sequence
from typing import Any

from ..executor.state import encode
from ..instrument.frame_calls import FrameCall, calls_of, column_text
from ..store import layout
from ..store.run_store import write_json
from .final_plans import broadcast_at_run_time, run_plans

log = logging.getLogger(__name__)

TOP = 512  # heaviest keys kept, as many as a worker's sketch keeps
PARTITIONS = re.compile(r"hashpartitioning\(.*?, (\d+)\)")
BROADCAST = ("BroadcastHashJoin", "BroadcastNestedLoopJoin")
# ``(a = b)`` as SQL prints it, ``=(a, b)`` as PySpark 4 prints a Column (``<=>``: null-safe)
EQUALITY = re.compile(r"^\(?([\w.`]+) (?:=|<=>) ([\w.`]+)\)?$|^(?:=|<=>)\(([\w.`]+), ([\w.`]+)\)$")
# join type -> the inputs whose null keys Spark filters out before the shuffle
# (the join type lower-cased, without underscores: "left_outer" is "leftouter")
NULLS_DROPPED = {"inner": (0, 1), "cross": (0, 1), "semi": (0, 1), "leftsemi": (0, 1),
                 "left": (1,), "leftouter": (1,), "anti": (1,), "leftanti": (1,),
                 "right": (0,), "rightouter": (0,)}


def counted_join(run: Any, node_id: int) -> tuple[list[dict], dict]:
    """The join's records per shuffle partition (as worker rows) and its keys (as a
    worker's sketch summary). ValueError: why there are none."""
    path = layout.frame_join_keys_path(run.path, node_id)
    if os.path.exists(path):
        with open(path, encoding="utf-8") as stored:
            return as_source(node_id, json.load(stored))
    name = run.dag.node(node_id).name
    if run.status == "running":
        raise ValueError(f"{name!r} is a DataFrame join: Spark counts its keys once the run "
                         "has ended (no Python worker sees them while it runs)")
    if not run.options.get("skew"):
        raise ValueError(f"{name!r} is a DataFrame join: its keys are counted for runs "
                         "recorded with --skew; run the cell with %%icedtea --skew")
    recorder = getattr(run, "recorder", None)
    call = calls_of(recorder).get(node_id)
    if recorder is None or call is None or node_id not in recorder.outputs:
        raise ValueError(f"{name!r} is a DataFrame join whose keys were not counted while "
                         "its kernel had its DataFrames: re-run the cell with --skew")
    joined = recorder.outputs[node_id]
    counted = count_join_keys(call, joined, _final_plans(run, joined))
    write_json(path, counted)
    return as_source(node_id, counted)


def _final_plans(run: Any, joined: Any) -> list[str]:
    """The final plans of the run's SQL queries (``final_plans.run_plans``); none where
    Spark's status store cannot tell them."""
    jobs = {int(job["id"]) for job in run.manifest.get("jobs") or ()}
    try:
        return run_plans(joined.sparkSession, jobs) if jobs else []
    except Exception as exc:  # a Spark without the SQL status store: the planned join
        log.info("icedtea: the final plans of run %s are unknown: %s", run.id, exc)
        return []


def as_source(node_id: int, counted: dict) -> tuple[list[dict], dict]:
    """Worker rows (one per shuffle partition) and a sketch summary from ``counted``."""
    if counted.get("at_run_time"):
        raise ValueError(f"this DataFrame join ran as a {counted['broadcast']}: Spark's "
                         "adaptive execution chose it at run time, once it had measured "
                         "an input under spark.sql.adaptive.autoBroadcastJoinThreshold; "
                         "the other input was read where its map tasks wrote it, not by "
                         "join key, so no key made a partition heavy; the loads of its "
                         "stage are in run.skew('stage N')")
    if counted.get("broadcast"):
        raise ValueError(f"this DataFrame join ran as a {counted['broadcast']}: Spark "
                         "shuffled neither input, so no key made a partition heavy; the "
                         "loads of its stage are in run.skew('stage N')")
    loads = {int(p): n for p, n in counted["loads"].items()}
    workers = [{"operator": node_id, "partition": p, "stage": None, "attempt": 0,
                "task": None, "status": "ok", "records_in": loads.get(p, 0),
                "bytes_in": 0, "seconds": 0.0} for p in range(counted["partitions"])]
    summary = {k: counted[k] for k in ("n", "capacity", "error", "estimated", "inputs",
                                       "keys")}
    return workers, summary


def count_join_keys(call: FrameCall, joined: Any, final_plans: Sequence[str] = ()) -> dict:
    """Spark's count of the join's keys (see the module docstring); ``final_plans``: the
    run's queries' plans as they ended, where AQE may have made the join a broadcast."""
    from pyspark.sql import functions as F

    left, other, on, how = join_arguments(call)
    plan = joined._jdf.queryExecution().executedPlan().toString()
    broadcast = next((b for b in BROADCAST if b in plan), None)
    if broadcast is not None:
        return {"broadcast": broadcast}
    late = broadcast_at_run_time(plan, list(final_plans))
    if late is not None:
        return {"broadcast": late, "at_run_time": True}
    found = PARTITIONS.findall(plan)
    partitions = int(found[0]) if found else \
        int(joined.sparkSession.conf.get("spark.sql.shuffle.partitions"))
    pairs = key_pairs(left, other, on)
    types = [_common_type(left, other, a, b) for a, b in pairs]
    names = [f"k{j}" for j in range(len(pairs))]
    dropped = NULLS_DROPPED.get((how or "inner").lower().replace("_", ""), ())
    counts = []
    for side, frame in enumerate((left, other)):
        keys = frame.select(*[F.col(pair[side]).cast(t).alias(n)
                              for pair, t, n in zip(pairs, types, names)])
        if side in dropped:
            keys = keys.dropna()
        counts.append(keys.groupBy(*names).agg(F.count(F.lit(1)).alias(f"c{side}")))
    per_key = (counts[0].join(counts[1], names, "full").fillna(0, ["c0", "c1"])
               .withColumn("count", F.col("c0") + F.col("c1"))
               .withColumn("partition", F.expr(f"pmod(hash({', '.join(names)}), "
                                               f"{partitions})")))
    per_key = per_key.persist()
    try:
        return _summary(per_key, names, partitions, on, how)
    finally:
        per_key.unpersist()


def _summary(per_key: Any, names: list[str], partitions: int, on: Any, how: Any) -> dict:
    from pyspark.sql import functions as F

    loads = {int(r["partition"]): int(r["n"]) for r in
             per_key.groupBy("partition").agg(F.sum("count").alias("n")).collect()}
    totals = per_key.agg(F.sum("c0").alias("c0"), F.sum("c1").alias("c1")).first()
    top = per_key.orderBy(F.desc("count")).limit(TOP + 1).collect()
    error = int(top[TOP]["count"]) if len(top) > TOP else 0
    keys = [[encode(row[names[0]] if len(names) == 1 else tuple(row[n] for n in names)),
             int(row["count"]), int(row["partition"])] for row in top[:TOP]]
    inputs = {"0": int(totals["c0"] or 0), "1": int(totals["c1"] or 0)}
    return {"partitions": partitions, "on": str(on), "how": str(how or "inner"),
            "n": sum(loads.values()), "capacity": TOP, "error": error, "estimated": 0,
            "inputs": inputs, "keys": keys, "loads": {str(p): n for p, n in loads.items()}}


def join_arguments(call: FrameCall) -> tuple[Any, Any, Any, Any]:
    """left, right, on, how of ``left.join(right, on, how)`` as the cell called it."""
    args, kwargs = call.args, call.kwargs
    other = args[0] if args else kwargs.get("other")
    on = args[1] if len(args) > 1 else kwargs.get("on")
    how = args[2] if len(args) > 2 else kwargs.get("how")
    return call.receiver, other, on, how


def key_pairs(left: Any, right: Any, on: Any) -> list[tuple[str, str]]:
    """The join's keys as (left column, right column) pairs: column names as given, or
    the equalities of a condition between a column of each input."""
    if on is None:
        raise ValueError("a join without keys (a cross join) shuffles by no key")
    items = on if isinstance(on, (list, tuple)) else [on]
    if all(isinstance(item, str) for item in items):
        return [(item, item) for item in items]
    pairs = []
    for item in items:
        for term in _conjuncts(column_text(item)):
            pairs.append(_sides(term, left, right))
    return pairs


def _conjuncts(text: str) -> list[str]:
    """``((a = b) AND (c = d))`` or ``and(=(a, b), =(c, d))`` → its equalities."""
    text = text.strip()
    if text.startswith("and(") and _closing(text, 3) == len(text) - 1:
        return [term for part in _split(text[4:-1], ", ") for term in _conjuncts(part)]
    while text.startswith("(") and _closing(text, 0) == len(text) - 1:
        inner = text[1:-1].strip()
        if " AND " not in inner:
            return [text]
        text = inner
    return _split(text, " AND ")


def _split(text: str, separator: str) -> list[str]:
    """``text`` split at ``separator`` outside parentheses."""
    parts, depth, start = [], 0, 0
    for i, char in enumerate(text):
        depth += {"(": 1, ")": -1}.get(char, 0)
        if depth == 0 and text.startswith(separator, i) and i >= start:
            parts.append(text[start:i])
            start = i + len(separator)
    parts.append(text[start:])
    return [p.strip() for p in parts]


def _closing(text: str, start: int) -> int:
    depth = 0
    for i in range(start, len(text)):
        depth += {"(": 1, ")": -1}.get(text[i], 0)
        if depth == 0:
            return i
    return -1


def _sides(term: str, left: Any, right: Any) -> tuple[str, str]:
    match = EQUALITY.match(term)
    if match is None:
        raise ValueError(f"the join condition's {term!r} is not an equality of two "
                         "columns: its keys cannot be counted")
    a, b = (name.strip("`") for name in match.groups() if name is not None)
    if _has(left, a) and _has(right, b):
        return a, b
    if _has(left, b) and _has(right, a):
        return b, a
    raise ValueError(f"cannot tell which input each side of {term!r} reads")


def _has(frame: Any, name: str) -> bool:
    from pyspark.sql import functions as F

    try:
        frame.select(F.col(name)).schema  # noqa: B018 - resolves the name
        return True
    except Exception:
        return False


def _common_type(left: Any, right: Any, a: str, b: str) -> str:
    """The type both keys are compared in (Spark's widening, as ``coalesce`` finds it)."""
    from pyspark.sql import functions as F

    ta = left.select(F.col(a)).schema[0].dataType.simpleString()
    tb = right.select(F.col(b)).schema[0].dataType.simpleString()
    if ta == tb:
        return ta
    spark = left.sparkSession
    return str(spark.range(1).select(F.expr(
        f"typeof(coalesce(cast(null as {ta}), cast(null as {tb})))")).first()[0])
