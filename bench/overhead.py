"""Recording overhead: the same Python pipeline plain and under icedtea, side by side.

A few million records through a stateful mapPartitions (an ``Operator``), a filter, a
map and a reduceByKey; each repetition runs the plain pipeline and the recorded one
(progress agent on) in the same process and Spark session, alternating which goes
first. Prints the medians and their ratio (target: <= 1.05).

    .venv/bin/python bench/overhead.py [--records 3000000] [--repeat 5]
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
from operator import add

os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")

import psutil  # noqa: E402
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


def own_daemons() -> list:
    """``pyspark.daemon`` processes this process started (through its Spark JVM)."""
    found = []
    for process in psutil.Process().children(recursive=True):
        try:
            if "pyspark.daemon" in " ".join(process.cmdline()):
                found.append(process)
        except psutil.Error:
            continue
    return found


def worker_cpu_seconds() -> float:
    """CPU seconds used so far by Spark's Python workers (the daemon and every worker it
    forked, live or reaped). On a shared VM wall time swings with other tenants; CPU
    time does not count time stolen by them. Forked workers carry the daemon's command
    line: only the root daemon is counted, with its children. Only this process's own
    descendants count: on a shared machine other sessions' Spark workers run too."""
    daemons = own_daemons()
    pids = {p.pid for p in daemons}
    total = 0.0
    for process in daemons:
        if process.ppid() in pids:
            continue  # a worker the daemon forked: counted below, with the daemon
        try:
            times = process.cpu_times()
            children = process.children(recursive=True)
        except psutil.Error:
            continue
        total += times.user + times.system + times.children_user + times.children_system
        for child in children:  # one that exits meanwhile loses only its own share
            try:
                child_times = child.cpu_times()
            except psutil.Error:
                continue
            total += child_times.user + child_times.system
    return total


def measured(fn) -> tuple[float, float]:
    """(wall seconds, Python-worker CPU seconds) of one call of ``fn``."""
    cpu, start = worker_cpu_seconds(), time.perf_counter()
    fn()
    return time.perf_counter() - start, worker_cpu_seconds() - cpu


def plain(namespace: dict) -> float:
    plain.cpu = 0.0
    wall, plain.cpu = measured(lambda: exec(PIPELINE, dict(namespace)))
    return wall


def recorded(namespace: dict, store: str, **options) -> float:
    def run_it() -> None:
        # recording alone: no fork checkpoints placed after the run (they would use the
        # CPU while the next repetition runs)
        options.setdefault("prepare", False)
        run = start_run(PIPELINE, dict(namespace), RunOptions(store=store, **options))
        run.wait()
        assert run.status == "finished", run.error
        recorded.last_run = run
    wall, recorded.cpu = measured(run_it)
    return wall


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
    cpu: dict[str, list[float]] = {"plain": [], "icedtea": []}
    for i in range(args.repeat):
        order = [("plain", lambda: plain(ns), plain), ("icedtea", lambda: recorded(ns, store),
                                                        recorded)]
        for name, fn, source in (order if i % 2 == 0 else order[::-1]):
            times[name].append(fn())
            cpu[name].append(source.cpu)
            print(f"  rep {i + 1} {name:8s} {times[name][-1]:.2f} s wall, "
                  f"{cpu[name][-1]:.2f} s worker CPU", flush=True)
    medians = {name: statistics.median(values) for name, values in times.items()}
    ratio = medians["icedtea"] / medians["plain"]
    cpu_ratio = statistics.median(cpu["icedtea"]) / statistics.median(cpu["plain"])
    print(f"records {args.records:,} · partitions {args.partitions} · repetitions {args.repeat}")
    print(f"plain   median {medians['plain']:.2f} s")
    print(f"icedtea median {medians['icedtea']:.2f} s (progress agent and time-travel "
          "recording of G(θ), θ = the first operator; no interactions)")
    print(f"ratio {ratio:.3f} (target <= 1.05) · Python-worker CPU ratio {cpu_ratio:.3f}")
    print(json.dumps({"bench": "overhead", "records": args.records, "medians": medians,
                      "ratio": ratio, "cpu_ratio": cpu_ratio, "times": times, "cpu": cpu}))
    spark.stop()


if __name__ == "__main__":
    main()
