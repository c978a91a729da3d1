"""Instructions Spark's Python workers execute for one job, plain and recorded, counted
by callgrind: a measure this shared VM's other tenants do not move (wall and CPU ratios
of a few-second job swing by +-9% here; see REPORT, h13n).

Spark's Python daemon runs under ``valgrind --tool=callgrind``; with worker reuse off it
forks one worker a task, and each worker writes its count when it exits. A forked
worker's count includes the daemon's before the fork, so each variant's job is run
twice, at ``--records`` and at a few records with as many tasks; the difference is what
the records cost. The driver is not under valgrind (its own part is small: the
coordinator's threads took 0.03 s of CPU on a 2M-record run).

Under valgrind a worker runs about 100 times slower; a recorded worker's time-based
work (block checks every 0.05 s, heartbeats every 0.25 s, ``--skew``'s live messages
every second) is spaced ``--slowdown`` times wider (a ``sitecustomize`` on the workers'
path), to come as often per record as it does natively.

    .venv/bin/python bench/worker_instructions.py [--records 1000000] [--keys 100000]
        [--variants plain,recorded,skew] [--shape reduceByKey]
"""
from __future__ import annotations

import repo_paths  # noqa: F401 - this checkout's modules, in the driver and the workers

# isort: split

import argparse
import glob
import os
import shutil
import sys
import tempfile
import time
from operator import add

OUT = tempfile.mkdtemp(prefix="icedtea-callgrind-")
WRAPPER = os.path.join(OUT, "python-under-callgrind")
with open(WRAPPER, "w") as wrapper:
    wrapper.write(f"#!/bin/sh\nexec valgrind --tool=callgrind -q --callgrind-out-file="
                  f"{OUT}/worker.%p {sys.executable} \"$@\"\n")
os.chmod(WRAPPER, 0o755)
os.environ["PYSPARK_PYTHON"] = WRAPPER
SITE = os.path.join(OUT, "site")
os.makedirs(SITE)
with open(os.path.join(SITE, "sitecustomize.py"), "w") as site:
    site.write("""import os
scale = float(os.environ.get("ICEDTEA_BENCH_SLOWDOWN", "1"))
if scale != 1:  # bench/worker_instructions.py: valgrind's slowdown, taken off the periods
    from icedtea_jupyter.executor import host, skew, timetravel
    host.CHECK_PERIOD *= scale
    host.HEARTBEAT_PERIOD *= scale
    skew.SEND_PERIOD *= scale
    timetravel.BATCH_SUM_PERIOD *= scale
""")
os.environ["PYTHONPATH"] = os.pathsep.join([SITE, os.environ["PYTHONPATH"]])
os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")

import psutil  # noqa: E402
from overhead import own_daemons  # noqa: E402
from pyspark.sql import SparkSession  # noqa: E402
from skew import PIPELINES, ZipfKey  # noqa: E402

from icedtea_jupyter.session.execution import RunOptions, start_run  # noqa: E402

FEW = 1_000  # records of the job whose count is subtracted (the same tasks, no work)


def worker_counts(seen: set[str], timeout: float = 1800) -> list[int]:
    """The instruction totals of the workers that exited since ``seen`` was taken,
    once every forked worker has exited and written its file."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if not forked_workers_alive():
            new = [path for path in sorted(set(glob.glob(f"{OUT}/worker.*")) - seen)
                   if not running(int(path.rsplit(".", 1)[1]))]  # the daemon's: at its end
            counts = [count_of(path) for path in new]
            finished = [c for c in counts if c is not None]
            if len(finished) == len(counts):
                seen.update(new)
                # workers only, not the driver's check of the interpreter it runs
                return [total for command, total in finished if "pyspark.daemon" in command]
        time.sleep(0.5)
    raise TimeoutError("the workers under callgrind did not finish")


def forked_workers_alive() -> bool:
    """Whether a worker the daemon forked still runs (the daemon itself lives on): a
    daemon process whose parent is one too, as ``overhead.worker_cpu_seconds`` tells them."""
    daemons = own_daemons()
    pids = {p.pid for p in daemons}
    return any(_parent(p) in pids for p in daemons)


def _parent(process: psutil.Process) -> int | None:
    try:
        return process.ppid()
    except psutil.Error:  # exited meanwhile
        return None


def running(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.Error:
        return False


def count_of(path: str) -> tuple[str, int] | None:
    """(command line, instructions) of a finished process's callgrind file."""
    command = ""
    with open(path, errors="replace") as f:
        for line in f:
            if line.startswith("cmd:"):
                command = line
            elif line.startswith("totals:"):
                return command, int(line.split()[1])
    return None


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=1_000_000)
    parser.add_argument("--keys", type=int, default=100_000)
    parser.add_argument("--partitions", type=int, default=4)
    parser.add_argument("--variants", default="plain,recorded,skew")
    parser.add_argument("--shape", choices=sorted(PIPELINES), default="reduceByKey")
    parser.add_argument("--slowdown", type=float, default=100.0)
    args = parser.parse_args()
    os.environ["ICEDTEA_BENCH_SLOWDOWN"] = str(args.slowdown)  # before Spark starts workers
    spark = (SparkSession.builder.master("local[2]").config("spark.ui.enabled", "false")
             .config("spark.ui.showConsoleProgress", "false")
             .config("spark.python.worker.reuse", "false")
             .config("spark.network.timeout", "3600s")
             .config("spark.sql.shuffle.partitions", str(args.partitions)).getOrCreate())
    sc = spark.sparkContext
    sc.setLogLevel("ERROR")
    ns = {"sc": sc, "spark": spark, "N": args.records, "P": args.partitions,
          "R": args.partitions, "KEYS": args.keys, "S": 1.1, "ZipfKey": ZipfKey, "add": add}
    pipeline = PIPELINES[args.shape]
    store = tempfile.mkdtemp(prefix="icedtea-callgrind-store-")

    def job(variant: str, records: int) -> None:
        namespace = dict(ns, N=records)
        if variant == "plain":
            exec(pipeline, namespace)
            return
        run = start_run(pipeline, namespace,
                        RunOptions(store=store, skew=variant == "skew", prepare=False))
        run.wait(7200)
        assert run.status == "finished", run.error

    variants = args.variants.split(",")
    job("plain", FEW)  # the daemon starts (and imports) under valgrind
    seen: set[str] = set()
    worker_counts(seen)
    marginal: dict[str, int] = {}
    for variant in variants:
        job(variant, FEW)
        few = worker_counts(seen)
        job(variant, args.records)
        full = worker_counts(seen)
        marginal[variant] = sum(full) - sum(few)
        print(f"{variant:9s} {len(full)} workers: {sum(full) / 1e9:8.3f} G instructions, "
              f"{sum(few) / 1e9:7.3f} G at {FEW} records: "
              f"{marginal[variant] / args.records:9,.0f} a record", flush=True)
    base = marginal.get("plain")
    for variant in variants:
        if base and variant != "plain":
            print(f"  {variant}/plain: {marginal[variant] / base:.4f}x")
    spark.stop()
    shutil.rmtree(OUT, ignore_errors=True)
    shutil.rmtree(store, ignore_errors=True)


if __name__ == "__main__":
    main()
