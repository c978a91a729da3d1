"""Jumps from fork checkpoints on the pipelines users write (IcedTea's Figure 20 again).

Two pipelines that pickled checkpoints cannot restore: a generator ``mapPartitions``
after θ, and an aggregation after θ followed by a generator after the shuffle. Each is
recorded with one interaction every ``--every`` seconds; then the replay process places
its fork checkpoints (the background phase, timed against the run) and every
interaction is jumped to, in random order, from the replay process; and, for
comparison, from the in-kernel engine (replay from I0, since neither pipeline can be
restored from a pickled checkpoint). Writes ``bench/results/fork_jumps.json``.

    .venv/bin/python bench/fork_jumps.py [--records 400000] [--every 0.5] [--tau 1]
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

from icedtea_jupyter import Operator  # noqa: E402
from icedtea_jupyter.replay.debugger import Debugger  # noqa: E402
from icedtea_jupyter.session.execution import RunOptions, start_run  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from overhead import start_session  # noqa: E402

RESULTS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "results", "fork_jumps.json")


class Points(Operator):
    """θ: running totals per customer (a dict of 1,000 keys)."""

    def open(self):
        self.totals = {}

    def process(self, record):
        customer, amount = record
        total = self.totals.get(customer, 0) + amount
        self.totals[customer] = total
        yield customer, amount, total


def tier(rows):
    """A generator mapPartitions: the customers past 50,000 so far, and a count."""
    gold = set()
    seen = 0
    for customer, _amount, total in rows:
        seen += 1
        if total > 50_000:
            gold.add(customer)
        yield customer, total, customer in gold


def streak(pairs):
    """A generator after the shuffle: the longest run of rising sums."""
    longest = current = 0
    last = None
    for _, value in pairs:
        current = current + 1 if last is not None and value > last else 0
        longest = max(longest, current)
        last = value
        yield value


PIPELINES = {
    "generator after θ": (
        "out = (sc.parallelize(range(N), 4).map(lambda i: (i % 1000, (i * 7919) % 100))"
        ".mapPartitions(Points()).setName('points').mapPartitions(tier).setName('tier')"
        ".filter(lambda r: r[2]).count())"),
    "shuffle, then a generator": (
        "out = (sc.parallelize(range(N), 4).map(lambda i: (i % 1000, (i * 7919) % 100))"
        ".mapPartitions(Points()).setName('points').map(lambda r: (r[0], r[1]))"
        ".reduceByKey(lambda a, b: a + b, 4).setName('sum')"
        ".mapPartitions(streak).setName('streak').count())"),
}


def jumps(dbg, indices: list[int]) -> list[float]:
    seconds = []
    for k in indices:
        start = time.perf_counter()
        dbg.jump(k)
        seconds.append(time.perf_counter() - start)
    return seconds


def summary(seconds: list[float], tau: float) -> dict:
    return {"median": statistics.median(seconds), "max": max(seconds),
            "over_tau": sum(s > tau for s in seconds), "jumps": len(seconds)}


def bench(spark, name: str, code: str, args) -> dict:
    ns = {"sc": spark.sparkContext, "N": args.records, "Points": Points, "tier": tier,
          "streak": streak}
    store = tempfile.mkdtemp(prefix="icedtea-fork-bench-")
    start = time.perf_counter()
    run = start_run(code, ns, RunOptions(store=store, interesting="points", tau=args.tau,
                                         interact_every=args.every))
    run.wait()
    run_seconds = time.perf_counter() - start
    assert run.status == "finished", run.error
    dbg = run.debugger()
    start = time.perf_counter()
    plan = dbg.prepare()
    phase = time.perf_counter() - start
    indices = list(range(len(run.interactions)))
    random.Random(7).shuffle(indices)
    forked = jumps(dbg, indices)
    in_kernel = Debugger.for_run(run)
    sample = indices[: args.kernel_jumps]
    replayed = jumps(in_kernel, sample)
    in_kernel.close()
    dbg.close()
    row = {"pipeline": name, "records": args.records, "run_seconds": run_seconds,
           "interactions": len(run.interactions), "tau": args.tau,
           "phase_seconds_after_run": phase, "phase_seconds": plan["seconds"],
           "forks": len(plan["forks"]), "fork_memory_mb": plan["memory_bytes"] / 2**20,
           "predicted_worst_jump": plan["predicted_worst_jump"], "tau_met": plan["tau_met"],
           "fork": summary(forked, args.tau), "in_kernel_from_I0": summary(replayed, args.tau)}
    print(json.dumps(row), flush=True)
    return row


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=400_000)
    parser.add_argument("--every", type=float, default=0.5)
    parser.add_argument("--tau", type=float, default=1.0)
    parser.add_argument("--kernel-jumps", type=int, default=8)
    args = parser.parse_args()
    cloudpickle.register_pickle_by_value(sys.modules[__name__])
    spark = start_session()
    rows = [bench(spark, name, code, args) for name, code in PIPELINES.items()]
    os.makedirs(os.path.dirname(RESULTS), exist_ok=True)
    with open(RESULTS, "w") as out:
        json.dump(rows, out, indent=1)
    print(f"{'pipeline':28s} {'run s':>6s} {'I':>4s} {'phase s':>8s} {'forks':>5s} "
          f"{'MB':>6s} {'fork median/max':>16s} {'over τ':>6s} {'from I0 median/max':>19s}")
    for r in rows:
        f, k = r["fork"], r["in_kernel_from_I0"]
        print(f"{r['pipeline']:28s} {r['run_seconds']:6.1f} {r['interactions']:4d} "
              f"{r['phase_seconds']:8.1f} {r['forks']:5d} {r['fork_memory_mb']:6.1f} "
              f"{f['median']:7.3f}/{f['max']:.3f} {f['over_tau']:6d} "
              f"{k['median']:9.3f}/{k['max']:.3f}")
    spark.stop()


if __name__ == "__main__":
    main()
