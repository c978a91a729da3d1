"""Driver program for the standalone-cluster test: records a pipeline on spark://MASTER.

Prints one JSON line with what the test checks. Run by test_standalone_cluster.py.
"""
import json
import os
import sys
import time

from pyspark.sql import SparkSession

from icedtea_jupyter.session.execution import RunOptions, start_run


class Slow:
    def __call__(self, x):
        time.sleep(0.004)
        return x % 5, os.getpid()


def main(master: str, store: str) -> None:
    spark = (SparkSession.builder.master(master).appName("icedtea-cluster-test")
             .config("spark.driver.host", "127.0.0.1")
             .config("spark.executor.cores", "2").config("spark.cores.max", "2")
             .config("spark.ui.enabled", "false").getOrCreate())
    spark.sparkContext.setLogLevel("ERROR")
    code = ("pids = sorted(set(sc.parallelize(range(1200), 4).map(Slow()).setName('slow')"
            ".values().collect()))")
    ns = {"sc": spark.sparkContext, "Slow": Slow}
    run = start_run(code, ns, RunOptions(store=store))
    live = []
    while run.status == "running":
        row = next((r for r in run.progress() if r["operator"] == "slow"), None)
        if row and row["running"]:
            live.append(row["records_in"])
        time.sleep(0.05)
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
    main(sys.argv[1], sys.argv[2])
