"""A long run at ten interactions a second (issue 17, item 7): the kernel's memory and the
run store's size, sampled as the run goes, and what each interaction costs in both.

θ keeps a dict of 1,000 running totals (its snapshots carry the keys that changed) over
two partitions that run for ``--minutes``; every ten seconds the bench samples the
kernel's resident memory and the store's size. Writes ``bench/results/long_run.json``
with the samples and the growth per interaction (least squares over the second half).

    .venv/bin/python bench/long_run.py [--minutes 30] [--every 0.1]
"""
from __future__ import annotations

import repo_paths  # noqa: F401 - this checkout's modules, in the driver and the workers

# isort: split

import argparse
import gc
import json
import os
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from overhead import start_session  # noqa: E402
from pyspark import cloudpickle  # noqa: E402

from icedtea_jupyter import Operator  # noqa: E402
from icedtea_jupyter.session.execution import RunOptions, start_run  # noqa: E402
from icedtea_jupyter.store.full import bytes_held  # noqa: E402

RESULTS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "results", "long_run.json")
RATE = 2000  # records a second per partition


class Paced(Operator):
    """θ: 1,000 running totals, at RATE records a second (it would be faster)."""

    def open(self):
        self.totals, self.started, self.seen = {}, time.monotonic(), 0

    def process(self, x):
        self.seen += 1
        ahead = self.seen / RATE - (time.monotonic() - self.started)
        if ahead > 0:
            time.sleep(ahead)
        key = x % 1000
        self.totals[key] = self.totals.get(key, 0) + x
        yield key, self.totals[key]


def resident_mb() -> float:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 1e6


def slope(points: list[tuple[float, float]]) -> float:
    n = len(points)
    mx = sum(x for x, _ in points) / n
    my = sum(y for _, y in points) / n
    den = sum((x - mx) ** 2 for x, _ in points)
    return sum((x - mx) * (y - my) for x, y in points) / den if den else 0.0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--minutes", type=float, default=30.0)
    parser.add_argument("--every", type=float, default=0.1)
    args = parser.parse_args()
    cloudpickle.register_pickle_by_value(sys.modules[__name__])
    spark = start_session()
    records = int(args.minutes * 60 * RATE) * 2
    store = tempfile.mkdtemp(prefix="icedtea-long-")
    ns = {"sc": spark.sparkContext, "Paced": Paced, "N": records}
    gc.collect()
    before = resident_mb()
    run = start_run("out = sc.parallelize(range(N), 2).mapPartitions(Paced()).setName('paced')"
                    ".count()", ns, RunOptions(store=store, interesting="paced",
                                               interact_every=args.every, prepare=False))
    samples = []
    while run.status == "running":
        time.sleep(10)
        samples.append({"seconds": time.time() - run.manifest["started"],
                        "interactions": len(run.coordinator.book.interactions),
                        "kernel_mb": resident_mb(), "store_mb": bytes_held(run.path) / 1e6})
        print(json.dumps(samples[-1]), flush=True)
    run.wait(120)
    started = time.perf_counter()
    listed = len(run.interactions)  # every worker at every interaction: counts only
    list_seconds = time.perf_counter() - started
    started = time.perf_counter()
    run.snapshot(listed - 1).state("paced", 0)  # the last state, from every delta before it
    snapshot_seconds = time.perf_counter() - started
    late = samples[len(samples) // 2:]
    result = {
        "minutes": args.minutes, "every": args.every, "status": run.status,
        "interactions": listed, "interactions_seconds": list_seconds,
        "last_snapshot_seconds": snapshot_seconds, "kernel_mb_before": before,
        "kernel_mb_end": samples[-1]["kernel_mb"], "store_mb_end": samples[-1]["store_mb"],
        "kernel_kb_per_interaction": 1e3 * slope([(s["interactions"], s["kernel_mb"])
                                                  for s in late]),
        "store_kb_per_interaction": 1e3 * slope([(s["interactions"], s["store_mb"])
                                                 for s in late]),
        "samples": samples,
    }
    os.makedirs(os.path.dirname(RESULTS), exist_ok=True)
    with open(RESULTS, "w") as out:
        json.dump(result, out, indent=1)
    print(json.dumps({k: v for k, v in result.items() if k != "samples"}, indent=1))
    spark.stop()


if __name__ == "__main__":
    main()
