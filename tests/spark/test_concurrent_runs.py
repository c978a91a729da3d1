"""Two runs at once in one kernel (issue 17, item 5): a second %%icedtea cell started while
the first one's job is still running, each on its own thread of the same SparkContext.
Both record correctly and separately: each run's DAG, counts, jobs, interactions and
time travel hold only its own cell's operators."""
import os
import time

import pytest

from icedtea_jupyter.session.execution import RunOptions, start_run
from tests.waiting import wait_until

pytestmark = pytest.mark.spark


def held_at(gate, record):
    """The identity, except that the worker which meets ``record`` waits at ``gate``."""
    def hold(x):
        if x == record:
            gate.wait(str(os.getpid()))
        return x
    return hold


class Total:
    """A stateful operator: the running sum of what it saw."""

    def __init__(self):
        self.total = 0

    def __call__(self, x):
        time.sleep(0.002)  # a few interactions while it runs
        self.total += x
        return x


def test_a_second_run_started_while_the_first_runs_records_separately(spark, tmp_path, gate):
    sc = spark.sparkContext
    store = str(tmp_path / "runs")
    first_code = ("first = sc.parallelize(range(2000), 2).map(hold).setName('held')"
                  ".map(lambda x: 2 * x).setName('double').sum()")
    first = start_run(first_code, {"sc": sc, "hold": held_at(gate, 1500)},
                      RunOptions(store=store, interesting="held", interact_every=0.2))
    wait_until(lambda: gate.held(), 120, "the first run's job to reach the gate")

    second_ns = {"sc": sc, "total": Total()}
    second = start_run("second = sc.parallelize(range(300), 1).map(total).setName('total')"
                       ".collect()", second_ns,
                       RunOptions(store=store, interesting="total", interact_every=0.05))
    second.wait(120)
    assert first.status == "running"  # the first is still held: they overlapped
    gate.open()
    first.wait(120)

    assert (first.status, second.status) == ("finished", "finished")
    assert not any(os.path.exists(os.path.join(run.path, ".reserve"))  # room kept for the
                   for run in (first, second))  # final manifest (store/full.py): released
    assert second_ns["second"] == list(range(300))
    assert [n.name for n in first.dag.python_operators] == ["held", "double"]
    assert [n.name for n in second.dag.python_operators] == ["total"]
    counts = {run.id: {row["operator"]: row["records_in"] for row in run.progress()}
              for run in (first, second)}
    assert counts[first.id] == {"held": 2000, "double": 2000}
    assert counts[second.id] == {"total": 300}
    first_jobs = {job["id"] for job in first.manifest["jobs"]}
    second_jobs = {job["id"] for job in second.manifest["jobs"]}
    assert first_jobs and second_jobs and not first_jobs & second_jobs

    # time travel on each sees its own operator's states only
    last = len(second.interactions) - 1
    assert last >= 2
    seen = second.snapshot(last).worker("total", 0).count
    assert second.snapshot(last).state("total", 0)["total"] == sum(range(seen))
    dbg = second.debugger()
    assert dbg.jump(last).state("total", 0)["total"] == sum(range(seen))
    dbg.close()
    held = first.snapshot(len(first.interactions) - 1)
    assert {w["operator"] for w in held.workers()} == {"held", "double"}
