"""Speculative execution (issue 17, item 2), on the standalone cluster of two one-core
workers on 127.0.0.1 and 127.0.0.2 with ``spark.speculation`` on: partition 0's first
attempt straggles at a gate until Spark launches a copy of it on the other host. Whichever
attempt wins, the store keeps that one: each record counts once, the snapshots and time
travel are the winner's and match a run without speculation, and the run names the
killed attempt."""
import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.spark.cluster import standalone_cluster
from tests.spark.test_cluster_faults import totals_agree

pytestmark = pytest.mark.cluster
SCRIPT = Path(__file__).with_name("speculative_cluster_driver.py")
ATTEMPTS = {  # partition 0's attempts once the race is over: (attempt, status)
    "copy": [[0, 0, "killed"], [0, 1, "ok"]],
    "original": [[0, 0, "ok"], [0, 1, "killed"]],
}


@pytest.fixture(scope="module")
def races(tmp_path_factory):
    """The driver's two races (the copy wins, the original wins) and a plain run."""
    logs = tmp_path_factory.mktemp("cluster")
    with standalone_cluster(logs, workers=2, cores=1) as (url, env):
        out = subprocess.run([sys.executable, str(SCRIPT), url, str(logs / "runs"),
                              str(logs / "gates")], env=env,
                             capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr[-3000:]
    return json.loads(out.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize("winner", ["copy", "original"])
def test_the_winning_attempt_is_the_one_recorded(races, winner):
    plain = races["plain"]
    for run in (races[winner]["run"], races[winner]["reopened"]):  # live, and from the store
        assert run["status"] == "finished" and run["out"] == plain["out"] == sum(range(1200))
        assert run["records_in"] == plain["records_in"] == {"total": 1200}  # counted once
        assert run["progress_in"] == {"total": 1200}  # what the panel shows
        assert [a for a in run["attempts"] if a[0] == 0] == ATTEMPTS[winner]
        assert all(a[2] == "ok" for a in run["attempts"] if a[0] != 0)
        assert totals_agree(run["last"]) and totals_agree(plain["last"])
        assert run["jumps_equal"] and all(run["jumps_equal"])
    # the killed original died at its gate; the killed copy got to its end and reported
    assert races[winner]["killed_records_in"] == ([None] if winner == "copy" else [300])
    killed = races[winner]["killed"]
    assert [(k["partition"], k["attempt"], k["speculative"], k["winner"]["speculative"])
            for k in killed] == [(0, 1, True, False) if winner == "original" else
                                 (0, 0, False, True)]
    warning = [w for w in races[winner]["run"]["warnings"] if "spark.speculation" in w]
    assert len(warning) == 1 and ("the speculative copy) won" if winner == "copy"
                                  else "the original) won") in warning[0], warning
