"""Driver program for the standalone-cluster test: records a pipeline on spark://MASTER.

Run by test_standalone_cluster.py as ``cluster_driver.py MASTER STORE GATE``. Every
partition of the pipeline waits at the gate (a ``FileGate`` in the directory GATE, seen
by the executors' processes on this machine) in its middle: the driver opens it once it
has seen live counts, so it sees them while the job runs on any machine. Prints one JSON
line with what the test checks.
"""
import json
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))

from pyspark import cloudpickle  # noqa: E402
from pyspark.sql import SparkSession  # noqa: E402

from icedtea_jupyter.session.execution import RunOptions, start_run  # noqa: E402
from tests import waiting  # noqa: E402
from tests.waiting import FileGate, wait_until  # noqa: E402

RECORDS, PARTITIONS = 1200, 4
HOLD_AT = 150  # the record of each partition that waits at the gate


class Slow:
    def __init__(self, gate):
        self.gate = gate

    def __call__(self, x):
        if x % (RECORDS // PARTITIONS) == HOLD_AT:
            self.gate.wait(f"p{x // (RECORDS // PARTITIONS)}")
        elif not self.gate.is_open():
            # before the gate: 0.6 s of work, so that the worker's heartbeat (every
            # 0.25 s) reports live counts before it waits; none is needed after it
            time.sleep(0.004)
        return x % 5, os.getpid()


def live_count(run):
    """The slow operator's records in, while its tasks run (else None)."""
    row = next((r for r in run.progress() if r["operator"] == "slow"), None)
    if run.status == "running" and row and row["running"] and row["records_in"] > 0:
        return row["records_in"]
    return None


def main(master: str, store: str, gate_dir: str) -> None:
    cloudpickle.register_pickle_by_value(waiting)  # executors cannot import tests
    spark = (SparkSession.builder.master(master).appName("icedtea-cluster-test")
             .config("spark.driver.host", "127.0.0.1")
             .config("spark.executor.cores", "2").config("spark.cores.max", "2")
             .config("spark.ui.enabled", "false").getOrCreate())
    spark.sparkContext.setLogLevel("ERROR")
    gate = FileGate(gate_dir)
    code = (f"pids = sorted(set(sc.parallelize(range({RECORDS}), {PARTITIONS}).map(Slow(gate))"
            ".setName('slow').values().collect()))")
    ns = {"sc": spark.sparkContext, "Slow": Slow, "gate": gate}
    run = start_run(code, ns, RunOptions(store=store))
    live = []
    try:
        live.append(wait_until(lambda: live_count(run), 120,
                               "live counts of 'slow' while its tasks wait at the gate"))
    finally:
        gate.open()
    run.wait(120)
    metrics = run.metrics()
    print(json.dumps({
        "status": run.status, "error": run.error, "warnings": run.warnings,
        "driver_pid": os.getpid(), "worker_pids": ns.get("pids", []),
        "coordinator": list(run.coordinator.server.address),
        "records_in": metrics.groupby("operator")["records_in"].sum().to_dict(),
        "live": live,
    }))
    spark.stop()


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], sys.argv[3])
