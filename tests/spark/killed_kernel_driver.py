"""A kernel that is killed mid-run: records a pipeline on local Spark until its job waits
at a gate after θ's stage, prints the run's store path as one JSON line, and waits to be
killed (``killed_kernel_driver.py STORE GATE``; test_store_faults.py kills it).

θ (``total``) runs over both partitions while interactions are taken; its stage ends, the
shuffle's reduce side (``held``) waits at the gate, and the test kills this process.
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

RECORDS = 600


class Total:
    """θ: the running total of what it saw, slow enough for a few interactions."""

    def __init__(self):
        self.total = 0

    def __call__(self, x):
        time.sleep(0.002)
        self.total += x
        return x % 3, x


def held(gate):
    def wait(kv):
        gate.wait(str(os.getpid()))
        return kv
    return wait


def main(store: str, gate_dir: str) -> None:
    cloudpickle.register_pickle_by_value(waiting)
    cloudpickle.register_pickle_by_value(sys.modules[__name__])
    spark = (SparkSession.builder.master("local[2]").appName("icedtea-killed-kernel")
             .config("spark.ui.enabled", "false").getOrCreate())
    spark.sparkContext.setLogLevel("ERROR")
    gate = FileGate(gate_dir)
    code = ("out = sc.parallelize(range(RECORDS), 2).map(Total()).setName('total')"
            ".reduceByKey(lambda a, b: a + b).map(hold).setName('held').collect()")
    ns = {"sc": spark.sparkContext, "Total": Total, "hold": held(gate), "RECORDS": RECORDS}
    run = start_run(code, ns, RunOptions(store=store, interesting="total",
                                         interact_every=0.1, record_inputs=True))
    wait_until(lambda: gate.held(), 120, "the job's reduce side to wait at the gate")
    print(json.dumps({"path": run.path, "interactions": len(run.interactions),
                      "held": gate.held(), "pid": os.getpid()}), flush=True)
    time.sleep(600)  # killed by the test


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
