"""Executors on other hosts lose nothing (issue 38): a standalone worker on 127.0.0.2 in a
mount namespace of its own, where an empty tmpfs covers the folder that holds the run
store (as on YARN or Kubernetes: executors cannot see the kernel's disk). Lineage, skew
sketches, recorded inputs and checkpoints reach the store over the control channel and
answer as in plain Python; the same worker without the mount writes the store itself."""
import json
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

from tests.spark.cluster import standalone_cluster

pytestmark = pytest.mark.cluster
SCRIPT = Path(__file__).with_name("offhost_cluster_driver.py")
REFUSED = "refused by the test"  # the driver's refusing coordinator (its "refused")


def drive(cluster, notebook, *scenarios):
    url, env = cluster
    out = subprocess.run([sys.executable, str(SCRIPT), url, str(notebook), *scenarios],
                         env=env, capture_output=True, text=True, timeout=900)
    assert out.returncode == 0, out.stderr[-3000:]
    return json.loads(out.stdout.strip().splitlines()[-1])


def executor_stderr(logs):
    """What the executors printed (their stderr files under SPARK_WORKER_DIR)."""
    return "".join(path.read_text(errors="replace") for path in (logs / "work").rglob("stderr"))


@pytest.fixture(scope="module")
def private(tmp_path_factory):
    hidden = tmp_path_factory.mktemp("hidden")  # the tmpfs covers it for the worker
    notebook = hidden / "notebook"
    notebook.mkdir()
    logs = tmp_path_factory.mktemp("offhost-cluster")  # SPARK_WORKER_DIR: outside it
    with standalone_cluster(logs, private=hidden, first_host=2) as cluster:
        results = drive(cluster, notebook, "lineage", "skew", "inputs", "checkpoint",
                        "refused")
        (logs / "results.json").write_text(json.dumps(results, indent=1))  # to look at
        results["stderr"] = executor_stderr(logs)
        yield results


@pytest.fixture(scope="module")
def shared(tmp_path_factory):
    notebook = tmp_path_factory.mktemp("notebook")
    with standalone_cluster(tmp_path_factory.mktemp("shared-cluster"), first_host=2) as cluster:
        yield drive(cluster, notebook, "lineage", "skew")


def finished(result):
    assert "exception" not in result, result.get("exception")
    assert result["status"] == "finished", result["error"]
    return result


def not_shared(result):
    """The worker host said it could not see the store, and so wrote nothing there."""
    [(host, view)] = result["hosts"].items()
    assert host.startswith("127.0.0.2") and "cannot read" in view and ".store-token" in view


def test_a_word_count_recorded_off_host_traces_back_and_forward_exactly(private):
    r = finished(private["lineage"])
    not_shared(r)
    assert r["counts"] == r["exact"]
    assert r["received"]["lineage"] == r["lineage_files"] > 0  # every one over the channel
    assert r["back"] == r["back_expected"] and len(r["back"]) == 3
    assert r["forward"] == r["forward_expected"]
    assert r["warnings"] == [] and r["alerts"] == []


def test_a_skewed_reduce_by_key_recorded_off_host_names_its_heavy_key(private):
    r = finished(private["skew"])
    not_shared(r)
    assert r["received"]["skew"] == r["skew_files"] == 4  # the map side's four partitions
    assert r["keys"][0][0] == "hot" and r["n"] == r["events"]
    for key, count in r["keys"]:
        assert r["exact"][key] - r["error"] <= count <= r["exact"][key], key
    assert r["warnings"] == []


def test_recorded_inputs_of_theta_off_host_replay_jumps_to_the_snapshots(private):
    r = finished(private["inputs"])
    not_shared(r)
    assert r["out"] == sum(range(1200)) and r["interactions"] > 2
    assert r["recorded"] == [True] * 4 and r["received"]["inputs"] == 4
    assert r["jumps_equal"] and all(r["jumps_equal"])


def test_checkpoints_written_off_host_reach_the_store_and_jumps_match(private):
    r = finished(private["checkpoint"])
    not_shared(r)
    assert r["received"]["checkpoint"] == r["checkpoints"] >= 4  # one per partition's end
    assert r["jumps_equal"] and all(r["jumps_equal"])


def test_the_executors_say_nothing_was_lost_but_what_the_coordinator_refused(private):
    said = [line for line in private["stderr"].splitlines()
            if "did not reach the run store" in line]
    assert said and all(REFUSED in line and "127.0.0.2" in line and "Fix:" in line
                        for line in said)


def test_artifacts_that_cannot_arrive_are_named_in_the_run_the_trace_and_the_report(private):
    r = finished(private["refused"])
    not_shared(r)
    assert r["counts"] > 0 and r["received"] == {}  # the job ran; nothing was written
    alerts = [a for a in r["alerts"] if "did not reach the run store" in a]
    assert alerts and all(a.startswith("127.0.0.2") and REFUSED in a for a in alerts)
    message = r["no_lineage"]
    assert "recorded with --lineage" in message and "without --lineage" not in message
    assert "'split'" in message and "127.0.0.2" in message and "Fix:" in message
    assert REFUSED in message  # the workers' own word
    assert r["keys"] == 0 and len(r["skew_warnings"]) == 1
    assert "recorded with --skew" in r["skew_warnings"][0]
    assert any("no worker's lineage links reached" in w for w in r["warnings"])
    assert any("recorded with --skew" in w for w in r["warnings"])


def test_the_same_worker_sharing_the_disk_writes_the_store_itself(shared):
    for name in ("lineage", "skew"):
        r = finished(shared[name])
        assert {h.split(" ")[0]: v for h, v in r["hosts"].items()} == {"127.0.0.2": "shared"}
        assert r["received"] == {}  # nothing came over the channel
    assert shared["lineage"]["back"] == shared["lineage"]["back_expected"]
    assert Counter(dict(map(tuple, shared["lineage"]["counts"]))) == \
        Counter(dict(map(tuple, shared["lineage"]["exact"])))
    assert shared["skew"]["keys"][0][0] == "hot"
