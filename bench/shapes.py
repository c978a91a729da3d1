"""Recording overhead on the pipelines users write, side by side with the plain run.

Each workload runs plain, under ``%%icedtea`` with its defaults (progress agent, G(θ)
recorded, no interactions), and recorded with one and ten interactions a second, the
four alternating in one process and one Spark session; the medians over the
repetitions, their ratios to the plain run (targets: <= 1.05, <= 1.05, <= 1.10) and the
paired ratios (each repetition against the plain run beside it). Writes
``bench/results/shapes.json``.

``--skew``: instead, plain, recorded, and recorded with ``--skew`` (issue 13's budget:
<= 1.02x the plain run; also its ratio to the recorded run beside it, the cost of
counting keys alone). Writes ``bench/results/shapes_skew.json``.

    .venv/bin/python bench/shapes.py [--scale 1.0] [--repeat 3] [--only NAME] [--skew]
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

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from overhead import measured, start_session  # noqa: E402
from pyspark import cloudpickle  # noqa: E402

from icedtea_jupyter import Operator  # noqa: E402
from icedtea_jupyter.session.execution import RunOptions, start_run  # noqa: E402
from icedtea_jupyter.store import layout  # noqa: E402

RESULTS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "results", "shapes.json")


class Totals(Operator):
    """θ: a dict of running totals (1,000 keys)."""

    def open(self):
        self.totals = {}

    def process(self, x):
        key = x % 1000
        total = self.totals.get(key, 0) + x
        self.totals[key] = total
        yield x, total


def running(rows):
    """θ as a generator mapPartitions: the usual way to keep state."""
    best = 0
    count = 0
    for x in rows:
        count += 1
        if x > best:
            best = x
        yield x


def parse(line):
    """A cheap lambda's worth of parsing: "user,amount" -> (user, amount)."""
    user, amount = line.split(",")
    return user, int(amount)


def seen_users(rows):
    """θ as a generator holding a set: the users seen so far on the partition."""
    users = set()
    for user, amount in rows:
        fresh = user not in users
        users.add(user)
        yield user, amount, fresh


def streaks(rows):
    """A generator after a shuffle: the longest run of rising amounts per partition."""
    best = run = 0
    last = None
    for key, amount in rows:
        run = run + 1 if last is not None and amount > last else 1
        best = max(best, run)
        last = amount
        yield key, run


# name -> (records at scale 1, θ, the cell's code)
WORKLOADS = {
    "operator, filter drops a third, map, reduceByKey (6M ints)": (6_000_000, "totals", """
out = (sc.parallelize(range(N), 4).mapPartitions(Totals()).setName("totals")
       .filter(lambda r: r[0] % 3 != 0).map(lambda r: (r[0] % 100, r[1]))
       .reduceByKey(add).count())"""),
    "generator, cheap lambdas (6M ints)": (6_000_000, "running", """
out = (sc.parallelize(range(N), 4).mapPartitions(running).setName("running")
       .map(lambda x: x * 2).filter(lambda x: x % 5 != 0).map(lambda x: x + 1).count())"""),
    "operator, filter keeps 1% (6M ints)": (6_000_000, "totals", """
out = (sc.parallelize(range(N), 4).mapPartitions(Totals()).setName("totals")
       .filter(lambda r: r[0] % 100 == 0).map(lambda r: r[1]).count())"""),
    "operator, then a join (2M ints)": (2_000_000, "totals", """
other = sc.parallelize([(k, k * k) for k in range(100)], 2)
out = (sc.parallelize(range(N), 4).mapPartitions(Totals()).setName("totals")
       .map(lambda r: (r[0] % 100, r[1])).join(other, 4).count())"""),
}
# pipelines written as a user would, not for the benchmark: parsed strings, a generator
# θ, a filter that drops most records, an aggregation; a shuffle with a generator after θ
WORKLOADS.update({
    "parse, generator θ (a set), filter keeps 7%, reduceByKey (2M strings)": (
        2_000_000, "seen", """
out = (LINES.map(parse).mapPartitions(seen_users).setName("seen")
       .filter(lambda r: r[1] < 70).map(lambda r: (r[0], r[1]))
       .reduceByKey(add).count())"""),
    "generator θ, partitionBy, generator after the shuffle (2M ints)": (2_000_000, "running", """
out = (sc.parallelize(range(N), 4).mapPartitions(running).setName("running")
       .map(lambda x: (x % 1000, x)).partitionBy(4).mapPartitions(streaks)
       .filter(lambda r: r[1] > 3).count())"""),
    "word count over a list of lines: flatMap, map, reduceByKey (5M Zipf words)": (
        5_000_000, "split", """
out = (sc.parallelize(TEXT, 4).flatMap(lambda line: line.split()).setName("split")
       .map(lambda word: (word, 1)).reduceByKey(add).count())"""),
})
SETTINGS = {"plain": None, "icedtea": {}, "1/s": {"interact_every": 1.0},
            "10/s": {"interact_every": 0.1}}
TARGETS = {"icedtea": 1.05, "1/s": 1.05, "10/s": 1.10}
SKEW_SETTINGS = {"plain": None, "icedtea": {}, "skew": {"skew": True}}
SKEW_TARGETS = {"icedtea": 1.05, "skew": 1.02}


def run_once(code: str, ns: dict, store: str, options: dict | None, theta: str) -> tuple:
    if options is None:
        return measured(lambda: exec(code, dict(ns)))

    def recorded() -> None:
        run = start_run(code, dict(ns), RunOptions(store=store, interesting=theta,
                                                   prepare=False, **options))
        run.wait()
        assert run.status == "finished", run.error
    return measured(recorded)


def log_size(code: str, ns: dict, store: str, theta: str) -> dict:
    """One more run at ten interactions a second: its replay logs' bytes against θ's
    input bytes (pickled, as its workers sampled them; budget <= 2 %)."""
    run = start_run(code, dict(ns), RunOptions(store=store, interesting=theta, prepare=False,
                                               **SETTINGS["10/s"]))
    run.wait()
    logs = sum(os.path.getsize(path) for _, path in layout.replay_logs(run.path))
    metrics = run.metrics()
    inputs = int(metrics.loc[metrics["operator"] == theta, "bytes_in"].sum())
    return {"log_bytes": logs, "input_bytes": inputs, "share": logs / max(inputs, 1)}


def namespace(spark, code: str, n: int) -> dict:
    """What a workload's cell sees: the context, ``N`` records, the operators above."""
    ns = {"sc": spark.sparkContext, "N": n, "Totals": Totals, "running": running, "add": add,
          "parse": parse, "seen_users": seen_users, "streaks": streaks}
    if "TEXT" in code:  # a Python list the cell parallelizes, as Titian's word count
        from lineage_capture import zipf_lines

        ns["TEXT"] = zipf_lines(n)
    if "LINES" in code:  # cached strings, made once: the runs time the pipeline alone
        ns["LINES"] = spark.sparkContext.parallelize(
            [f"u{i % 50_000},{i % 997}" for i in range(n)], 4).cache()
        ns["LINES"].count()
    return ns


def bench(spark, name: str, args) -> dict:
    records, theta, code = WORKLOADS[name]
    ns = namespace(spark, code, int(records * args.scale))
    store = tempfile.mkdtemp(prefix="icedtea-shapes-")
    settings, targets = (SKEW_SETTINGS, SKEW_TARGETS) if args.skew else (SETTINGS, TARGETS)
    for options in settings.values():  # warm up
        run_once(code, ns, store, options, theta)
    times: dict[str, list[float]] = {s: [] for s in settings}
    cpu: dict[str, list[float]] = {s: [] for s in settings}
    for i in range(args.repeat):
        order = list(settings.items())
        for setting, options in (order if i % 2 == 0 else order[::-1]):
            wall, used = run_once(code, ns, store, options, theta)
            times[setting].append(wall)
            cpu[setting].append(used)
        print(f"  {name} rep {i + 1}: " + ", ".join(f"{s} {times[s][-1]:.2f} s"
                                                   for s in settings), flush=True)
    medians = {s: statistics.median(v) for s, v in times.items()}
    row = {"workload": name, "records": ns["N"], "repeat": args.repeat, "medians": medians,
           "times": times, "worker_cpu": cpu}
    if not args.skew:
        row["logs"] = log_size(code, ns, store, theta)
    for setting in targets:
        row[setting] = ratios(times, cpu, setting, "plain")
    if args.skew:
        row["skew_vs_icedtea"] = ratios(times, cpu, "skew", "icedtea")
    return row


def ratios(times: dict, cpu: dict, setting: str, against: str) -> dict:
    """``setting``'s median wall time, paired wall time and worker CPU over ``against``'s."""
    median = statistics.median
    return {"ratio": median(times[setting]) / median(times[against]),
            "paired_ratio": median(r / p for r, p in zip(times[setting], times[against])),
            "cpu_ratio": median(cpu[setting]) / median(cpu[against])}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scale", type=float, default=1.0)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--only", help="run the workloads whose name contains this")
    parser.add_argument("--skew", action="store_true",
                        help="plain, recorded and recorded with --skew, side by side")
    args = parser.parse_args()
    cloudpickle.register_pickle_by_value(sys.modules[__name__])
    spark = start_session()
    started = time.time()
    names = [n for n in WORKLOADS if not args.only or args.only in n]
    rows = [bench(spark, name, args) for name in names]
    os.makedirs(os.path.dirname(RESULTS), exist_ok=True)
    path = RESULTS.replace(".json", "_skew.json") if args.skew else RESULTS
    with open(path, "w") as out:
        json.dump({"scale": args.scale, "seconds": time.time() - started, "rows": rows},
                  out, indent=1)
    columns = ["icedtea", "skew", "skew_vs_icedtea"] if args.skew else list(TARGETS)
    print(f"{'workload':58s} {'plain s':>7s} " + " ".join(f"{s + ' (paired, cpu)':>24s}"
                                                         for s in columns))
    for row in rows:
        logs = "" if args.skew else f"  logs {100 * row['logs']['share']:.2f} % of θ's input"
        print(f"{row['workload'][:58]:58s} {row['medians']['plain']:7.2f} " + " ".join(
            f"{row[s]['ratio']:8.3f} ({row[s]['paired_ratio']:.3f}, {row[s]['cpu_ratio']:.3f})"
            for s in columns) + logs)
    spark.stop()


if __name__ == "__main__":
    main()
