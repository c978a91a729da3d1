"""What ``run.skew(op)`` reads from a run (``skew/source.py``), live or from the store."""
from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any, TypeVar

from ..agents.progress import SERIES_TABLE, ProgressCoordinator
from ..executor.skew import AGENT
from ..skew.source import SkewSource, worker_key
from ..store import layout
from ..store.missing import missing_skew
from .frame_join_keys import counted_join
from .metrics import last_successful_attempts
from .stage_loads import LiveStageTasks, read_stage_tasks
from .stage_sizes import LiveWaiting, stage_waiting

if TYPE_CHECKING:
    import pandas as pd

SAMPLE = 12
STAGES_WAIT = 30.0  # seconds a report waits for the run's stages to be kept
T = TypeVar("T")


def skew_source(run: Any, sizes_now: bool = True) -> SkewSource:
    """The loads and sketches of ``run``: live while it records, else its successful
    task attempts in the store; with the pipeline, for a run recorded in this kernel.
    ``sizes_now`` False: the live ``waiting`` sizes as last read, not waited for (the
    sidebar's pushes; ``stage_sizes.LiveWaiting``)."""
    live = run.status == "running"
    ok = None if live else last_successful_attempts(run.store.worker_table())  # read once
    source = SkewSource(run.dag, run.cell, _workers(run, ok), _sketches(run, ok),
                        live=live, skew_recorded=bool(run.options.get("skew")),
                        wall=run.duration, run_id=run.id)
    if live:
        _live_sizes(run, source, sizes_now)
        source.stage_tasks = _live_stage_tasks(run, sizes_now)
    source.series = _live_series(run) if live else _stored_series(run)
    if not live:
        kept = getattr(run, "stage_tasks_kept", None)  # a run this kernel recorded
        if kept is not None:
            kept.wait(STAGES_WAIT)
        source.stage_tasks = read_stage_tasks(run.path)
        source.frame_join = lambda node: counted_join(run, node)
        source.keys_note = missing_skew(run.store, run.manifest, run.dag) or ""
    recorder = getattr(run, "recorder", None)
    namespace = getattr(run, "namespace", None)
    if recorder is not None and namespace is not None and not live:
        source.namespace = namespace
        source.functions = {node: kept.functions for node, kept in recorder.kept.items()
                            if hasattr(kept, "functions")}
        source.sample = lambda node, keys: _sample(recorder, node, keys)
        source.rerun = lambda splits: _rerun(run, splits)
    return source


def _live_sizes(run: Any, source: SkewSource, now: bool = True) -> None:
    """``source.waiting``: Spark's sizes of the stage running a node (stage_sizes.py)."""
    if run.manifest.get("session") == "connect":
        source.waiting_note = ("unavailable on Spark Connect: the kernel has no "
                               "SparkContext to ask Spark for the partitions' sizes")
        return
    from pyspark import SparkContext

    sc = SparkContext._active_spark_context
    if sc is None:
        source.waiting_note = "unavailable: no SparkContext in this kernel"
        return

    read = stage_waiting if now else _live_waiting(run, sc)

    def waiting(node: int) -> dict[int, int] | None:
        stages = [int(w["stage"]) for w in source.workers
                  if w["operator"] == node and w.get("stage") is not None]
        return read(sc, max(stages)) if stages else None
    source.waiting = waiting


def _live_stage_tasks(run: Any, now: bool) -> list[dict] | None:
    """The run's stages' tasks so far (``stage_loads.LiveStageTasks``, made on first
    use): read now, or as last read (``now`` False: the sidebar's pushes)."""
    if run.manifest.get("session") == "connect":
        return None
    from pyspark import SparkContext

    sc = SparkContext._active_spark_context
    if sc is None:
        return None
    tasks = run.__dict__.get("_live_stage_tasks")
    if tasks is None or tasks.sc is not sc:
        tasks = run.__dict__["_live_stage_tasks"] = LiveStageTasks(sc, run)
    return tasks.now() if now else tasks()


def _live_waiting(run: Any, sc: Any) -> Callable[[Any, int], dict[int, int] | None]:
    """The run's ``LiveWaiting`` (made on first use), as ``stage_waiting``'s signature."""
    cache = run.__dict__.get("_live_waiting")
    if cache is None or cache.sc is not sc:
        cache = run.__dict__["_live_waiting"] = LiveWaiting(sc)
    return lambda _sc, stage: cache(stage)


def _live_series(run: Any) -> Callable[[list[tuple]], dict[tuple, tuple]] | None:
    """The progress agent's series so far (``LoadSeries``), copied for the keys asked."""
    coordinator = run.coordinator
    progress = coordinator.agent("progress") if coordinator is not None else None
    if not isinstance(progress, ProgressCoordinator):
        return None

    def series(keys: list[tuple]) -> dict[tuple, tuple]:
        return progress.series_of(keys)
    return series


def _stored_series(run: Any) -> Callable[[list[tuple]], dict[tuple, tuple]] | None:
    """The series the run store keeps (``agents/load_timeline.jsonl``), read once; None
    for a store from before they were kept."""
    rows = run.store.agent_rows(SERIES_TABLE)
    if not rows:
        return None
    by_key = {worker_key(row): (row["seconds"], row["records"]) for row in rows}
    return lambda keys: {key: by_key[key] for key in keys if key in by_key}


def _workers(run: Any, ok: pd.DataFrame | None) -> list[dict]:
    """Live (``ok`` None): each worker's latest state; else the successful attempts ``ok``."""
    if ok is None:
        return list(latest_per_partition(
            run._worker_states(),
            lambda w: (w["operator"], w["partition"], w["stage"], w["attempt"])).values())
    return [] if ok.empty else ok.to_dict("records")


def _sketches(run: Any, ok: pd.DataFrame | None) -> dict[int, list[dict]]:
    """Live (``ok`` None): the latest sketches; else those of the successful attempts."""
    sketches: dict[int, list[dict]] = {}
    if ok is None:
        agent = run.coordinator.agent(AGENT) if run.coordinator is not None else None
        latest = agent.latest() if agent is not None else {}
        for key, (_, summary) in latest_per_partition(
                latest.items(), lambda item: (item[0][0], item[0][2], item[0][1],
                                              item[0][3])).items():
            sketches.setdefault(key[0], []).append(summary)
        return sketches
    wanted = set() if ok.empty else set(zip(ok["operator"], ok["stage"], ok["partition"],
                                            ok["attempt"], ok["task"]))
    for name, path in layout.skew_files(run.path):
        if (name.operator, name.stage, name.partition, name.attempt, name.task) in wanted:
            with open(path, encoding="utf-8") as f:
                sketches.setdefault(name.operator, []).append(json.load(f))
    return sketches


def latest_per_partition(items: Iterable[T], order: Callable[[T], tuple]) -> dict[tuple, T]:
    """(operator, partition) -> its item of the latest job and attempt while the run
    records: ``order(item)`` is (operator, partition, stage, attempt)."""
    latest: dict[tuple, tuple[tuple, T]] = {}
    for item in items:
        rank = order(item)
        if rank[:2] not in latest or rank[2:] >= latest[rank[:2]][0]:
            latest[rank[:2]] = (rank[2:], item)
    return {key: item for key, (_, item) in latest.items()}


def _sample(recorder: Any, node: int, keys: list) -> list:
    """Up to ``SAMPLE`` records of the heavy keys, read with Spark from the map side's input."""
    upstream = recorder.upstreams.get(node)
    if upstream is None:
        return []
    heavy = set(keys)
    return upstream.filter(lambda record: record[0] in heavy).take(SAMPLE)


def _rerun(run: Any, splits: dict) -> Any:
    """The cell again, in a copy of its namespace, with ``splits`` salted."""
    from .execution import RunOptions, start_run

    options = run.options
    known = {k: options[k] for k in ("interesting", "interact_every", "interact_when",
                                     "record_inputs", "lineage", "checkpoint", "tau",
                                     "replay_memory") if k in options}
    return start_run(run.cell, dict(run.namespace),
                     RunOptions(store=os.path.dirname(run.path), skew=True, prepare=False,
                                splits=splits, **known))
