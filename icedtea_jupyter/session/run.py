"""``Run``: one execution of a pipeline, as read from its run store.

A run has two modes, one class each. ``Run`` (this module) reads everything from the
store: a run reopened with ``open_run(path)``, for example after a kernel restart. A
run recorded in this kernel is a ``LiveRun`` (``live_run.py``), which reads what its
coordinator holds in memory instead, takes interactions while it records and ends once.
Both share everything else here: the API a user sees is the same.
"""
from __future__ import annotations

import json
import logging
import os
import threading
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import pandas as pd

from ..control.api import RecordedControl
from ..dag import Dag
from ..instrument.connect import NeedsClassicSession, needs_classic
from ..lineage.dataframe import dataframe_lineage
from ..lineage.frame_trace import (
    FrameTrace,
    frame_outputs,
    frame_trace_back,
    frame_trace_forward,
)
from ..lineage.frames_ahead import WriteAhead, write_ahead
from ..lineage.trace import Lineage, Trace, output_rows, trace_back, trace_forward
from ..replay.cursor import StepRefused  # the refusal the views show
from ..snapshots.history import History, Interaction, InteractionMark, marks
from ..snapshots.snapshot import Snapshot
from ..store import layout
from ..store.run_store import RunStore
from .actions import ActionLog
from .agent_data import RunAgentData
from .agent_results import AgentResults
from .metrics import metrics_frame
from .moves import LoggedSnapshot, logged_trace, shown_by
from .versions import RunVersions

if TYPE_CHECKING:
    from ..coordinator.coordinator import Coordinator
    from ..replay.debugger import Debugger
    from ..replay.remote import RemoteDebugger
    from ..skew import SkewReport
    from ..snapshots.debug_snapshot import DebugSnapshot

LOG = logging.getLogger("icedtea_jupyter")

__all__ = ["Run", "STATUSES", "StepRefused"]

Listener = Callable[[str, dict], None]
STATUSES = ("running", "finished", "failed", "stopped")


class Run(AgentResults, RunVersions, RunAgentData, RecordedControl):
    """A recorded run, read from its store. ``status`` is ``"running"``, ``"finished"``,
    ``"failed"``, ``"stopped"`` (``run.stop()``, a breakpoint's ``stop()``) or
    ``"interrupted"`` (its kernel died). A run recorded in this kernel is a ``LiveRun``
    (``live_run.py``)."""

    def __init__(self, store: RunStore, manifest: dict, dag: Dag) -> None:
        self.store = store
        self.manifest = manifest
        self.dag = dag
        self.error: dict | None = manifest.get("error")
        self.warnings: list[str] = list(manifest.get("warnings", []))
        self._done = threading.Event()
        if manifest.get("status") != "running":
            self._done.set()
        self._listeners: list[Listener] = []
        self._lock = threading.Lock()
        self._debugger: Debugger | RemoteDebugger | None = None
        self._debugger_lock = threading.Lock()
        self._actions = ActionLog(store.path, lambda action: self.emit("action", action))
        self.panel: object | None = None  # the cell's run panel (ui/panel.py), once shown
        self._lineage_cache: Lineage | None = None
        self.lineage_writer: WriteAhead | None = None  # prepare_lineage()

    @property
    def coordinator(self) -> Coordinator | None:
        """The coordinator of a run recording in this kernel; None: a reopened run has none."""
        return None

    # --- identity -----------------------------------------------------------------
    @property
    def id(self) -> str:
        return self.manifest["id"]

    @property
    def path(self) -> str:
        return self.store.path

    @property
    def status(self) -> str:
        return self.manifest["status"]

    @property
    def started(self) -> float:
        """When the run started; a manifest without it (written by hand, or by an
        older version) gives its store folder's time."""
        started = self.manifest.get("started")
        if started is not None:
            return float(started)
        try:
            return os.path.getmtime(self.path)
        except OSError:
            return 0.0

    @property
    def ended(self) -> float | None:
        return self.manifest.get("ended")

    @property
    def duration(self) -> float:
        return (self.ended or time.time()) - self.started

    @property
    def cell(self) -> str:
        return self.manifest.get("cell", "")

    @property
    def options(self) -> dict:
        return dict(self.manifest.get("options", {}))

    # --- waiting and events ---------------------------------------------------------
    def wait(self, timeout: float | None = None) -> Run:
        """Block until the run has ended; raises TimeoutError after ``timeout`` seconds."""
        if not self._done.wait(timeout):
            raise TimeoutError(f"run {self.id} still running after {timeout} s")
        return self

    def subscribe(self, listener: Listener) -> Callable[[], None]:
        """Call ``listener(kind, data)`` on every live event; returns an unsubscribe function."""
        with self._lock:
            self._listeners.append(listener)

        def unsubscribe() -> None:
            with self._lock:
                if listener in self._listeners:
                    self._listeners.remove(listener)
        return unsubscribe

    def emit(self, kind: str, data: dict) -> None:
        with self._lock:
            listeners = list(self._listeners)
        for listener in listeners:
            try:
                listener(kind, data)
            except Exception:  # a broken view must not break the run: logged, not raised
                LOG.exception("icedtea: a listener of run %s failed on %r", self.id, kind)

    # --- what was recorded ------------------------------------------------------------
    def metrics(self) -> pd.DataFrame:
        """One row per Python operator and partition: records_in, records_out, bytes_in,
        seconds (summed over the jobs that ran it), from successful task attempts only."""
        return metrics_frame(self.store.worker_table(), self.dag.names())

    def progress(self) -> list[dict]:
        """Per Python operator: records in/out, partitions done/running/failed, rate (now,
        over the running partitions) and average rate (from its first partition's start
        to its last one's end, or now). Records count once per partition, like
        ``metrics()`` and ``run.skew``: from the last stage that ran it (a sort's
        sampling job runs its input's operators once more before the real one), of its
        attempts the one furthest along (a retry, or a speculative copy racing its
        original), never one Spark killed because another attempt won (``killed``)."""
        by_operator: dict[int, list[dict]] = {}
        for worker in self._worker_states():
            by_operator.setdefault(worker["operator"], []).append(worker)
        rows = []
        now = time.time()
        for node in self.dag.python_operators:
            mine = by_operator.get(node.id, [])
            counted = _one_attempt_per_task(mine)
            starts = [w["started"] for w in mine if w.get("started")]
            span = (max((w.get("ended") or now) for w in mine) - min(starts)) if starts else 0.0
            records_in = sum(w.get("records_in") or 0 for w in counted)
            rows.append({
                "operator": node.name, "phase": node.phase,
                "records_in": records_in,
                "records_out": sum(w.get("records_out") or 0 for w in counted),
                "done": sum(1 for w in counted if w["status"] == "ok"),
                "running": sum(1 for w in mine if w["status"] == "running"),
                "failed": sum(1 for w in mine if w["status"] in ("failed", "lost")),
                "rate": sum(w.get("rate") or 0 for w in mine if w["status"] == "running"),
                "average_rate": float(records_in / span) if span > 0 else 0.0,
            })
        return rows

    def partitions(self, operator: str) -> list[dict]:
        """Live or final counts of each worker (task attempt) of one operator."""
        op = self.dag.node(operator).id
        return sorted((w for w in self._worker_states() if w["operator"] == op),
                      key=lambda w: (w["stage"], w["partition"], w["attempt"]))

    def _worker_states(self) -> list[dict]:
        """Every worker's lifecycle row with its counts and its ``rate`` (records/s)."""
        return [dict(row, rate=0.0) for row in self.store.worker_table().to_pylist()]

    # --- time travel: interactions and snapshots ----------------------------------------
    def history(self) -> History:
        """The interactions and snapshots recorded so far (a fresh view each call)."""
        rows = self.store.worker_table().to_pylist()
        return History.from_store(self.store, self.dag, rows)

    @property
    def interactions(self) -> list[Interaction]:
        """Every interaction, I0 (the initial states) first."""
        return self.history().interactions()

    def interaction_marks(self) -> list[InteractionMark]:
        """Every interaction's index, time, trigger and completeness, without the
        workers' counts (``interactions`` reads every worker's reports for those)."""
        return marks(self.store.interactions())

    def interaction_points(self) -> list[dict[int, int | None]]:
        """θ's records processed per partition at each interaction after I0 (0: not
        started, None: ended): ``--interact-at`` with these points (``snapshots/
        pinned.py``: ``format_interact_at``) takes interaction k at the same records."""
        return self.history().points()

    def interact(self, timeout: float = 2.0) -> Interaction:
        """A manual interaction now: a tuple-consistent snapshot of G(θ) while the job runs.

        Waits up to ``timeout`` seconds for θ's running workers to report."""
        raise self._not_recording()

    def _not_recording(self) -> RuntimeError:
        return RuntimeError(f"run {self.id} is {self.status}: interactions happen while a "
                            "run records; after it, jump to a recorded one with "
                            "run.snapshot(k)")

    def snapshot(self, index: int) -> Snapshot:
        """The states of G(θ)'s workers at interaction ``index``. The states your code
        reads from it go to the action log (the exported notebook reads them again)."""
        return LoggedSnapshot.of(self.history().snapshot(index), self._actions.record)

    def final_state(self, operator: str, partition: int) -> dict | None:
        """A worker of G(θ)'s state when its partition ended (None if it did not report)."""
        return self.history().final_state(self.dag.node(operator), partition)

    def debugger(self) -> Debugger | RemoteDebugger:
        """The debugger of this ended run: ``jump(k)``, ``step_over``, ``step_into``...

        One per run, made on the first call: the sidebar, the panel and your code share
        its position. Its jumps and steps go to the action log (``run.actions``). Where
        the machine has ``fork()`` it runs in a replay process with fork checkpoints
        (``replay/remote.py``), else in the kernel (``replay/debugger.py``)."""
        from ..replay.remote import RemoteDebugger, debugger_for

        with self._debugger_lock:
            # a replay process closes on close(), or when newer runs' debuggers replace it
            closed = isinstance(self._debugger, RemoteDebugger) and self._debugger.closed
            if self._debugger is None or closed:
                self._debugger = debugger_for(self, self._debugger_moved,
                                              lambda progress: self.emit("replay", progress))
            return self._debugger

    @property
    def current_debugger(self) -> Debugger | RemoteDebugger | None:
        """The run's debugger if ``debugger()`` made one already, else None."""
        return self._debugger

    def _debugger_moved(self, call: str, snapshot: DebugSnapshot) -> None:
        self._actions.record(call, **shown_by(snapshot))
        self.emit("moved", {"call": call, "index": snapshot.index, "step": snapshot.step})

    @property
    def actions(self) -> list[dict]:
        """Every interaction, jump and step taken on this run, as its Python call, in
        order: ``{"time", "source" ("api" | "sidebar" | "panel"), "call"}``."""
        return self._actions.list()

    def input_order(self, operator: str, partition: int) -> list[tuple[str, int]]:
        """The input log of a worker: (upstream operator, records) runs, in arrival order.

        A single-input operator, or one after a union (each of whose partitions comes from
        one input), has one run: its input records on ``partition``, summed over the jobs
        that ran it. A join, outer join, cogroup or groupWith has the runs its merge logged
        while consuming the shuffle, where a unit is one combiner: the values of one key
        from one map-side partition of one input. They come from the first successful task
        attempt on ``partition`` (each job that computes it fetches in its own order).
        Raises KeyError for an unknown operator, LookupError when nothing was logged."""
        node = self.dag.node(operator)
        if node.inputs:
            return self._merge_order(node.id, node.inputs, partition)
        records = sum(w.get("records_in") or 0 for w in self.partitions(operator)
                      if w["partition"] == partition and w["status"] == "ok")
        return [(self.dag.input_of(operator, partition), records)]

    def _merge_order(self, op: int, inputs: list[int], partition: int) -> list[tuple[str, int]]:
        import os

        from ..executor.input_order import input_runs
        from ..store.replay_logs import read_replay_log

        names = [self.dag.node(i).name for i in inputs]
        rows = [r for r in self.store.worker_table().to_pylist()
                if r["operator"] == op and r["partition"] == partition and r["status"] == "ok"]
        for row in sorted(rows, key=lambda r: r["started"] or 0.0):
            path = layout.replay_log_path(self.path, row)
            log = read_replay_log(path) if os.path.exists(path) else None
            if log is not None and log.order is not None and log.kind == "origins":
                offsets = [sum((self.dag.node(op).input_partitions or [])[:i])
                           for i in range(len(names))]  # a join after θ logs origins
                return [(names[i], n) for i, n in input_runs(log.order.tolist(), offsets)]
            if log is not None and log.order is not None:
                return [(names[int(i)], int(n)) for i, n in log.order]
        raise LookupError(f"no input order of {self.dag.node(op).name!r} on partition "
                          f"{partition}: no successful task attempt logged one")

    def upstream_rdd(self, operator: int) -> Any:
        """The RDD that operator ``operator`` (a node id) reads in the pipeline this kernel
        ran, to regenerate its inputs with Spark; None: a reopened run's pipeline is gone."""
        return None

    def output_rdd(self, operator: int) -> Any:
        """The RDD that node ``operator`` produced in the pipeline this kernel ran (a
        trace's records are regenerated from it); None: a reopened run's pipeline is gone."""
        return None

    def rebuild_parts(self) -> Any:
        """What ``Trace.replay`` re-runs (the recorder of this kernel's pipeline); None:
        a reopened run's pipeline is gone."""
        return None

    def collected(self, operator: int) -> list | None:
        """What the cell's ``collect()`` of node ``operator``'s RDD returned, if it did
        (in this kernel); None otherwise."""
        return None

    # --- lineage (Titian) ---------------------------------------------------------
    def trace_back(self, row: Any = None, operator: str | None = None, *,
                   at: tuple[int, int] | None = None) -> Trace | FrameTrace:
        """The records an output row comes from, at every operator back to the sources.

        ``row``: a row of the output of ``operator`` (default: the cell's last operator),
        or a predicate selecting several; or ``at=(partition, position)``, its id (a
        reopened run has no records to compare). Needs a run recorded with ``--lineage``."""
        frames = self._frame_lineage(operator)
        trace = frame_trace_back(frames, row, at) if frames is not None else \
            trace_back(self._lineage(), row, operator, at)
        return self._logged(trace, _trace_call("run.trace_back", row, operator, at))

    def trace_forward(self, record: Any = None, operator: str | None = None, *,
                      at: tuple[int, int] | None = None) -> Trace | FrameTrace:
        """The output rows a source record went into (none: it was filtered out).

        ``record``: a record of the source ``operator`` (default: every source), or a
        predicate selecting several; or ``at=(partition, position)``, its id in
        ``operator``. Needs a run recorded with ``--lineage``."""
        frames = self._frame_lineage(operator)
        trace = frame_trace_forward(frames, record, at, operator) if frames is not None else \
            trace_forward(self._lineage(), record, operator, at)
        return self._logged(trace, _trace_call("run.trace_forward", record, operator, at))

    def _logged(self, trace: Any, call: str) -> Any:
        """``trace``, its ``call`` in the action log, and its replay's too when it runs."""
        return logged_trace(trace, call, self._actions.record)

    def lineage_outputs(self) -> tuple[str, list[tuple[int, int, Any]]]:
        """The cell's last operator and its output rows as (partition, position, record),
        in that order: the rows ``trace_back`` starts from (``at=(partition, position)``)."""
        frames = self._frame_lineage()
        return frame_outputs(frames) if frames is not None else output_rows(self._lineage())

    def _frame_lineage(self, operator: str | None = None) -> Any:
        """The DataFrame lineage of a cell whose last operator is a DataFrame (in the
        kernel that ran it), unless ``operator`` names an RDD's; else None
        (``lineage/dataframe.py``)."""
        if self.status == "running" or not (self.manifest.get("options") or {}).get("lineage") \
                or self.manifest.get("session") == "connect":  # _lineage() says why not
            return None
        with self._lock:
            if getattr(self, "_frames_cache", None) is None:
                self._frames_cache = dataframe_lineage(self)
            frames = self._frames_cache
        if frames is None or operator is None:
            return frames
        return frames if self.dag.node(operator).id in frames.graph.how else None

    def prepare_lineage(self) -> WriteAhead | None:
        """Start preparing the run's lineage on a kernel thread (when the run ends, unless
        ``--no-prepare``): a DataFrame run's frames written, an RDD run's map sides'
        key numbers derived; the first trace waits only for what is not done yet. The
        writer, or None (a Spark Connect run: no lineage)."""
        frames = self._frame_lineage()
        if frames is not None:
            self.lineage_writer = write_ahead(self.id, frames.write_frames)
        elif self.manifest.get("session") != "connect":
            self.lineage_writer = write_ahead(
                self.id, lambda stop: self._lineage().derive_ahead(stop))
        return self.lineage_writer

    def _lineage(self) -> Lineage:
        if self.manifest.get("session") == "connect":  # reopened runs too
            raise NeedsClassicSession(needs_classic("Lineage (run.trace_back, trace_forward)"))
        with self._lock:
            if self._lineage_cache is None:
                self._lineage_cache = Lineage(self)
            return self._lineage_cache

    # --- skew (Reshape) -------------------------------------------------------------
    def skew(self, operator: str, **rules: Any) -> SkewReport:
        """``operator``'s load per partition, heavy keys, the skew test, advice and chart;
        live while the run records, else final. ``rules``: ``load``, ``eta``, ``tau``,
        ``factor``, ``threshold`` (``skew.Rules``). Heavy keys need ``--skew``."""
        from ..skew import Rules, SkewReport
        from .skew_source import skew_source

        return SkewReport(skew_source(self), operator, Rules(**rules) if rules else None)

    def recorded_inputs(self, partition: int) -> list:
        """θ's input records on ``partition`` in processing order (needs --record-inputs)."""
        theta = self.dag.require_interesting()
        records = self.store.recorded_inputs(theta.id, partition)
        if records is not None:
            return records
        if not self.options.get("record_inputs"):
            raise LookupError(f"no recorded inputs of {theta.name!r} on partition "
                              f"{partition}: the run was recorded without --record-inputs; "
                              "record it again with the flag to keep them")
        ran = sorted({w["partition"] for w in self.partitions(theta.name)})
        raise LookupError(f"no recorded inputs of {theta.name!r} on partition {partition}: "
                          f"no successful task of θ ran it (θ ran on partitions {ran}), or "
                          "writing them failed (see run.alerts())")

    def summary(self) -> dict:
        """A JSON-able view of the run for the sidebar and the panel."""
        return {"id": self.id, "status": self.status, "started": self.started,
                "ended": self.ended, "duration": self.duration, "cell": self.cell,
                "path": self.path, "dag": self.dag.to_json(), "progress": self.progress(),
                "error": self.error, "warnings": self.warnings,
                "alerts": json.loads(json.dumps(self._alert_list()[-50:], default=str))}

    def __repr__(self) -> str:
        return f"<Run {self.id} {self.status}, {len(self.dag.python_operators)} Python operators>"


def _trace_call(method: str, selector: Any, operator: str | None,
                at: tuple[int, int] | None) -> str:
    """The call a trace is recorded as in the action log (a predicate by its name)."""
    args = []
    if selector is not None:
        args.append(getattr(selector, "__name__", "predicate") if callable(selector)
                    else repr(selector))
    if operator is not None:
        args.append(f"operator={operator!r}")
    if at is not None:
        args.append(f"at=({int(at[0])}, {int(at[1])})")
    return f"{method}({', '.join(args)})"


def _one_attempt_per_task(workers: list[dict]) -> list[dict]:
    """Of each partition's task attempts in the last stage that ran it, the one furthest
    along that Spark did not kill: whose records the progress counts."""
    best: dict[int, dict] = {}
    for worker in workers:
        if worker["status"] == "killed":
            continue
        mine = best.get(worker["partition"])
        if mine is None or (worker["stage"], worker.get("records_in") or 0) > \
                (mine["stage"], mine.get("records_in") or 0):
            best[worker["partition"]] = worker
    return list(best.values())
