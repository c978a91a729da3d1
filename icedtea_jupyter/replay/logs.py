"""The log reader: what replay needs from a recorded run, behind one small interface.

``RunLogs`` reads a run (live or reopened): θ's chain, the operators as they were
before the run, each worker's replay log, and each interaction's target counts.
``MemoryLogs`` holds the same in memory, for tests of the engine without Spark.
"""
from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np

from ..store import layout
from ..store.operator_images import read_operator_image
from ..store.replay_logs import ReplayLog, read_replay_log
from .stages import (
    DATAFRAME_APIS,
    WINDOW_UNSEEN,
    Fed,
    fed_stages,
    not_replayed,
    paths_of,
    tree_of,
)

if TYPE_CHECKING:
    from ..dag import Dag
    from ..snapshots.history import History
    from ..store.run_store import RunStore


@dataclass(frozen=True)
class Target:
    """Where θ stood on one partition at an interaction: inputs processed, and whether
    its partition had ended (then the operators' closing outputs have been emitted)."""

    count: int
    finished: bool = False


@dataclass(frozen=True)
class Failure:
    """Where the recorded run failed in θ's tree, replayed from the failed task attempt's
    logs: ``operator`` raised ``exception`` on its input #``index`` of ``partition``,
    within the scope of θ's input #``scope`` (on ``path``); ``before`` is the last
    interaction before it. ``scope`` is None when θ's log of that attempt was not kept
    (replay finds it)."""

    partition: int
    operator: str
    index: int
    scope: int | None
    exception: str
    path: int = 0
    before: int = 0
    record: dict | None = None
    traceback: str = ""


class Logs(Protocol):
    """What replay reads. θ's tree on a partition runs as one Spark task per path (θ
    feeding two paths is computed once per path, as PySpark does without a cache): the
    ``path`` arguments say which task's worker is meant (0: the first or only one)."""

    chain: list[str]  # θ's tree, θ first, then the operators pipelined after it
    paths: list[list[str]]  # the tree's root-to-leaf chains, one Spark task each
    partitions: list[int]
    fed: list[Fed]  # reduce sides and operators after a union, fed by θ's tree
    interactions: int
    rerun: set[int]  # θ's partitions that several jobs computed (the last one replays)
    failure: Failure | None  # the run's failure in θ's tree (replayed up to it), or None
    no_failure: str  # why there is none to jump to
    not_replayed: str  # the operators of G(θ) replay does not compute, and why ("": none)

    def operator(self, name: str) -> Callable[[], Any]: ...
    def log(self, name: str, partition: int, path: int = 0) -> ReplayLog | None: ...
    def key(self, name: str, partition: int, path: int = 0) -> str: ...
    def target(self, index: int, partition: int, path: int = 0) -> Target: ...
    def counts(self, index: int, partition: int, path: int = 0) -> dict[str, int | None]: ...
    def same_stage_as_theta(self, name: str, partition: int) -> bool: ...


class RecordedRun(Protocol):
    """What replay reads of a run: a session's ``Run`` (live or reopened), or in the
    replay process a ``StoredRun`` (``preparing.py``)."""

    @property
    def id(self) -> str: ...
    @property
    def path(self) -> str: ...
    @property
    def dag(self) -> Dag: ...
    @property
    def store(self) -> RunStore: ...

    def history(self) -> History: ...

    def recorded_inputs(self, partition: int) -> list:
        """θ's input records on ``partition``; LookupError when they were not recorded."""
        ...

    def upstream_rdd(self, operator: int) -> Any:
        """The RDD ``operator`` reads in this kernel's pipeline, else None."""
        ...


class RunLogs:
    """The logs of a recorded ``Run``."""

    def __init__(self, run: RecordedRun) -> None:
        self.run = run
        self.history = run.history()
        self.dag = run.dag
        theta = run.dag.interesting
        if theta is None:
            raise LookupError(f"run {run.id} has no interesting operator θ to replay")
        self.theta = theta
        refuse_unreplayable(run, theta)
        self.chain, children = tree_of(run.dag, theta)
        self.paths = paths_of(self.chain, children)
        self.partitions = self.history.partitions(theta)
        self.fed = fed_stages(run.dag, self.chain, children, self.history.partitions,
                              lambda node: kept_copy(run, node))
        self.not_replayed = not_replayed(
            run.dag, self.chain, self.fed, self.history.partitions,
            run.store.read_manifest().get("unkept_udfs") or {})
        self.interactions = len(self.history.raw)
        ok: dict[tuple[int, int], list[int]] = {}  # (operator, partition) -> its ok tasks
        rows = run.store.worker_table().to_pylist()
        for row in rows:
            if row["status"] == "ok":
                ok.setdefault((row["operator"], row["partition"]), []).append(row["task"])
        # the latest, if several jobs computed the worker (``rerun``: θ's leaves' partitions)
        self._own_tasks = {key: max(tasks) for key, tasks in ok.items()}
        self._stages = {(row["operator"], row["partition"]): row["stage"] for row in rows
                        if row["status"] == "ok"
                        and row["task"] == self._own_tasks[(row["operator"], row["partition"])]}
        self._leaves = [self.dag.node(path[-1]).id for path in self.paths]
        self.rerun = {p for (op, p), tasks in ok.items() if op in self._leaves and len(tasks) > 1}
        self._targets: dict[tuple[int, int, int], Target] = {}
        self._counts: dict[tuple[int, int, int], dict] = {}
        self._failed_task: int | None = None
        manifest = run.store.read_manifest()  # a run whose retry succeeded did not fail
        error = manifest.get("error") if manifest.get("status") == "failed" else None
        failed = failed_task(self, error, rows, ok)  # only where no attempt succeeded
        self.no_failure = "" if failed is not None else why_no_failure(run.id, error, self.chain)
        tasks = {t for ts in ok.values() for t in ts} | ({failed[1]} if failed else set())
        self._logs = self._successful_logs(tasks)
        self.failure = self._failure(error, *failed) if failed is not None and error else None

    def operator(self, name: str) -> Callable[[], Any]:
        """A function returning a fresh copy of the operator as it was before the run."""
        import pickle

        from pyspark import cloudpickle  # noqa: F401 - registers what images need

        data = read_operator_image(self.run.path, self.dag.node(name).id)
        return lambda: pickle.loads(data)

    def log(self, name: str, partition: int, path: int = 0) -> ReplayLog | None:
        """A worker's replay log: in θ's tree, from the path's task; elsewhere (after a
        shuffle or a union), from the operator's own successful task."""
        op = self.dag.node(name).id
        task = self.task(partition, path) if name in self.chain else \
            self._own_tasks.get((op, partition), -1)
        return self._logs.get((op, partition, task))

    def key(self, name: str, partition: int, path: int = 0) -> str:
        """How checkpoint files name the worker: operator id and Spark task (names can
        change; θ on two paths runs in two tasks)."""
        return layout.checkpoint_key(self.dag.node(name).id, self.task(partition, path))

    def task(self, partition: int, path: int = 0) -> int:
        """The successful Spark task that ran ``path`` of θ's tree on ``partition``: its
        leaf's (the path's only worker no other path shares)."""
        return self._own_tasks.get((self._leaves[path], partition), -1)

    def same_stage_as_theta(self, name: str, partition: int) -> bool:
        """Whether ``name``'s worker on ``partition`` ran in θ's Spark stage (in θ's task,
        not after a shuffle)."""
        stage = self._stages.get((self.dag.node(name).id, partition))
        return stage is not None and stage == self._stages.get((self.theta.id, partition))

    def target(self, index: int, partition: int, path: int = 0) -> Target:
        key = (index, partition, path)
        if key not in self._targets:
            self._targets[key] = self._target(index, partition, path)
        return self._targets[key]

    def _target(self, index: int, partition: int, path: int) -> Target:
        task = self.task(partition, path)
        view = self.history.view_in_task(index, self.theta, partition, task, states=False)
        if view.status == "finished":
            return Target(self.in_records(self.theta.name, partition, path,
                                          view.count or 0) or 0, True)
        if view.status == "not started":
            return Target(0)
        if view.count is None and task == self._failed_task:
            return Target(0, True)  # its attempt failed before this interaction
        if view.count is None:
            raise LookupError(f"interaction I{index} has no count of {self.theta.name!r} on "
                              f"partition {partition} (its worker did not report)")
        return Target(self.in_records(self.theta.name, partition, path, view.count) or 0)

    def in_records(self, name: str, partition: int, path: int,
                   count: int | None) -> int | None:
        """A worker's logged count in replay's records: a batch function counts rows in
        the run, and a record of replay is one of its batches (the batches before)."""
        log = self.log(name, partition, path)
        if log is None and count and self.dag.node(name).api in DATAFRAME_APIS:
            raise LookupError(_lost_batches(name, partition))
        if count is None or log is None or log.batch_rows is None:
            return count
        return int(np.searchsorted(np.cumsum(log.batch_rows), count, "right"))

    def counts(self, index: int, partition: int, path: int = 0) -> dict[str, int | None]:
        """The logged counts of a path's workers at an interaction (None: unknown)."""
        key = (index, partition, path)
        if key not in self._counts:
            task = self.task(partition, path)
            self._counts[key] = {
                name: self.in_records(name, partition, path, self.history.view_in_task(
                    index, self.dag.node(name), partition, task, states=False).count)
                for name in self.paths[path]}
        return self._counts[key]

    def _failure(self, error: dict, path: int, task: int) -> Failure:
        """The failure, its culprit's scope in θ's inputs, and the interaction before it.
        The failed attempt's logs count the culprit as taken by the failing operator, and
        θ's record whose scope holds it as θ's last."""
        partition, name = error["partition"], error["operator"]
        self._own_tasks[(self._leaves[path], partition)] = self._failed_task = task
        index, scope = (_last_taken(self.log(op, partition, path)) for op in (name, self.theta.name))
        index = int(error.get("records_before") or 0) if index is None else index
        scope = index if name == self.theta.name else scope
        before = 0
        for i in range(self.interactions):
            target = self.target(i, partition, path)
            if not target.finished and (scope is None or target.count <= scope):
                before = i
        return Failure(partition, name, index, scope, str(error.get("exception")), path,
                       before, error.get("record"), str(error.get("traceback") or ""))

    def _successful_logs(self, ok: set[int]) -> dict[tuple[int, int, int], ReplayLog]:
        logs = {}
        for name, path in layout.replay_logs(self.run.path):
            if name.task in ok:
                try:
                    logs[(name.operator, name.partition, name.task)] = read_replay_log(path)
                except FileNotFoundError:  # removed since listed: a log never written,
                    continue  # which a jump that needs it says (``left no replay log``)
        return logs


def failed_task(logs: RunLogs, error: dict | None, rows: list[dict],
                ok: dict) -> tuple[int, int] | None:
    """(path, task) of the failed attempt the run's ``error`` names, when it failed in θ's
    tree on a partition where no attempt of that path succeeded (only successful
    attempts count: a run whose retry succeeded replays the success)."""
    if not error or error.get("operator") not in logs.chain:
        return None
    partition, op = error["partition"], logs.dag.node(error["operator"]).id
    path = next(i for i, names in enumerate(logs.paths) if error["operator"] in names)
    if (logs._leaves[path], partition) in ok:
        return None
    task = next((row["task"] for row in rows if row["operator"] == op
                 and row["partition"] == partition and row["status"] != "ok"
                 and row["attempt"] == error.get("attempt", row["attempt"])
                 and row["stage"] == error.get("stage", row["stage"])), None)
    return None if task is None else (path, task)


def _last_taken(log: ReplayLog | None) -> int | None:
    """The index of the last input a worker took (None: no log, or no input)."""
    return log.records_in - 1 if log is not None and log.records_in else None


def why_no_failure(run_id: str, error: dict | None, chain: list[str]) -> str:
    """Why ``jump_to_failure`` has nothing to jump to, and what works instead."""
    if not error:
        return f"run {run_id} did not fail: there is no failure to jump to (dbg.jump(k) " \
               "goes to an interaction)"
    operator = error.get("operator")
    if operator is None:
        return f"run {run_id} failed before any Python operator ran ({error.get('message')}" \
               "): there is no record to debug"
    if operator not in chain:
        return (f"run {run_id} failed in {operator!r}, which the debugger does not replay "
                f"(θ's chain: {', '.join(chain)}): record it again with --interesting "
                f"{operator!r} to debug that failure")
    return f"run {run_id} failed in {operator!r}, but no log of the failed attempt is kept"


class NotReplayable(LookupError):
    """θ is an operator the debugger cannot replay."""


def in_grouped_agg(dag: Any, node: Any) -> bool:
    """Whether UDF ``node`` is an aggregate in a ``groupBy(...).agg(...)`` (a call a group)."""
    return node.api == "udf" and any(
        n.api == "agg" and node.id in n.parents for n in dag.operators)


def kept_copy(run: Any, node: Any) -> bool:
    """Whether the run kept a copy of ``node`` to replay (a UDF of a kind replay
    regenerates the calls of, whose function pickled)."""
    return os.path.exists(layout.operator_image_path(run.path, node.id))


def refuse_unreplayable(run: Any, theta: Any) -> None:
    """A UDF θ of a kind whose calls replay does not regenerate (the run kept no copy
    of it): say which, why, and what to pick instead."""
    if theta.api != "udf" or kept_copy(run, theta):
        return
    others = [n.name for n in run.dag.python_operators if n.api != "udf"]
    instead = (f"record the cell again with --interesting set to one of {others}" if others
               else "compute the step as a mapInPandas (or an RDD operator) to debug it")
    uses = [n.api for n in run.dag.operators if theta.id in n.parents]
    if uses and not in_grouped_agg(run.dag, theta):  # an aggregate UDF outside .agg
        raise NotReplayable(
            f"θ ({theta.name!r}) is an aggregate UDF used over a window (.over(...)), and "
            f"{WINDOW_UNSEEN}. Make the .over(...) column in the recorded cell (window "
            "UDFs replay a record a call), or call the function as an aggregate in "
            f"groupBy(...).agg(...) (a record a group), or {instead}")
    raise NotReplayable(
        f"θ ({theta.name!r}) is a UDF column of a kind the debugger does not replay "
        "(such as an iterator aggregate UDF; it replays RDD operators, mapInPandas, "
        "mapInArrow, applyInPandas, @udf, scalar and iterator @pandas_udf and @arrow_udf "
        "columns, and grouped-aggregate @pandas_udf and @arrow_udf in "
        f"groupBy(...).agg(...)): {instead}")


@dataclass
class MemoryLogs:
    """Logs held in memory: operators as factories, targets as θ counts per interaction."""

    chain: list[str]
    operators: dict[str, Callable[[], Any]]
    targets: list[dict[int, Target]]  # per interaction: partition -> Target
    logs: dict[tuple[str, int], ReplayLog] = field(default_factory=dict)
    worker_counts: list[dict[tuple[str, int], int]] = field(default_factory=list)
    children: dict[str, list[str]] | None = None  # None: a chain
    fed: list[Fed] = field(default_factory=list)
    rerun: set[int] = field(default_factory=set)
    failure: Failure | None = None
    no_failure: str = "the run did not fail: there is no failure to jump to"
    not_replayed: str = ""
    later_stages: set[str] = field(default_factory=set)  # fed operators after a shuffle

    @property
    def paths(self) -> list[list[str]]:
        return [list(self.chain)] if self.children is None else \
            paths_of(self.chain, self.children)

    @property
    def partitions(self) -> list[int]:
        return sorted({p for t in self.targets for p in t})

    @property
    def interactions(self) -> int:
        return len(self.targets)

    def operator(self, name: str) -> Callable[[], Any]:
        return self.operators[name]

    def log(self, name: str, partition: int, path: int = 0) -> ReplayLog | None:
        return self.logs.get((name, partition))

    def key(self, name: str, partition: int, path: int = 0) -> str:
        return name if path == 0 else f"{name}-path{path}"

    def target(self, index: int, partition: int, path: int = 0) -> Target:
        return self.targets[index].get(partition, Target(0))

    def same_stage_as_theta(self, name: str, partition: int) -> bool:
        return name not in self.later_stages

    def counts(self, index: int, partition: int, path: int = 0) -> dict[str, int | None]:
        known = self.worker_counts[index] if index < len(self.worker_counts) else {}
        return {name: known.get((name, partition)) for name in self.paths[path]}


def _lost_batches(name: str, partition: int) -> str:
    """Why a DataFrame operator's counts cannot be read without its worker's log."""
    return (f"{name!r}'s worker on partition {partition} left no replay log (its end "
            "never reached the kernel: its executor was lost, or the kernel stopped "
            "waiting for it). Its counts are rows, and the log held the rows of each "
            f"batch or group it took: where it stood at an interaction, in {name!r}'s "
            "records, is not known, so replay would be wrong on this partition. "
            "run.snapshot(k) still shows the states the run recorded; to step through "
            "this partition, record the cell again")
