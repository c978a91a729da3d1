"""Opening a store whose manifest still says ``running``: its kernel lives (shown as it
stands), died (marked interrupted in the store), or cannot be asked (interrupted, the
store left alone); and the interactions a killed kernel logged, completions included."""
import subprocess
import sys

from icedtea_jupyter.dag import Dag
from icedtea_jupyter.session import registry
from icedtea_jupyter.session.interrupted import kernel_identity
from icedtea_jupyter.store import layout
from icedtea_jupyter.store.run_store import RunStore, append_lines


def running_store(tmp_path, kernel):
    store = RunStore.create(str(tmp_path), "run-k")
    dag = Dag()
    dag.add("total", "python", "map", [])
    store.write_manifest({"id": "run-k", "status": "running", "started": 1.0, "cell": "x",
                          "dag": dag.to_json(), "warnings": [], "error": None,
                          "kernel": kernel})
    log = layout.interactions_log_path(store.path)
    append_lines(log, {"index": 0, "time": 1.0, "trigger": "initial", "complete": True})
    append_lines(log, {"index": 1, "time": 2.0, "trigger": "periodic", "complete": False})
    append_lines(log, {"index": 2, "time": 3.0, "trigger": "periodic", "complete": False})
    append_lines(log, {"index": 1, "complete": True, "latency": 0.01})
    return store


def dead_kernel():
    ended = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                           capture_output=True, text=True, check=True)
    return dict(kernel_identity(), pid=int(ended.stdout), since=None)


def reopen(store):
    try:
        return registry.open_run(store.path)
    finally:
        registry._RUNS[:] = [r for r in registry._RUNS if r.path != store.path]


def test_a_dead_kernels_run_is_marked_interrupted_in_its_store(tmp_path):
    store = running_store(tmp_path, dead_kernel())
    run = reopen(store)
    on_disk = store.read_manifest()
    assert run.status == on_disk["status"] == "interrupted"
    assert on_disk["last_complete_interaction"] == 1  # 2 was asked for, never completed
    assert [i["complete"] for i in store.interactions()] == [True, True, False]
    assert "interaction 1 is the last complete one" in on_disk["warnings"][-1]


def test_a_run_its_kernel_still_records_is_shown_as_it_stands(tmp_path):
    store = running_store(tmp_path, kernel_identity())  # this process: alive
    run = reopen(store)
    assert run.status == "running" and "Still being recorded" in run.warnings[-1]
    assert store.read_manifest()["status"] == "running"  # the store is the live kernel's


def test_a_run_whose_kernel_cannot_be_asked_is_left_as_it_is(tmp_path):
    store = running_store(tmp_path, dict(kernel_identity(), host="another-machine"))
    run = reopen(store)
    assert run.status == "interrupted" and "another machine" in run.warnings[-1]
    assert store.read_manifest()["status"] == "running"
