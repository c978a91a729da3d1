"""Where Spark's Python workers spend their time, plain and under ``%%icedtea``: py-spy
samples the worker processes (native frames included, so the C iterators show) while a
``bench/shapes.py`` workload runs, and the samples' leaf frames are summed per function.

    .venv/bin/python bench/worker_profile.py --only partitionBy [--setting icedtea]

Prints, for the plain run and the chosen setting, the top functions by own samples in the
workers (sampled at 250 Hz), and the total worker samples of each. Needs ``py-spy``
(``pip install py-spy``) and permission to trace child processes.
"""
from __future__ import annotations

import repo_paths  # noqa: F401 - this checkout's modules, in the driver and the workers

# isort: split

import argparse
import collections
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
WORKER_MARK = "pyspark.daemon pyspark.worker"  # a stack of a Python worker (not the driver, not the JVM)


def inner(only: str, setting: str, repeat: int) -> None:
    """In the process py-spy watches: run the workload ``repeat`` times in ``setting``."""
    sys.path.insert(0, HERE)
    import shapes  # noqa: PLC0415 - bench/shapes.py, imported where py-spy watches
    from pyspark import cloudpickle

    cloudpickle.register_pickle_by_value(shapes)
    spark = shapes.start_session()
    name = next(n for n in shapes.WORKLOADS if only in n)
    records, theta, code = shapes.WORKLOADS[name]
    ns = shapes.namespace(spark, code, records)
    store = tempfile.mkdtemp(prefix="icedtea-profile-")
    for _ in range(repeat):
        shapes.run_once(code, ns, store, shapes.SETTINGS[setting], theta)
    spark.stop()


def leaf_counts(raw: str) -> tuple[collections.Counter, int]:
    """py-spy's raw (collapsed) stacks -> samples per leaf function, in worker stacks."""
    leaves: collections.Counter = collections.Counter()
    total = 0
    for line in raw.splitlines():
        stack, _, count = line.rpartition(" ")
        if WORKER_MARK not in stack:
            continue
        name, _, where = stack.split(";")[-1].partition(" (")
        leaves[f"{name} ({where.rsplit('/', 1)[-1].split(':')[0].rstrip(')')})"] += int(count)
        total += int(count)
    return leaves, total


def profiled(only: str, setting: str, repeat: int) -> tuple[collections.Counter, int]:
    out = tempfile.mktemp(suffix=".txt")
    subprocess.run(["py-spy", "record", "--subprocesses", "--native", "--rate", "250",
                    "--format", "raw", "--output", out, "--",
                    sys.executable, __file__, "--inner", "--only", only,
                    "--setting", setting, "--repeat", str(repeat)],
                   check=True, capture_output=True)
    with open(out) as f:
        return leaf_counts(f.read())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", required=True, help="a bench/shapes.py workload's name part")
    parser.add_argument("--setting", default="icedtea", choices=["plain", "icedtea", "1/s", "10/s"])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--top", type=int, default=15)
    parser.add_argument("--inner", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.inner:
        return inner(args.only, args.setting, args.repeat)
    for setting in ("plain", args.setting):
        leaves, total = profiled(args.only, setting, args.repeat)
        print(f"== {setting}: {total} worker samples ({args.repeat} runs)")
        for leaf, count in leaves.most_common(args.top):
            print(f"  {count:6d} {100 * count / total:5.1f}%  {leaf}")


if __name__ == "__main__":
    main()
