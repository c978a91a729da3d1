"""Faults around the run store (issue 17): its disk fills up while a job records (item 4:
the job is unaffected, recording stops with one warning naming the store and what it
held, the store stays readable; on a 2 MB tmpfs the test mounts, as root, as CI runs),
and the kernel is killed mid-run (item 3: the store opens as ``interrupted``)."""
import glob
import json
import os
import subprocess
import sys

import pandas as pd
import pytest

from icedtea_jupyter.dag import Dag
from icedtea_jupyter.session.execution import RunOptions, start_run
from icedtea_jupyter.session.registry import open_run
from icedtea_jupyter.session.run import Run
from icedtea_jupyter.store import layout
from icedtea_jupyter.store.run_store import RunStore
from tests.waiting import wait_until

pytestmark = pytest.mark.spark


@pytest.fixture
def small_disk(tmp_path):
    mount = tmp_path / "small"
    mount.mkdir()
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=2m", "tmpfs", str(mount)],
                          capture_output=True, text=True)
    assert done.returncode == 0, f"mounting a 2 MB tmpfs needs root: {done.stderr}"
    yield str(mount)
    subprocess.run(["umount", "-l", str(mount)], check=False)


def records(n):
    """Strings that compress badly: θ's recorded inputs fill the small disk."""
    return ["%x" % (i * 2654435761 % 2**61) for i in range(n)]


def test_a_full_store_stops_recording_and_nothing_else(spark, small_disk):
    sc = spark.sparkContext
    code = ("out = sc.parallelize(data, 2).map(lambda s: s[::-1]).setName('reverse')"
            ".map(len).setName('length').sum()")
    ns = {"sc": sc, "data": records(300_000)}
    run = start_run(code, ns, RunOptions(store=small_disk, interesting="reverse",
                                         interact_every=0.05, record_inputs=True))
    run.wait(180)

    assert run.status == "finished" and run.error is None
    assert ns["out"] == sum(len(s) for s in records(300_000))  # the job's own result
    (warning,) = [w for w in run.warnings if w.startswith("recording stopped")]
    assert run.path in warning and " MB" in warning
    assert list(run.alerts()["tool"]).count("store") == 1  # said once, in the panel
    assert {row["operator"]: row["records_in"] for row in run.progress()} == \
        {"reverse": 300_000, "length": 300_000}  # live counts went on

    assert not glob.glob(os.path.join(run.path, "**", "*.tmp"), recursive=True)
    store = RunStore.open(run.path)  # as a new kernel opens it
    manifest = store.read_manifest()
    assert manifest["status"] == "finished" and warning in manifest["warnings"]
    reopened = Run(store, manifest, Dag.from_json(manifest["dag"]))
    assert 1 <= len(reopened.interactions) <= len(run.interactions)
    reopened.snapshot(0).workers()  # its snapshots read
    for path in layout.worker_files(run.path):
        pd.read_feather(path)  # what was recorded opens with pandas


def test_a_run_whose_kernel_was_killed_reopens_interrupted(tmp_path):
    """SIGKILL a kernel while its job runs: the store it leaves opens in another kernel as
    ``interrupted``, with its interactions, snapshots and time travel up to the last
    complete interaction; the Spark workers it left exit on their own."""
    script = os.path.join(os.path.dirname(__file__), "killed_kernel_driver.py")
    driver = subprocess.Popen([sys.executable, script, str(tmp_path / "runs"),
                               str(tmp_path / "gate")], stdout=subprocess.PIPE, text=True)
    try:
        told = json.loads(driver.stdout.readline())
    finally:
        driver.kill()
        driver.wait(30)
    for pid in told["held"]:  # Spark's Python workers go with the killed driver
        wait_until(lambda pid=int(pid): not _alive(pid), 60, f"worker {pid} to exit")

    run = open_run(told["path"])
    assert run.status == "interrupted"
    assert RunStore.open(told["path"]).read_manifest()["status"] == "interrupted"
    assert any("stopped before the run ended" in w for w in run.warnings)
    last = run.manifest["last_complete_interaction"]
    assert last >= 2 and len(run.interactions) >= last + 1
    counts = [run.snapshot(last).worker("total", p).count for p in (0, 1)]
    states = [run.snapshot(last).state("total", p)["total"] for p in (0, 1)]
    halves = (range(0, 300), range(300, 600))
    assert states == [sum(half[:n]) for half, n in zip(halves, counts)]
    dbg = run.debugger()  # θ's stage had ended: its logs and inputs are in the store
    jumped = dbg.jump(last)
    assert [jumped.state("total", p)["total"] for p in (0, 1)] == states
    dbg.close()


def _alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    with open(f"/proc/{pid}/stat") as f:  # a zombie has exited
        return f.read().rsplit(")", 1)[1].split()[0] != "Z"
