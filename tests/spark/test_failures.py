"""Bad input and failures: clear errors, nothing recorded is lost, no duplicate attempts."""
import json
import socket
import subprocess
import sys
import time

import pytest

from icedtea_jupyter.session.execution import NO_JOB_WARNING
from icedtea_jupyter.session.spark_attempts import SparkAttempt, spark_attempts, succeeded
from tests.faults import flaky

pytestmark = pytest.mark.spark


def parse_amount(row):
    if row["amount"] == "oops":
        # Spark cancels the stage's other tasks when one fails: give partition 0 (ten
        # records) time to end first, as the tests count what it kept.
        time.sleep(1.0)
        raise ValueError(f"cannot parse amount {row['amount']!r}")
    return float(row["amount"])


FAILING = """
rows = [{"id": i, "amount": str(i)} for i in range(20)] + [{"id": 20, "amount": "oops"}]
amounts = sc.parallelize(rows, 2).map(parse_amount).setName("parse").collect()
"""


def test_an_operator_that_raises_fails_the_run_with_the_culprit_record(record):
    run = record(FAILING, {"parse_amount": parse_amount})
    assert run.status == "failed"
    error = run.error
    assert error["operator"] == "parse" and error["partition"] == 1
    assert error["record"]["value"] == {"id": 20, "amount": "oops"}
    assert error["exception"] == "ValueError" and "cannot parse amount" in error["message"]
    assert "parse_amount" in error["traceback"]
    assert run.metrics().set_index("partition").loc[0, "records_in"] == 10  # kept
    manifest = json.load(open(f"{run.path}/manifest.json"))
    assert manifest["status"] == "failed" and manifest["error"]["operator"] == "parse"


def hooked(x):
    """Whether this task's worker tells its chains of hosts of a failure (no guard frame
    per record): PySpark's exception handler carries the hook."""
    import sys

    handler = sys.modules["pyspark.worker"].handle_worker_exception
    return getattr(handler, "icedtea_hook", False)


def test_in_sparks_workers_a_chain_learns_of_a_failure_from_the_workers_handler(record):
    run = record("""
flags = sc.parallelize(range(4), 2).map(lambda x: x).map(hooked).collect()
rows = [{"id": i, "amount": str(i)} for i in range(20)] + [{"id": 20, "amount": "oops"}]
out = sc.parallelize(rows, 2).map(lambda r: r).map(parse_amount).setName("parse").collect()
""", {"hooked": hooked, "parse_amount": parse_amount})
    assert run.status == "failed" and run.error["operator"] == "parse"
    assert run.error["record"]["value"] == {"id": 20, "amount": "oops"}
    assert run.error["records_before"] == 10
    assert run.namespace["flags"] == [True] * 4


def test_a_failed_run_reopens_in_a_fresh_process(record):
    run = record(FAILING, {"parse_amount": parse_amount})
    code = (f"import icedtea_jupyter as it, json; r = it.open_run({run.path!r});"
            "print(json.dumps([r.status, r.error['record']['value'], "
            "[o.name for o in r.dag.operators], int(r.metrics().records_in.sum())]))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    status, culprit, operators, records = json.loads(out.stdout.strip().splitlines()[-1])
    assert status == "failed" and culprit == {"id": 20, "amount": "oops"}
    assert operators == ["parallelize", "parse"]
    assert records == int(run.metrics().records_in.sum()) == 10


def test_a_retried_task_counts_once(record):
    run = record("out = sc.parallelize(range(20), 2).map(flaky).collect()", {"flaky": flaky})
    assert run.status == "finished", run.error
    assert run.namespace["out"] == list(range(20))
    metrics = run.metrics().set_index("partition")
    assert metrics.loc[0, "records_in"] == 10 and metrics.loc[0, "attempts"] == 2
    assert metrics["records_in"].sum() == 20


def test_spark_says_which_attempt_of_a_retried_task_succeeded(record, sc):
    """The lookup behind speculation's winner (tests/spark/test_speculation.py): Spark's
    status store, read by task attempt id; a failed attempt is not a killed one."""
    run = record("out = sc.parallelize(range(20), 2).map(flaky).collect()", {"flaky": flaky})
    workers = {w["attempt"]: w for w in run.partitions("flaky") if w["partition"] == 0}
    found = spark_attempts(sc, workers[0]["stage"], [w["task"] for w in workers.values()])
    assert found == {workers[0]["task"]: SparkAttempt("FAILED", False),
                     workers[1]["task"]: SparkAttempt("SUCCESS", False)}
    assert run.manifest["killed_attempts"] == [] and workers[0]["status"] == "failed"
    keys = {w["attempt"]: (0, w["stage"], 0, w["attempt"], w["task"])
            for w in workers.values()}  # as the coordinator keys its workers
    assert succeeded(sc, list(keys.values())) == {keys[1]}  # the end it waits for


def test_a_cell_that_raises_before_any_job(record):
    run = record("x = undefined_name + 1")
    assert run.status == "failed"
    assert "before any Spark job" in run.error["message"]
    assert "NameError" in run.error["message"] and run.error["operator"] is None


def test_a_cell_with_no_action_warns_that_nothing_was_recorded(record):
    run = record("lazy = sc.parallelize(range(5)).map(str)")
    assert run.status == "finished" and NO_JOB_WARNING in run.warnings
    assert [op.name for op in run.dag.operators] == ["parallelize", "str"]


def test_a_syntax_error_is_reported_before_anything_starts(record):
    with pytest.raises(SyntaxError):
        record("def broken(:")


def test_workers_that_cannot_reach_the_coordinator_record_locally(record):
    closed = socket.socket()
    closed.bind(("127.0.0.1", 0))
    port = closed.getsockname()[1]
    closed.close()
    run = record("out = sc.parallelize(range(30), 3).map(lambda x: x + 1).collect()",
                 advertise_port=port)
    assert run.status == "finished"
    assert any("could not reach the coordinator" in w and str(port) in w for w in run.warnings)
    assert run.metrics()["records_in"].tolist() == [10, 10, 10]
