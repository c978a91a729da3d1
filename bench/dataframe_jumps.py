"""Jump latency on a DataFrame pipeline: a stateful ``mapInPandas`` θ over ≥ 1M rows.

The DataFrame counterpart of ``fork_jumps.py`` (same measurements, same summary): the
pipeline is run once without ``%%icedtea`` and once recorded (one interaction every
``--every`` seconds), side by side in one Spark session; then the replay process
places its fork checkpoints (``dbg.prepare()``: regenerating θ's input batches with
Spark for each partition, checking them against the run's logs, the pass) and every
interaction is jumped to in random order; a few again with the in-kernel engine
(from I0: a generator's frame cannot be pickled). ``--repeat`` records the pipeline
several times; the report takes medians. Writes ``bench/results/dataframe_jumps.json``.

    .venv/bin/python bench/dataframe_jumps.py [--rows 1200000] [--every 0.25] [--repeat 3]
"""
from __future__ import annotations

import repo_paths  # noqa: F401 - this checkout's modules, in the driver and the workers

# isort: split

import argparse
import json
import os
import random
import statistics
import sys
import tempfile
import time

os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")

from pyspark import cloudpickle  # noqa: E402

from icedtea_jupyter.replay.debugger import Debugger  # noqa: E402
from icedtea_jupyter.session.execution import RunOptions, start_run  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from fork_jumps import jumps, summary  # noqa: E402
from overhead import start_session  # noqa: E402

RESULTS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "results",
                       "dataframe_jumps.json")


def running(batches):
    """θ: a running total and per-key sums over Arrow batches (10,000 rows each)."""
    total, seen, by_k = 0.0, 0, {}
    for pdf in batches:
        total += float(pdf.amount.sum())
        seen += len(pdf)
        for k, v in pdf.groupby("k").amount.sum().items():
            by_k[int(k)] = by_k.get(int(k), 0.0) + float(v)
        yield pdf.assign(total=total)


CODE = """
df = spark.range(0, N, numPartitions=4).selectExpr(
    "id", "id % 1000 AS k", "CAST((id * 7919) % 100 AS DOUBLE) AS amount")
out = (df.mapInPandas(running, "id long, k long, amount double, total double")
       .groupBy("k").count().collect())
"""


def run_once(spark, args, store: str | None, code: str = CODE,
             functions: dict | None = None) -> tuple[float, object]:
    """``code`` run plainly (``store`` None) or recorded: its seconds, and the Run."""
    ns = {"spark": spark, "N": args.rows, "running": running, **(functions or {})}
    start = time.perf_counter()
    if store is None:
        exec(code, ns)  # noqa: S102 - the same cell without %%icedtea
        return time.perf_counter() - start, None
    run = start_run(code, ns, RunOptions(store=store, interesting="running",
                                         interact_every=args.every))
    run.wait()
    assert run.status == "finished", run.error
    return time.perf_counter() - start, run


def bench(spark, args, repetition: int) -> dict:
    plain, _ = run_once(spark, args, None)
    recorded, run = run_once(spark, args, tempfile.mkdtemp(prefix="icedtea-df-bench-"))
    dbg = run.debugger()
    start = time.perf_counter()
    plan = dbg.prepare()
    ready = time.perf_counter() - start
    indices = list(range(len(run.interactions)))
    random.Random(7 + repetition).shuffle(indices)
    forked = jumps(dbg, indices)
    in_kernel = Debugger.for_run(run)
    replayed = jumps(in_kernel, indices[:args.kernel_jumps])
    in_kernel.close()
    dbg.close()
    row = {"rows": args.rows, "plain_seconds": plain, "run_seconds": recorded,
           "interactions": len(run.interactions), "tau": args.tau,
           "ready_after_run": ready, "phase_seconds": plan["seconds"],
           "forks": len(plan["forks"]), "fork_memory_mb": plan["memory_bytes"] / 2**20,
           "fork": summary(forked, args.tau), "in_kernel_from_I0": summary(replayed, args.tau),
           "load": os.getloadavg()[0]}
    print(json.dumps(row), flush=True)
    return row


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=1_200_000)
    parser.add_argument("--every", type=float, default=0.25)
    parser.add_argument("--tau", type=float, default=1.0)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--kernel-jumps", type=int, default=4)
    args = parser.parse_args()
    cloudpickle.register_pickle_by_value(sys.modules[__name__])
    spark = start_session()
    spark.conf.set("spark.sql.execution.arrow.maxRecordsPerBatch", "10000")
    rows = [bench(spark, args, i) for i in range(args.repeat)]
    os.makedirs(os.path.dirname(RESULTS), exist_ok=True)
    with open(RESULTS, "w") as out:
        json.dump(rows, out, indent=1)

    def median(get):
        return statistics.median(get(r) for r in rows)

    print(f"{args.repeat} runs of {args.rows} rows, medians: plain "
          f"{median(lambda r: r['plain_seconds']):.1f} s, recorded "
          f"{median(lambda r: r['run_seconds']):.1f} s, "
          f"{median(lambda r: r['interactions']):.0f} interactions, ready after "
          f"{median(lambda r: r['ready_after_run']):.1f} s, jump median/max "
          f"{median(lambda r: r['fork']['median']):.3f}/"
          f"{median(lambda r: r['fork']['max']):.3f} s, over τ "
          f"{sum(r['fork']['over_tau'] for r in rows)} of "
          f"{sum(r['fork']['jumps'] for r in rows)}, from I0 median/max "
          f"{median(lambda r: r['in_kernel_from_I0']['median']):.2f}/"
          f"{median(lambda r: r['in_kernel_from_I0']['max']):.2f} s, load "
          f"{median(lambda r: r['load']):.1f}")
    spark.stop()


if __name__ == "__main__":
    main()
