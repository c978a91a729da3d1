"""A real standalone Spark cluster on 127.0.0.1: executors in separate processes."""
import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.spark.cluster import standalone_cluster

pytestmark = pytest.mark.cluster


@pytest.fixture(scope="module")
def standalone_master(tmp_path_factory):
    with standalone_cluster(tmp_path_factory.mktemp("cluster")) as (url, env):
        yield url, env


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
