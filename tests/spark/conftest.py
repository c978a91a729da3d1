import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.jvm_options import JVM_OPTIONS

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="session")
def spark():
    from pyspark.sql import SparkSession

    session = (SparkSession.builder.master("local[2,2]")  # 2 threads, 2 attempts per task
               .appName("icedtea-tests")
               .config("spark.ui.enabled", "false")
               .config("spark.ui.showConsoleProgress", "false")
               .config("spark.sql.shuffle.partitions", "4")
               .config("spark.python.worker.reuse", "true")
               .getOrCreate())
    session.sparkContext.setLogLevel("ERROR")
    yield session
    session.stop()


@pytest.fixture(scope="module")
def shell(spark):
    """An IPython shell with the extension loaded and the session's spark and sc."""
    from IPython.core.interactiveshell import InteractiveShell

    ip = InteractiveShell.instance()
    ip.run_line_magic("load_ext", "icedtea_jupyter")
    ip.user_ns.update(spark=spark, sc=spark.sparkContext)
    return ip


@pytest.fixture
def sc(spark):
    return spark.sparkContext


@pytest.fixture
def record(spark, tmp_path):
    """Record a cell's code like %%icedtea --wait does; returns the finished Run."""
    return cell_recorder({"spark": spark, "sc": spark.sparkContext}, tmp_path)


def cell_recorder(names, tmp_path):
    """``run_cell(code, namespace, **options)``: the finished Run of ``code`` recorded with
    ``names`` (the session) in its namespace, its store under ``tmp_path``."""
    from icedtea_jupyter.session.execution import RunOptions, start_run

    def run_cell(code, namespace=None, timeout=180, **options):
        ns = dict(names)
        ns.update(namespace or {})
        options.setdefault("store", str(tmp_path / "runs"))
        run = start_run(code, ns, RunOptions(**options))
        run.wait(timeout)
        run.namespace = ns
        return run

    return run_cell


def _free_loopback_port():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@pytest.fixture(scope="session")
def connect_server(tmp_path_factory):
    """A Spark Connect server from pyspark's own distribution on a free loopback port, its
    Python workers running this interpreter with this checkout's icedtea_jupyter; its
    ``sc://`` URL. Started when a test first asks for it, stopped at the end."""
    import pyspark

    home = Path(pyspark.__file__).parent
    port = _free_loopback_port()
    env = dict(os.environ, SPARK_HOME=str(home), PYSPARK_PYTHON=sys.executable,
               PYSPARK_DRIVER_PYTHON=sys.executable, SPARK_LOCAL_IP="127.0.0.1",
               PYTHONPATH=os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")]))
    confs = {"spark.connect.grpc.binding.address": "127.0.0.1",
             "spark.connect.grpc.binding.port": str(port), "spark.ui.enabled": "false",
             "spark.ui.showConsoleProgress": "false", "spark.sql.shuffle.partitions": "4",
             "spark.python.worker.reuse": "true"}
    command = [str(home / "bin" / "spark-submit"), "--master", "local[2]",
               "--driver-java-options", JVM_OPTIONS,
               "--class", "org.apache.spark.sql.connect.service.SparkConnectServer"]
    for key, value in confs.items():
        command += ["--conf", f"{key}={value}"]
    log = tmp_path_factory.mktemp("connect") / "server.log"
    with open(log, "wb") as out:
        server = subprocess.Popen(command, env=env, stdout=out, stderr=subprocess.STDOUT,
                                  start_new_session=True)  # its own group: stopped whole
    try:
        _wait_for_port(server, port, log)
        yield f"sc://127.0.0.1:{port}"
    finally:
        os.killpg(server.pid, signal.SIGTERM)
        try:
            server.wait(30)
        except subprocess.TimeoutExpired:
            os.killpg(server.pid, signal.SIGKILL)
            server.wait(10)


def _wait_for_port(server, port, log, timeout=300):
    """Until the server accepts connections on ``port`` (its gRPC service binds last)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if server.poll() is not None:
            raise RuntimeError(f"the Spark Connect server exited ({server.returncode}):\n"
                               + log.read_text()[-3000:])
        with socket.socket() as probe:
            if probe.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.5)
    raise TimeoutError(f"no Spark Connect server on port {port} after {timeout} s:\n"
                       + log.read_text()[-3000:])


@pytest.fixture(scope="module")
def connect_spark(connect_server):
    """A Spark Connect session of the server, for one test module. PySpark marks the
    process as Spark Connect's (SPARK_CONNECT_MODE_ENABLED, read by pyspark.sql.functions
    and icedtea): unmarked again afterwards, for the classic session's tests."""
    from pyspark.sql import SparkSession

    marked = "SPARK_CONNECT_MODE_ENABLED" in os.environ
    session = SparkSession.builder.remote(connect_server).create()
    yield session
    session.stop()
    if not marked:
        os.environ.pop("SPARK_CONNECT_MODE_ENABLED", None)


@pytest.fixture
def record_connect(connect_spark, tmp_path):
    """``record`` on the Spark Connect session (no ``sc`` in the namespace)."""
    return cell_recorder({"spark": connect_spark}, tmp_path)


@pytest.fixture(autouse=True)
def _ship_test_module_by_value(request):
    """Operators defined in a test module, the gates they wait at (tests/waiting.py) and
    the operators that fail on purpose (tests/faults.py) travel by value: workers cannot
    import tests."""
    from pyspark import cloudpickle

    from tests import faults, waiting

    modules = [request.module, waiting, faults]
    for module in modules:
        try:
            cloudpickle.register_pickle_by_value(module)
        except ValueError:
            pass
    yield
    for module in modules:
        try:
            cloudpickle.unregister_pickle_by_value(module)
        except ValueError:
            pass
