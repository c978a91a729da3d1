"""Steps through a DataFrame operator after θ: a ``mapInPandas`` after a filter and a
projection of a stateful ``mapInPandas`` θ over ≥ 1M rows.

The pipeline runs once without ``%%icedtea`` and once recorded (an interaction every
``--every`` seconds), side by side in one Spark session. The debugger then prepares
(θ's and the later operator's input batches regenerated with Spark, the rows each of
θ's batches gives the later operator computed with Spark: ``replay/row_links.py``, the
fork checkpoints placed), jumps to a few interactions and steps over θ's next batches
from each, timing every step (budget: ≤ 50 ms) and counting those that moved the later
operator. Writes ``bench/results/dataframe_steps.json``.

    .venv/bin/python bench/dataframe_steps.py [--rows 1200000] [--every 0.25] [--steps 20]
"""
from __future__ import annotations

import repo_paths  # noqa: F401 - this checkout's modules, in the driver and the workers

# isort: split

import argparse
import json
import os
import statistics
import sys
import tempfile
import time

os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")

from pyspark import cloudpickle  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import dataframe_jumps  # noqa: E402
from overhead import start_session  # noqa: E402

RESULTS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "results",
                       "dataframe_steps.json")


def running(batches):
    """θ: a running total over Arrow batches."""
    total = 0.0
    for pdf in batches:
        total += float(pdf.amount.sum())
        yield pdf.assign(total=total)


def later(batches):
    """The operator after θ's filter: rows and the largest total seen."""
    rows, top = 0, 0.0
    for pdf in batches:
        rows += len(pdf)
        top = max(top, float(pdf.total.max()))
        yield pdf


CODE = """
df = spark.range(0, N, numPartitions=4).selectExpr(
    "id", "id % 1000 AS k", "CAST((id * 7919) % 100 AS DOUBLE) AS amount")
theta = df.mapInPandas(running, "id long, k long, amount double, total double")
out = (theta.filter("amount > 30").select("id", "total")
       .mapInPandas(later, "id long, total double").count())
"""


def run_once(spark, args, store: str | None) -> tuple[float, object]:
    return dataframe_jumps.run_once(spark, args, store, CODE,
                                    {"running": running, "later": later})


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=1_200_000)
    parser.add_argument("--every", type=float, default=0.25)
    parser.add_argument("--steps", type=int, default=20)
    args = parser.parse_args()
    cloudpickle.register_pickle_by_value(sys.modules[__name__])
    spark = start_session()
    spark.conf.set("spark.sql.execution.arrow.maxRecordsPerBatch", "10000")
    run_once(spark, args, None)  # Spark's and the Python workers' first start
    plain, _ = run_once(spark, args, None)
    recorded, run = run_once(spark, args, tempfile.mkdtemp(prefix="icedtea-df-steps-"))
    dbg = run.debugger()
    start = time.perf_counter()
    dbg.prepare()
    ready = time.perf_counter() - start
    count = len(run.interactions)
    steps, moved, jumps = [], 0, []
    for k in sorted({0, count // 3, 2 * count // 3}):
        start = time.perf_counter()
        dbg.jump(k)
        jumps.append(time.perf_counter() - start)
        for q in (0, 1):
            for _ in range(args.steps):
                if dbg.ended(q):
                    break
                before = dbg.snapshot().count("later", q)
                start = time.perf_counter()
                after = dbg.step_over(partition=q).count("later", q)
                steps.append(time.perf_counter() - start)
                moved += after > before
    notes = [n for n in dbg.snapshot().notes if "'later' after θ" in n]
    dbg.close()
    row = {"rows": args.rows, "plain_seconds": plain, "run_seconds": recorded,
           "interactions": count, "ready_after_run": ready, "jumps": jumps,
           "steps": len(steps), "steps_moving_later": moved,
           "step_median": statistics.median(steps), "step_max": max(steps),
           "over_50ms": sum(s > 0.05 for s in steps), "note": notes,
           "load": os.getloadavg()[0]}
    os.makedirs(os.path.dirname(RESULTS), exist_ok=True)
    with open(RESULTS, "w") as out:
        json.dump(row, out, indent=1)
    print(json.dumps(row, indent=1))
    spark.stop()


if __name__ == "__main__":
    main()
