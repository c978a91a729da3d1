"""Recording overhead: the same Python pipeline plain and under icedtea, side by side.

A few million records through a stateful mapPartitions (an ``Operator``), a filter, a
map and a reduceByKey; each repetition runs the plain pipeline and the recorded one
(progress agent on) in the same process and Spark session, alternating which goes
first. Prints the medians and their ratio (target: <= 1.05).

    .venv/bin/python bench/overhead.py [--records 3000000] [--repeat 5]
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from operator import add

os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")

from pyspark.sql import SparkSession  # noqa: E402

from icedtea_jupyter import Operator  # noqa: E402
from icedtea_jupyter.session.execution import RunOptions, start_run  # noqa: E402


class RunningMax(Operator):
    """Highest amount per customer so far (state: a dict of 1,000 customers)."""

    def open(self):
        self.highest = {}

    def process(self, payment):
        customer, amount = payment
        best = self.highest.get(customer, 0)
        if amount > best:
            self.highest[customer] = best = amount
        yield customer, amount, best


def payment(i):
    return i % 1000, (i * 7919) % 10_000


PIPELINE = """
result = (sc.parallelize(range(N), P).map(payment)
          .mapPartitions(RunningMax()).setName("running max")
          .filter(lambda r: r[1] * 2 > r[2]).setName("near max")
          .map(lambda r: (r[0], r[1])).reduceByKey(add).setName("sum")
          .count())
"""


def plain(namespace: dict) -> float:
    start = time.perf_counter()
    exec(PIPELINE, dict(namespace))
    return time.perf_counter() - start


def recorded(namespace: dict, store: str, **options) -> float:
    start = time.perf_counter()
    run = start_run(PIPELINE, dict(namespace), RunOptions(store=store, **options))
    run.wait()
    elapsed = time.perf_counter() - start
    assert run.status == "finished", run.error
    recorded.last_run = run
    return elapsed


def start_session():
    spark = (SparkSession.builder.master("local[2]").appName("icedtea bench")
             .config("spark.ui.enabled", "false").config("spark.ui.showConsoleProgress", "false")
             .getOrCreate())
    spark.sparkContext.setLogLevel("ERROR")
    return spark


def namespace(spark, records: int, partitions: int) -> dict:
    return {"sc": spark.sparkContext, "N": records, "P": partitions,
            "payment": payment, "RunningMax": RunningMax, "add": add}


def prepare(description: str) -> tuple:
    """Parse the shared flags; start Spark; returns (args, spark, namespace, store)."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--records", type=int, default=3_000_000)
    parser.add_argument("--partitions", type=int, default=4)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    spark = start_session()
    return (args, spark, namespace(spark, args.records, args.partitions),
            tempfile.mkdtemp(prefix="icedtea-bench-"))


def main() -> None:
    args, spark, ns, store = prepare(__doc__.splitlines()[0])
    plain(ns), recorded(ns, store)  # warm up workers and caches
    times: dict[str, list[float]] = {"plain": [], "icedtea": []}
    for i in range(args.repeat):
        order = [("plain", lambda: plain(ns)), ("icedtea", lambda: recorded(ns, store))]
        for name, fn in (order if i % 2 == 0 else order[::-1]):
            times[name].append(fn())
            print(f"  rep {i + 1} {name:8s} {times[name][-1]:.2f} s", flush=True)
    medians = {name: statistics.median(values) for name, values in times.items()}
    ratio = medians["icedtea"] / medians["plain"]
    print(f"records {args.records:,} · partitions {args.partitions} · repetitions {args.repeat}")
    print(f"plain   median {medians['plain']:.2f} s")
    print(f"icedtea median {medians['icedtea']:.2f} s (progress agent and time-travel "
          "recording of G(θ), θ = the first operator; no interactions)")
    print(f"ratio {ratio:.3f} (target <= 1.05)")
    print(json.dumps({"bench": "overhead", "records": args.records, "medians": medians,
                      "ratio": ratio, "times": times}))
    spark.stop()


if __name__ == "__main__":
    main()
