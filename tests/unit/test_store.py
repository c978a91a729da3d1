"""The run store on disk, and which task attempts count."""
import json

import pandas as pd
import pyarrow as pa
import pytest

from icedtea_jupyter.executor.worker_file import worker_schema
from icedtea_jupyter.session.metrics import metrics_frame, successful_attempts
from icedtea_jupyter.session.registry import open_run
from icedtea_jupyter.store.run_store import RunStore, StoreError


def end(op, part, attempt, task, status="ok", n=10, stage=0):
    return {"type": "worker_end", "worker": {"operator": op, "partition": part, "stage": stage,
                                              "attempt": attempt, "task": task},
            "status": status, "records_in": n, "records_out": n, "bytes_in": 4 * n,
            "seconds": 0.5, "started": 1.0, "ended": 2.0 + attempt, "exhausted": True,
            "error": {"message": "x"} if status == "failed" else None}


def test_worker_files_open_with_pandas(tmp_path):
    store = RunStore.create(str(tmp_path), "r1")
    path = store.write_worker(end(1, 0, 0, 11))
    frame = pd.read_feather(path)
    assert frame.loc[0, "records_in"] == 10 and frame.loc[0, "status"] == "ok"
    assert json.loads(pd.read_feather(store.write_worker(end(1, 1, 0, 12, "failed")))
                      .loc[0, "error"]) == {"message": "x"}


def test_only_the_successful_attempt_of_a_retried_task_counts(tmp_path):
    rows = [end(1, 0, 0, 11, "failed", n=4), end(1, 0, 1, 13, n=10), end(1, 1, 0, 12)]
    rows.append(end(0, 0, 0, 11, "ok", n=5))  # upstream worker of the failed task
    rows.append(end(0, 0, 1, 13, "ok", n=10))
    table = pa.Table.from_pylist(
        [dict(r["worker"], **{k: r[k] for k in ("status", "records_in", "records_out",
                                                "bytes_in", "seconds", "started", "ended",
                                                "exhausted")}, local=False, error=None)
         for r in rows], schema=worker_schema())
    ok = successful_attempts(table)
    assert sorted(ok["task"]) == [12, 13, 13]
    metrics = metrics_frame(table, {0: "up", 1: "down"})
    assert metrics["operator"].tolist() == ["up", "down", "down"]
    assert metrics.set_index(["operator", "partition"]).loc[("down", 0), "attempts"] == 2
    assert metrics["records_in"].tolist() == [10, 10, 10]


def test_the_same_partition_in_two_jobs_counts_once_from_the_last(tmp_path):
    store = RunStore.create(str(tmp_path), "r2")
    store.write_worker(end(1, 0, 0, 11, stage=0, n=4))  # a sort's sampling job
    store.write_worker(end(1, 0, 0, 21, stage=3))
    store.write_manifest({"id": "r2", "status": "finished", "dag": {"operators": [
        {"id": 1, "name": "op", "kind": "python", "api": "rdd.map"}]}})
    metrics = metrics_frame(store.worker_table(), {1: "op"})
    assert metrics.loc[0, "records_in"] == 10 and metrics.loc[0, "stages"] == 2
    [row] = open_run(store.path).progress()
    assert (row["records_in"], row["done"]) == (10, 1)


def test_worker_rows_are_read_once_a_file_and_again_when_it_changes(tmp_path, monkeypatch):
    import icedtea_jupyter.store.run_store as run_store

    reads = []
    read_table = run_store.feather.read_table
    monkeypatch.setattr(run_store.feather, "read_table",
                        lambda path, **kw: reads.append(path) or read_table(path, **kw))
    store = RunStore.create(str(tmp_path), "r3")
    for part in range(3):
        store.write_worker(end(1, part, 0, 10 + part))
    assert sorted(store.worker_table()["partition"].to_pylist()) == [0, 1, 2]
    assert store.worker_table()["task"].to_pylist() == [10, 11, 12]
    assert len(reads) == 3  # the second look read nothing
    store.write_worker(end(1, 3, 0, 13))  # a worker ended since
    assert store.worker_table()["task"].to_pylist() == [10, 11, 12, 13]
    assert len(reads) == 4
    store.write_worker(end(1, 1, 0, 11, "failed", n=3))  # the same worker's file, rewritten
    table = store.worker_table().to_pylist()
    assert [(r["task"], r["status"], r["records_in"]) for r in table if r["partition"] == 1] \
        == [(11, "failed", 3)]
    assert len(reads) == 5
    reopened = RunStore(store.path)  # another reader: the same rows
    assert reopened.worker_table().equals(store.worker_table())


def test_opening_something_that_is_not_a_run_says_so(tmp_path):
    with pytest.raises(StoreError, match="not an icedtea run"):
        open_run(str(tmp_path))
    (tmp_path / "manifest.json").write_text('{"format": 99}')
    with pytest.raises(StoreError, match="format 99"):
        open_run(str(tmp_path))


def test_a_run_left_running_by_a_kernel_it_does_not_name_reopens_interrupted(tmp_path):
    store = RunStore.create(str(tmp_path), "r3")  # a store of before kernels were named
    store.write_manifest({"id": "r3", "status": "running", "started": 1.0, "dag": {}})
    run = open_run(store.path)
    assert run.status == "interrupted" and "stopped before it ended" in run.warnings[-1]


def test_alert_lines_survive_a_cut_last_line(tmp_path):
    store = RunStore.create(str(tmp_path), "r4")
    store.append_alert({"message": "one"})
    with open(f"{store.path}/alerts.jsonl", "a") as f:
        f.write('{"message": "tw')
    assert store.alerts() == [{"message": "one"}]
