"""Driver program for the speculation test (``speculative_cluster_driver.py MASTER STORE
GATES``): records a stateful pipeline on a standalone cluster of two one-core
executors with ``spark.speculation`` on, while partition 0's first attempt straggles, and
prints one JSON line describing the run the way a user would check it.

Partition 0's first attempt waits at the gate ``GATES/original`` at its record HOLD_AT, so
Spark, once the other partitions are done, launches a speculative copy on the other
executor. In the first run the copy runs through and wins, and the original's gate
opens after the run. In the second the copy waits at its own gate, the driver opens the
original's gate once the copy is held there, so the original wins, and opens the copy's as
soon as the job returns (the cell's next step, which waits for the copy's Python worker
to end): the killed copy gets to its end and reports while the run still records. The
same pipeline is then recorded again without speculation.
"""
import json
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))

from pyspark import cloudpickle  # noqa: E402

from icedtea_jupyter.dag import Dag  # noqa: E402
from icedtea_jupyter.session.run import Run  # noqa: E402
from icedtea_jupyter.store.run_store import RunStore  # noqa: E402
from tests import waiting  # noqa: E402
from tests.spark import faulty_cluster_driver as cluster_run  # noqa: E402
from tests.waiting import FileGate, wait_until  # noqa: E402

HOLD_AT = cluster_run.HOLD_AT
SPECULATION = {"spark.speculation": "true", "spark.speculation.interval": "100ms",
               "spark.speculation.quantile": "0.5", "spark.speculation.multiplier": "1.5",
               "spark.speculation.efficiency.enabled": "false",
               # a killed attempt's Python worker lives on for a minute (Spark's default
               # is 2 s), so a loser let through its gate runs to its end and reports
               "spark.python.task.killTimeout": "60s"}


class Straggler(cluster_run.Total):
    """θ: the running total of the records it saw. Partition 0's first attempt waits at
    the ``original`` gate at its record HOLD_AT; a later attempt (the speculative copy)
    waits at the ``copy`` gate there, if one is given."""

    def __init__(self, original=None, copy=None):
        super().__init__()
        self.original, self.copy = original, copy

    def __call__(self, x):
        from pyspark import TaskContext

        if x == HOLD_AT:  # partition 0's record HOLD_AT
            gate = self.original if TaskContext.get().attemptNumber() == 0 else self.copy
            if gate is not None:
                gate.wait(f"{TaskContext.get().attemptNumber()}-{os.getpid()}", timeout=180)
        time.sleep(0.001)
        self.total += x
        return x


def race(spark, store, gates, winner):
    """Record the pipeline while partition 0's attempts race; ``winner`` is the attempt
    made to win: ``copy`` (the original waits until the run is done) or ``original``
    (the copy waits until the job is done). Returns the run's summary, and the summary of
    the run reopened from its store, once the losing Python worker has ended."""
    original = FileGate(os.path.join(gates, winner, "original"))
    copy = FileGate(os.path.join(gates, winner, "copy"))

    def let_the_copy_finish():  # the cell's next step, after the job: the run still records
        copy.open()  # Spark killed the copy; its Python worker still gets to its end
        ended(copy.held())

    run, ns = cluster_run.record(
        spark, store, Straggler(original, copy if winner == "original" else None),
        then=let_the_copy_finish if winner == "original" else None)
    loser = wait_until(original.held, 120, "partition 0's first attempt to wait at its gate")
    if winner == "original":
        loser = wait_until(copy.held, 120, "Spark's speculative copy of partition 0 to start")
        original.open()
    run.wait(240)
    original.open()
    ended(loser)
    stored = from_store(run.store.path)
    return {"run": cluster_run.summary(run, ns), "killed": run.manifest.get("killed_attempts"),
            "killed_records_in": [w["records_in"] for w in stored.partitions("total")
                                  if w["status"] == "killed"],
            "reopened": cluster_run.summary(stored, ns)}


def ended(held):
    """Wait for the Python worker held at a gate (``Straggler``'s ``who``) to end."""
    pid = int(held[0].split("-")[1])
    wait_until(lambda: not os.path.exists(f"/proc/{pid}"), 60,
               f"the losing attempt's Python worker {pid} to end")


def from_store(path):
    """The run as another kernel opening its store sees it (``open_run`` in this one
    returns the live run)."""
    store = RunStore.open(path)
    manifest = store.read_manifest()
    return Run(store, manifest, Dag.from_json(manifest.get("dag", {})))


def main(master, store, gates):
    spark = cluster_run.session(master, **SPECULATION)
    races = {winner: race(spark, store, gates, winner) for winner in ("copy", "original")}
    spark.stop()
    spark = cluster_run.session(master, **{"spark.speculation": "false"})
    plain, ns = cluster_run.record(spark, store, Straggler())
    plain.wait(240)
    print(json.dumps({**races, "plain": cluster_run.summary(plain, ns)}))


if __name__ == "__main__":
    cloudpickle.register_pickle_by_value(waiting)  # executors cannot import tests
    cloudpickle.register_pickle_by_value(cluster_run)
    cloudpickle.register_pickle_by_value(sys.modules[__name__])
    main(*sys.argv[1:4])
