"""The run store's disk fills up while a job records (issue 17, item 4): the job is
unaffected, recording stops with one warning naming the store and what it held, and the
store stays readable. The store is on a tmpfs of 2 MB the test mounts (the tests run as
root, as CI does)."""
import glob
import os
import subprocess

import pandas as pd
import pytest

from icedtea_jupyter.dag import Dag
from icedtea_jupyter.session.execution import RunOptions, start_run
from icedtea_jupyter.session.run import Run
from icedtea_jupyter.store import layout
from icedtea_jupyter.store.run_store import RunStore

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
    assert [a["source"] for a in run.alerts].count("store") == 1  # said once, in the panel
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
