"""Faults a real cluster produces (issue 17, item 1), on a standalone cluster of two
one-core workers on 127.0.0.1 and 127.0.0.2: an executor killed while θ runs. Nothing
recorded is lost or counted twice, time travel matches the recorded snapshots as in a run
without the fault, and the run says what happened."""
import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.spark.cluster import standalone_cluster

pytestmark = pytest.mark.cluster
SCRIPT = Path(__file__).with_name("faulty_cluster_driver.py")


def totals_agree(last):
    """At the run's last interaction, each partition's state is the running total of the
    records its (successful) attempt had processed."""
    return all(total == sum(range(p * 300, p * 300 + count))
               for p, (count, total) in enumerate(last))


@pytest.fixture(scope="module")
def two_workers(tmp_path_factory):
    with standalone_cluster(tmp_path_factory.mktemp("cluster"), workers=2, cores=1) as cluster:
        yield cluster


def drive(cluster, tmp_path):
    url, env = cluster
    out = subprocess.run([sys.executable, str(SCRIPT), url, str(tmp_path / "runs"),
                          str(tmp_path / "gate")], env=env,
                         capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr[-3000:]
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_an_executor_killed_mid_run_loses_and_doubles_nothing(two_workers, tmp_path):
    result = drive(two_workers, tmp_path)
    faulty, plain = result["faulty"], result["plain"]
    assert faulty["status"] == "finished" and faulty["out"] == plain["out"] == sum(range(1200))
    assert faulty["records_in"] == {"total": 1200}  # successful attempts only
    lost = [a for a in faulty["attempts"] if a[2] in ("lost", "failed")]
    assert lost and all(any(b[0] == a[0] and b[2] == "ok" for b in faulty["attempts"])
                        for a in lost)  # every lost partition was retried and succeeded
    assert any("lost" in w for w in faulty["warnings"]), faulty["warnings"]
    assert totals_agree(faulty["last"]) and totals_agree(plain["last"])
    assert faulty["jumps_equal"] and all(faulty["jumps_equal"])

