"""Every task of a run's Spark stages, from Spark's status store: the loads of JVM
stages (no Python operator sees their records), read while the run records
(``LiveStageTasks``) and kept in the run store when it ends (``stages.parquet``), for
``run.skew("stage N")`` and the skew heat map.

Spark's status store holds one ``TaskData`` per task attempt, with its metrics (records
and bytes read from its input or shuffle, run time, records and bytes written). They are
read as JSON, a stage at a time, with the Jackson mapper Spark's own REST API uses, so a
stage of 2,000 tasks is one call through py4j rather than ten per task.
"""
from __future__ import annotations

import json
import logging
import math
import os
import threading
import time
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from ..store import layout

log = logging.getLogger(__name__)

COLUMNS = {"stage": pa.int64(), "attempt": pa.int64(), "name": pa.string(),
           "partition": pa.int64(), "task": pa.int64(), "status": pa.string(),
           "records": pa.int64(), "bytes": pa.int64(), "seconds": pa.float64(),
           "records_written": pa.int64(), "bytes_written": pa.int64(),
           "operators": pa.string()}


def stage_tasks(sc: Any, stages: list[dict], operators: dict[int, list[str]]) -> list[dict]:
    """One row per task attempt of ``stages`` (the run's jobs' stages: id, name);
    ``operators``: stage -> the Python operators that ran in it ("" in ``operators``:
    a JVM stage)."""
    mapper = json_mapper(sc)
    store = sc._jsc.sc().statusStore()
    tracker = sc.statusTracker()
    rows: list[dict] = []
    for stage in stages:
        info = tracker.getStageInfo(stage["id"])
        attempt = int(info.currentAttemptId) if info is not None else 0
        tasks = json.loads(mapper.writeValueAsString(store.taskList(stage["id"], attempt,
                                                                    1 << 30)))
        names = ", ".join(operators.get(stage["id"], []))
        rows.extend(_row(stage, attempt, task, names) for task in tasks)
    return rows


_MAPPERS: dict[int, Any] = {}  # id of a JVM SparkContext -> its mapper


def json_mapper(sc: Any) -> Any:
    """Jackson with Scala's module: Spark's status classes as JSON (Options as values).
    One per SparkContext: a mapper learns each class once (0.2 s the first time)."""
    key = id(sc._jsc)
    if key not in _MAPPERS:
        jvm = sc._jvm
        mapper = jvm.com.fasterxml.jackson.databind.ObjectMapper()
        scala = getattr(jvm.com.fasterxml.jackson.module.scala, "DefaultScalaModule$")
        mapper.registerModule(getattr(scala, "MODULE$"))
        _MAPPERS.clear()  # an older SparkContext's is of no use
        _MAPPERS[key] = mapper
    return _MAPPERS[key]


def _row(stage: dict, attempt: int, task: dict, operators: str) -> dict:
    metrics = task.get("taskMetrics") or {}
    read = metrics.get("inputMetrics") or {}
    shuffle = metrics.get("shuffleReadMetrics") or {}
    output = metrics.get("outputMetrics") or {}
    written = metrics.get("shuffleWriteMetrics") or {}
    partition = task.get("partitionId")
    return {"stage": stage["id"], "attempt": attempt, "name": stage.get("name", ""),
            "partition": int(task["index"] if partition is None or partition < 0
                             else partition),
            "task": int(task["taskId"]), "status": str(task.get("status", "")),
            "records": int(read.get("recordsRead", 0) + shuffle.get("recordsRead", 0)),
            "bytes": int(read.get("bytesRead", 0) + shuffle.get("localBytesRead", 0)
                         + shuffle.get("remoteBytesRead", 0)),
            "seconds": float(metrics.get("executorRunTime", 0)) / 1000.0,
            "records_written": int(output.get("recordsWritten", 0)
                                   + written.get("recordsWritten", 0)),
            "bytes_written": int(output.get("bytesWritten", 0)
                                 + written.get("bytesWritten", 0)),
            "operators": operators}


def write_stage_tasks(run_path: str, rows: list[dict]) -> None:
    """``stages.parquet`` in the run store (whole, renamed into place)."""
    path = layout.stage_tasks_path(run_path)
    table = pa.Table.from_pylist(rows, schema=pa.schema(COLUMNS))
    temp = layout.temp_path(path)
    pq.write_table(table, temp)
    os.replace(temp, path)


def read_stage_tasks(run_path: str) -> list[dict] | None:
    """The rows ``write_stage_tasks`` kept, or None for a run stored without them."""
    try:
        return pq.read_table(layout.stage_tasks_path(run_path)).to_pylist()
    except FileNotFoundError:
        return None


def keep_stage_tasks(run: Any, sc: Any, jobs: list[dict]) -> None:
    """The tasks of the run's ``jobs``' stages, put in the run store by a thread of its
    own while the run concludes (tens of ms a stage of 200 tasks); ``run.
    stage_tasks_kept``, an Event, is set once they are there. None on Spark Connect
    (``sc`` None)."""
    if sc is None or not jobs:
        return
    stages = list({stage["id"]: stage for job in jobs for stage in job["stages"]}.values())
    run.stage_tasks_kept = threading.Event()
    threading.Thread(target=_keep, args=(run, sc, stages), daemon=True,
                     name=f"icedtea-stages-{run.id}").start()


def _keep(run: Any, sc: Any, stages: list[dict]) -> None:
    try:
        write_stage_tasks(run.path, stage_tasks(sc, stages, run.dag.stages))
    except Exception as exc:  # py4j: Spark's classes changed; the run is kept either way
        log.warning("icedtea: run %s: the JVM stages' loads were not kept: %s: %s",
                    run.id, type(exc).__name__, exc)
    finally:
        run.stage_tasks_kept.set()


def run_stages(sc: Any, group: str) -> list[dict]:
    """The stages (id, name, ended) of the jobs of job group ``group`` so far."""
    tracker = sc.statusTracker()
    stages: dict[int, dict] = {}
    for job_id in tracker.getJobIdsForGroup(group):
        info = tracker.getJobInfo(job_id)
        for stage_id in (info.stageIds if info is not None else ()):
            stage = tracker.getStageInfo(stage_id)
            if stage is not None:
                stages[stage_id] = {"id": stage_id, "name": stage.name,
                                    "ended": stage.numActiveTasks == 0
                                    and stage.numCompletedTasks >= stage.numTasks}
    return [stages[k] for k in sorted(stages)]


class LiveStageTasks:
    """The tasks of a recording run's stages so far (``stage_tasks`` rows: running ones
    with the records Spark's status store has at the executors' last heartbeat), read
    on a thread of its own when older than ``REFRESH`` seconds: a call answers at once
    with the rows as last read (None before the first read), ``now()`` reads them. A
    stage that had ended when read is not read again."""

    REFRESH = 1.0

    def __init__(self, sc: Any, run: Any) -> None:
        self.sc, self.run = sc, run
        self._rows: list[dict] | None = None
        self._read_at = -math.inf
        self._ended: dict[int, list[dict]] = {}  # stage -> its rows, read once it ended
        self._reading = False
        self._lock = threading.Lock()

    def __call__(self) -> list[dict] | None:
        with self._lock:
            stale = time.monotonic() - self._read_at > self.REFRESH and not self._reading
            self._reading = self._reading or stale
            rows = self._rows
        if stale:
            threading.Thread(target=self._read, daemon=True,
                             name=f"icedtea-stage-tasks-{self.run.id}").start()
        return rows

    def now(self) -> list[dict] | None:
        """The rows read now (None if Spark could not tell them)."""
        with self._lock:
            self._reading = True
        self._read()
        with self._lock:
            return self._rows

    def _read(self) -> None:
        rows: list[dict] | None = None
        try:
            rows = []
            for stage in run_stages(self.sc, self.run.id):
                kept = self._ended.get(stage["id"])
                if kept is None:
                    kept = stage_tasks(self.sc, [stage], self.run.dag.stages)
                    if stage["ended"]:
                        self._ended[stage["id"]] = kept
                rows.extend(kept)
        except Exception as exc:  # py4j: the context stopped, Spark's classes changed
            log.debug("icedtea: run %s: live stage tasks unread: %s", self.run.id, exc)
            rows = None
        finally:
            with self._lock:
                if rows is not None:
                    self._rows = rows
                self._read_at = time.monotonic()
                self._reading = False
