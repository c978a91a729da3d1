"""What a notebook cell shows, in a real kernel (ipykernel forwards the process's own
stderr, the JVM's log lines included, to the cell that runs)."""
import os
import queue
import sys
from contextlib import contextmanager

import pytest

pytestmark = pytest.mark.spark

SETUP = """
%load_ext icedtea_jupyter
from pyspark.sql import SparkSession
spark = (SparkSession.builder.master("local[2,2]").appName("cell-output")
         .config("spark.ui.enabled", "false")
         .config("spark.ui.showConsoleProgress", "false").getOrCreate())
sc = spark.sparkContext  # Spark's default log level, WARN: task failures are logged
def invert(x):
    return 1 / (x - 42)
"""
FAILING = """%%icedtea --wait --no-panel --store {store}
out = sc.parallelize(range(100), 2).map(invert).setName("invert").collect()
"""


@contextmanager
def started_kernel(cwd, **env_changes):
    """A kernel of this Python with ``env_changes`` (None: unset) and this checkout first
    on PYTHONPATH (Spark's workers import it from there)."""
    from jupyter_client.manager import start_new_kernel

    env = {k: v for k, v in os.environ.items()  # ipykernel forwards fds unless in pytest
           if k != "PYTEST_CURRENT_TEST"}
    env.update(SPARK_LOCAL_IP="127.0.0.1", PYTHONPATH=os.pathsep.join(
        filter(None, [os.getcwd(), os.environ.get("PYTHONPATH")])))
    for name, value in env_changes.items():
        env.pop(name, None) if value is None else env.update({name: value})
    manager, client = start_new_kernel(kernel_name="python3", env=env, cwd=str(cwd))
    try:
        yield client
    finally:
        client.stop_channels()
        manager.shutdown_kernel(now=True)


@pytest.fixture(scope="module")
def kernel(tmp_path_factory):
    with started_kernel(tmp_path_factory.mktemp("kernel"), PYSPARK_PYTHON=sys.executable,
                        PYSPARK_DRIVER_PYTHON=sys.executable) as client:
        outputs = execute(client, SETUP)
        assert not [o for o in outputs if o[0] == "error"], outputs
        yield client


def execute(client, code: str, timeout: float = 240) -> list[tuple[str, str]]:
    """Run ``code``; its outputs in order as (kind, text): stream name or "error"."""
    msg_id = client.execute(code)
    outputs = []
    while True:
        try:
            msg = client.get_iopub_msg(timeout=timeout)
        except queue.Empty:
            raise TimeoutError(f"no idle after {code[:60]!r}") from None
        if msg["parent_header"].get("msg_id") != msg_id:
            continue
        kind, content = msg["msg_type"], msg["content"]
        if kind == "stream":
            outputs.append((content["name"], content["text"]))
        elif kind == "error":
            outputs.append(("error", "\n".join(content["traceback"])))
        elif kind == "status" and content["execution_state"] == "idle":
            return outputs


def test_a_failing_wait_run_shows_run_failed_first_and_no_jvm_trace(kernel, tmp_path):
    outputs = execute(kernel, FAILING.format(store=tmp_path))
    outputs += execute(kernel, "import time; time.sleep(1)")  # late stderr lands here
    text = "".join(t for _, t in outputs)
    assert outputs and outputs[0][0] == "error", outputs
    first = outputs[0][1].splitlines()
    assert first[0].startswith("RunFailed: icedtea run ") and \
        "operator 'invert' on partition 0 raised ZeroDivisionError" in first[0], first
    assert "culprit record: 42" in first[0]
    assert "ERROR Executor" not in text and "org.apache.spark" not in text, text[:3000]
    assert "Could not get source" not in text
    (log,) = tmp_path.glob("*/spark.log")  # kept in the run's store instead
    assert "ERROR Executor: Exception in task 0.0 in stage" in log.read_text()

    # afterwards Spark's loggers are as they were: a plain job's failure logs again
    plain = execute(kernel, "try:\n    sc.parallelize([42], 1).map(invert).collect()\n"
                            "except Exception:\n    print('plain job failed')")
    plain += execute(kernel, "time.sleep(1)")
    assert "ERROR Executor: Exception in task" in "".join(t for _, t in plain)


LATE = [
    # this checkout for the kernel only (not in the environment Spark's workers inherit);
    # the session first, its workers on the system's python3, which has no icedtea_jupyter
    "import sys\n"
    "sys.path.insert(0, {checkout!r})\n"
    "from pyspark.sql import SparkSession\n"
    "spark = (SparkSession.builder.master('local[2]').appName('late-load')\n"
    "         .config('spark.ui.enabled', 'false').getOrCreate())\n"
    "sc = spark.sparkContext\n"
    "sc.setLogLevel('ERROR')\n"
    "print(sc.pythonExec)",
    "%load_ext icedtea_jupyter",
    "%%icedtea --wait --no-panel --store {store}\n"
    "out = sc.parallelize(range(6), 2).map(lambda x: x * 10).setName('tens').collect()",
    "import icedtea_jupyter\n"
    "print(out, icedtea_jupyter.last_run().status, icedtea_jupyter.last_run().warnings)",
]


def test_load_ext_after_the_session_points_its_workers_at_this_python(tmp_path):
    """Pointed at this Python, the workers import its own installed icedtea_jupyter."""
    with started_kernel(tmp_path, PYSPARK_PYTHON=None, PYSPARK_DRIVER_PYTHON=None,
                        PATH="/usr/bin:/bin", PYTHONPATH=None) as client:
        outputs = [execute(client, cell.format(store=tmp_path, checkout=os.getcwd()))
                   for cell in LATE]
    stdout = ["".join(text for kind, text in out if kind == "stdout") for out in outputs]
    assert stdout[0] == "python3\n"  # PATH's: the system's /usr/bin/python3
    assert not any(kind == "error" for out in outputs for kind, _ in out), outputs
    assert stdout[1].startswith("icedtea: Spark's Python workers ran 'python3', which cannot "
                                "import icedtea_jupyter"), stdout[1]  # said once, at the load
    assert stdout[3] == "[0, 10, 20, 30, 40, 50] finished []\n"
