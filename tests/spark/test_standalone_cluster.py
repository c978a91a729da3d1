"""A real standalone Spark cluster on 127.0.0.1: executors in separate processes."""
import json
import os
import socket
import subprocess
import sys
import urllib.request
from pathlib import Path

import pytest

from tests.waiting import wait_until

pytestmark = pytest.mark.cluster


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def listening(port: int) -> bool:
    try:
        socket.create_connection(("127.0.0.1", port), timeout=1).close()
        return True
    except OSError:
        return False


def alive_workers(webui_port: int) -> int:
    """Workers registered with the master, as its web UI's JSON says (0 if it does not
    answer yet)."""
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{webui_port}/json/", timeout=2) as r:
            return json.load(r).get("aliveworkers", 0)
    except (OSError, ValueError):
        return 0


@pytest.fixture(scope="module")
def standalone_master(tmp_path_factory):
    import pyspark

    spark_home = os.path.dirname(pyspark.__file__)
    spark_class = os.path.join(spark_home, "bin", "spark-class")
    logs = tmp_path_factory.mktemp("cluster")
    env = dict(os.environ, SPARK_HOME=spark_home, SPARK_LOCAL_IP="127.0.0.1",
               SPARK_WORKER_DIR=str(logs / "work"))
    port, webui_port = free_port(), free_port()
    master = subprocess.Popen(
        [spark_class, "org.apache.spark.deploy.master.Master", "--host", "127.0.0.1",
         "--port", str(port), "--webui-port", str(webui_port)],
        env=env, stdout=open(logs / "master.log", "w"), stderr=subprocess.STDOUT)
    wait_until(lambda: listening(port), 60, f"the master to listen on 127.0.0.1:{port}",
               interval=0.1)
    url = f"spark://127.0.0.1:{port}"
    worker = subprocess.Popen(
        [spark_class, "org.apache.spark.deploy.worker.Worker", url, "--host", "127.0.0.1",
         "--cores", "2", "--memory", "2g", "--webui-port", str(free_port())],
        env=env, stdout=open(logs / "worker.log", "w"), stderr=subprocess.STDOUT)
    wait_until(lambda: alive_workers(webui_port) >= 1, 60,
               f"a worker to register with the master (see {logs})", interval=0.1)
    yield url, env
    for process in (worker, master):
        process.terminate()
        try:
            process.wait(20)
        except subprocess.TimeoutExpired:
            process.kill()


def test_a_pipeline_on_a_standalone_cluster_reports_live(standalone_master, tmp_path):
    url, env = standalone_master
    script = Path(__file__).with_name("cluster_driver.py")
    out = subprocess.run([sys.executable, str(script), url, str(tmp_path / "runs"),
                          str(tmp_path / "gate")], env=env,
                         capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-3000:]
    result = json.loads(out.stdout.strip().splitlines()[-1])
    assert result["status"] == "finished", result["error"]
    assert result["warnings"] == []
    assert result["records_in"] == {"slow": 1200}
    assert result["coordinator"][0] == "127.0.0.1"
    assert result["driver_pid"] not in result["worker_pids"]  # separate executor processes
    assert any(0 < n < 1200 for n in result["live"]), result["live"]
