"""Driver program for the cluster-fault test (``faulty_cluster_driver.py MASTER STORE
GATE``): records a stateful pipeline on a standalone cluster of two one-core executors
while an executor dies, checks the run the way a user would and prints one JSON line.

Every partition waits at the gate (a ``FileGate``) at its record 150; the driver kills the
executor JVM of one held task, opens the gate, and Spark retries the lost tasks. The same
pipeline is then recorded again without the fault.
"""
import json
import os
import signal
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))

from pyspark import cloudpickle  # noqa: E402
from pyspark.sql import SparkSession  # noqa: E402

from icedtea_jupyter.session.execution import RunOptions, start_run  # noqa: E402
from tests import waiting  # noqa: E402
from tests.waiting import FileGate, wait_until  # noqa: E402

RECORDS, PARTITIONS = 1200, 4
PER_PARTITION = RECORDS // PARTITIONS
HOLD_AT = 150
JUMPS = 12


class Total:
    """θ: the running total of the records it saw; with a ``gate``, each partition waits
    there at its record HOLD_AT."""

    def __init__(self, gate=None):
        self.gate, self.total = gate, 0

    def __call__(self, x):
        if self.gate is not None and x % PER_PARTITION == HOLD_AT:
            self.gate.wait(str(os.getpid()))
        else:
            time.sleep(0.001)
        self.total += x
        return x


def session(master, **conf):
    """A session on the two one-core executors (with extra Spark ``conf``)."""
    builder = (SparkSession.builder.master(master).appName("icedtea-executor-lost")
               .config("spark.driver.host", "127.0.0.1").config("spark.executor.cores", "1")
               .config("spark.cores.max", "2").config("spark.ui.enabled", "false")
               .config("spark.task.maxFailures", "4"))
    for key, value in conf.items():
        builder = builder.config(key, value)
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    return spark


def record(spark, store, operator, then=None):
    """Start recording the pipeline; the cell calls ``then()`` after its job, if given."""
    ns = {"sc": spark.sparkContext, "total": operator, "then": then or (lambda: None)}
    run = start_run("out = sc.parallelize(range(1200), 4).map(total).setName('total').sum()\n"
                    "then()", ns, RunOptions(store=store, interesting="total",
                                             interact_every=0.2))
    return run, ns


def executor_of(pid):
    """The executor JVM a Python worker descends from (its parent's parent, or further)."""
    while pid > 1:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            if b"CoarseGrainedExecutorBackend" in f.read():
                return pid
        with open(f"/proc/{pid}/stat") as f:
            pid = int(f.read().rsplit(")", 1)[1].split()[1])
    raise LookupError("no executor JVM above the Python worker")


def spread(n, most=JUMPS):
    """At most ``most`` of the interactions 1..n-1, evenly spread, the last included."""
    every = range(1, n)
    if len(every) <= most:
        return list(every)
    return sorted({every[round(i * (len(every) - 1) / (most - 1))] for i in range(most)})


def summary(run, ns):
    """What the test checks: the result, the counts, the attempts, time travel (jumps
    to ``JUMPS`` interactions spread over the run: every one, 0.2 s apart, took most of
    the tests' minutes)."""
    dbg = run.debugger()
    jumps_equal = []
    for k in spread(len(run.interactions)):
        snapshot, jumped = run.snapshot(k), dbg.jump(k)
        jumps_equal.append(all(jumped.state("total", p)["total"] ==
                               snapshot.state("total", p)["total"] for p in range(PARTITIONS)
                               if snapshot.state("total", p) is not None))
    dbg.close()
    last = run.snapshot(len(run.interactions) - 1)
    return {
        "status": run.status, "error": run.error, "warnings": run.warnings, "out": ns.get("out"),
        "records_in": run.metrics().groupby("operator")["records_in"].sum().to_dict(),
        "progress_in": {row["operator"]: row["records_in"] for row in run.progress()},
        "attempts": [[w["partition"], w["attempt"], w["status"]]
                     for w in run.partitions("total")],
        "last": [[last.worker("total", p).count, last.state("total", p)["total"]]
                 for p in range(PARTITIONS)],
        "interactions": len(run.interactions), "jumps_equal": jumps_equal,
    }


def main(master, store, gate_dir):
    spark = session(master)
    gate = FileGate(gate_dir)
    run, ns = record(spark, store, Total(gate))
    try:
        held = wait_until(lambda: len(gate.held()) >= 2 and gate.held(), 120,
                          "two tasks, one per executor, to wait at the gate")
        time.sleep(0.5)  # an interaction or two while they wait
        victim = executor_of(int(held[0]))
        os.kill(victim, signal.SIGKILL)
    finally:
        gate.open()
    run.wait(240)
    faulty = summary(run, ns)
    again, ns2 = record(spark, store, Total())
    again.wait(240)
    print(json.dumps({"faulty": faulty, "plain": summary(again, ns2), "killed": victim}))


if __name__ == "__main__":
    cloudpickle.register_pickle_by_value(waiting)  # executors cannot import tests
    cloudpickle.register_pickle_by_value(sys.modules[__name__])
    main(*sys.argv[1:4])
