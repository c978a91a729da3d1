"""What a row ``@udf`` column after θ costs now that its workers record for time travel.

Two measurements, both side by side in one process:

- ``spark``: ``df.mapInPandas(θ).withColumn("y", tally("v"))`` summed, run plain,
  recorded (θ the ``mapInPandas``, so the UDF is in G(θ)) and a third run, alternating,
  ``--repeat`` times: ``--compare bare`` (default) records with the UDF shipped bare
  (what the rest of the recording costs the workers), ``--compare outside`` with the
  UDF kept out of G(θ) as before h18f; wall seconds
  and the Python workers' CPU seconds, medians, the ratio of medians and the median of
  paired ratios.
- ``per-call``: the UDF's per-row path without Spark, as ``CallFunction`` runs it in a
  worker (shipped: pickled and loaded): the plain function, hosted outside G(θ) (what a UDF column after θ cost
  before: no time-travel plugin) and hosted in G(θ), alternating; seconds per million
  rows. ``--only plain|outside|in_g|setup`` runs one once, for instruction counts
  (``valgrind --tool=callgrind``; subtract ``setup``).

Writes ``bench/results/udf_after_theta.json``.

    .venv/bin/python bench/udf_after_theta.py [--rows 400000] [--repeat 3] [--calls 300000]
"""
from __future__ import annotations

import repo_paths  # noqa: F401 - this checkout's modules, in the driver and the workers

# isort: split

import argparse
import json
import os
import pickle
import statistics
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

RESULTS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "results",
                       "udf_after_theta.json")

CODE = """
from pyspark.sql import functions as F
df = spark.range(0, N, numPartitions=2).selectExpr("id", "CAST(id AS DOUBLE) AS v")
theta = df.mapInPandas(running, "id long, v double, total double")
out = theta.withColumn("y", F.udf(Tally(), "double")("v")).agg(F.sum("y")).collect()
"""


def running(batches):
    """θ: a running total over the batches."""
    total = 0.0
    for pdf in batches:
        total += float(pdf.v.sum())
        yield pdf.assign(total=total)


class Tally:
    """The row UDF after θ: a count and a running total (its state)."""

    def __init__(self):
        self.rows, self.total = 0, 0.0

    def __call__(self, v):
        self.rows += 1
        self.total += v
        return self.total


def spark_side_by_side(args) -> dict:
    from overhead import measured, start_session

    from icedtea_jupyter.session.execution import RunOptions, start_run

    spark = start_session()
    names = {"spark": spark, "N": args.rows, "running": running, "Tally": Tally}

    def plain():
        exec(CODE, dict(names))  # noqa: S102 - the same cell without %%icedtea

    def record():
        run = start_run(CODE, dict(names), RunOptions(
            store=tempfile.mkdtemp(prefix="icedtea-udf-bench-"), interesting="running",
            prepare=False))
        run.wait()
        assert run.status == "finished", run.error
        return run

    def recorded():
        run = record()
        assert run.dag.node("Tally").in_g and run.partitions("Tally")

    def recorded_outside():
        """Recorded as before UDF columns after θ joined G(θ): the node gets its parent,
        G(θ) stays as it was (its workers record no time travel)."""
        from icedtea_jupyter.dag import Dag

        attach = Dag.attach
        Dag.attach = lambda dag, node_id, parent: dag.node(node_id).parents.append(parent) or []
        try:
            assert not record().dag.node("Tally").in_g
        finally:
            Dag.attach = attach

    def recorded_bare():
        """Recorded with the UDF shipped bare (its workers host nothing): what the rest
        of the run (θ's hosts, the driver's side) costs the workers."""
        from icedtea_jupyter.executor import calls, wrappers

        reduce = calls.CallFunction.__reduce__
        calls.CallFunction.__reduce__ = lambda call: (wrappers.identity, (call.f,))
        try:
            record()
        finally:
            calls.CallFunction.__reduce__ = reduce

    third = recorded_bare if args.compare == "bare" else recorded_outside
    plain()  # the workers' start
    rows = []
    for _ in range(args.repeat):
        rows.append({"plain": measured(plain), "recorded": measured(recorded),
                     args.compare: measured(third), "load": os.getloadavg()[0]})
    spark.stop()
    return summarise(rows, args.compare)


def summarise(rows: list[dict], third: str) -> dict:
    out: dict = {"repetitions": rows}
    for i, what in enumerate(("wall", "cpu")):
        plain = [r["plain"][i] for r in rows]
        recorded = [r["recorded"][i] for r in rows]
        other = [r[third][i] for r in rows]
        out[what] = {"plain": statistics.median(plain),
                     "recorded": statistics.median(recorded),
                     f"recorded_udf_{third}": statistics.median(other),
                     "ratio_of_medians": statistics.median(recorded) / statistics.median(plain),
                     "median_paired_ratio": statistics.median(
                         r / p for r, p in zip(recorded, plain)),
                     f"recorded_vs_{third}_paired": statistics.median(
                         r / o for r, o in zip(recorded, other)),
                     f"{third}_vs_plain_paired": statistics.median(
                         o / p for o, p in zip(other, plain))}
    return out


def udf_of(kind: str):
    """The UDF as a worker calls it: plain, or hosted outside or in G(θ)."""
    from icedtea_jupyter.executor import calls
    from icedtea_jupyter.executor import host as host_module
    from icedtea_jupyter.executor.spec import OperatorSpec, RunSpec
    from tests.unit.fakes import RecordingChannel

    tally = Tally()
    if kind == "plain":
        return tally
    host_module.channel_for = lambda run: RecordingChannel()
    run = RunSpec("bench", ("127.0.0.1", 1), b"s" * 32, tempfile.mkdtemp())
    spec = OperatorSpec(1, run, "udf", "Tally", in_g=kind == "in_g")
    calls._CALL_HOSTS.clear()
    return pickle.loads(pickle.dumps(calls.CallFunction(spec, tally, "row")))  # as shipped


def per_call(kind: str, values: list[float]) -> float:
    """The rows ``values`` through the UDF as a worker calls it; the last result."""
    if kind == "setup":  # the imports and a host's start: one row
        return rows_through(udf_of("outside"), values[:1])
    return rows_through(udf_of(kind), values)


def rows_through(f, values: list[float]) -> float:
    result = 0.0
    for v in values:
        result = f(v)
    return result


def per_call_side_by_side(args) -> dict:
    values = [float(i) for i in range(args.calls)]
    expected = per_call("plain", values)
    per_call("setup", values)  # the imports a worker's first row pays
    times: dict[str, list[float]] = {"plain": [], "outside": [], "in_g": []}
    for _ in range(args.repeat * 2):
        for kind in times:
            f = udf_of(kind)  # a host starts with its task: not per row
            start = time.perf_counter()
            assert rows_through(f, values) == expected
            times[kind].append((time.perf_counter() - start) / len(values) * 1e6)
    medians = {k: statistics.median(v) for k, v in times.items()}
    return {"seconds_per_million_rows": medians,
            "in_g_vs_outside": medians["in_g"] / medians["outside"],
            "in_g_vs_plain": medians["in_g"] / medians["plain"],
            "load": os.getloadavg()[0]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=400_000)
    parser.add_argument("--calls", type=int, default=300_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--compare", choices=["bare", "outside"], default="bare",
                        help="the third run: the UDF shipped bare, or outside G(θ)")
    parser.add_argument("--check-period", type=float, default=0.05,
                        help="with --only: seconds between checks; under valgrind pass a "
                             "large one (1000): the steps then grow to their maximum, as "
                             "they do at full speed, not 50x more checks a row")
    parser.add_argument("--only", choices=["plain", "outside", "in_g", "setup"])
    parser.add_argument("--skip-spark", action="store_true")
    args = parser.parse_args()
    if args.only:
        from icedtea_jupyter.executor import host

        host.CHECK_PERIOD = args.check_period
        per_call(args.only, [float(i) for i in range(args.calls)])
        return
    result = {"per_call": per_call_side_by_side(args)}
    print(json.dumps(result["per_call"], indent=1))
    if not args.skip_spark:
        result["spark"] = spark_side_by_side(args)
        print(json.dumps({k: v for k, v in result["spark"].items() if k != "repetitions"},
                         indent=1))
    os.makedirs(os.path.dirname(RESULTS), exist_ok=True)
    with open(RESULTS, "w") as f:
        json.dump(result, f, indent=1)


if __name__ == "__main__":
    main()
