"""Skew requests: ``skew.report``, one call of ``run.skew(operator, **rules)``; and, while a
``--skew`` run records, ``skew.changed`` events pushing its live view's changed rows."""
from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any

from ..agents.skew import SkewCoordinator
from ..executor.skew import AGENT
from ..session.run import Run
from ..session.skew_source import skew_source
from ..skew.changes import LiveChanges
from ..skew.chart import warm_templates
from ..skew.keys import CountsWindow
from ..skew.report import SkewReport
from ..skew.source import frame_joins
from .handlers import MethodTable, jsonable, run_of
from .messages import RequestError

SKEW = MethodTable()
RULES = ("load", "eta", "tau", "factor", "threshold")
PUSH_GAP = 0.15  # seconds at least from one push's start to the next (at 0.25 s, a sketch
# waited up to a gap for its push: 0.63-0.65 s p95 to the charts drawn, against 0.45-0.48 s)
PUSH_TICK = 0.5  # seconds at most between two looks (the workers' counts move unasked)
SLOW_GAP = 0.5  # seconds at least between two pushes reading the heat map and the load
# over time (the sidebar draws them at most this often: skew/chartView.ts HEATMAP_GAP)
_LIVE_OPERATOR: dict[str, str] = {}  # run id -> the operator a sidebar asked for


def default_operator(run: Run) -> str:
    """The operator a skew view starts on: the first whose keys were counted (the
    reduce side of an aggregation, a join, a partitionBy), else the last Python operator;
    in a --skew run without one that has ended, its first DataFrame join."""
    python = run.dag.loaded_operators
    joins = frame_joins(run.dag)
    if not python and joins and run.options.get("skew") and run.status != "running":
        return joins[0]
    if not python:
        raise LookupError(f"run {run.id} has no Python operator: no load per partition")
    counted = bool(run.options.get("skew"))  # a partitionBy's keys: only under --skew
    for node in python:
        if node.phase != "combine" and (node.phase == "merge" or node.inputs
                                        or (node.hosted and counted)
                                        or node.api == "applyInPandas"):
            return node.name
    return python[-1].name


@SKEW.handles("skew.report")
def skew_report(params: dict) -> dict:
    run = run_of(params)
    operator = params.get("operator") or default_operator(run)
    rules: dict[str, Any] = {k: params[k] for k in RULES if params.get(k) is not None}
    try:
        report = run.skew(operator, **rules)
    except ValueError as exc:  # a JVM operator, a load that is none, a bad parameter
        raise RequestError(str(exc)) from None
    if report.live and params.get("operator"):
        _LIVE_OPERATOR[run.id] = report.operator  # what skew.changed pushes from now on
    return report_json(run, report)


def live_report(run: Run, operator: str) -> SkewReport:
    """``run.skew(operator)`` for a push: Spark's partition sizes as last read, not waited
    for (``session/stage_sizes.LiveWaiting``)."""
    return SkewReport(skew_source(run, sizes_now=False), operator)


def report_json(run: Run, report: SkewReport, view: dict | None = None) -> dict:
    """``skew.report``'s result: the report with the run's operators to pick from."""
    result = report.to_json(view)
    joins = frame_joins(run.dag) if run.options.get("skew") and not report.live else []
    result.update(run=run.id, operators=[n.name for n in run.dag.loaded_operators
                                         if n.phase != "combine"] + joins + report.jvm_stages,
                  recorded=bool(run.options.get("skew")))
    return jsonable(result)


class SkewPusher:
    """While a ``--skew`` run records: ``skew.changed`` events, each with the rows of the
    live skew view that changed since the last (the whole report first and whenever the
    operator shown changes), soon after a worker's sketch arrives (``wake``), at most
    every ``PUSH_GAP`` and at least every ``PUSH_TICK``. The bars name the heaviest keys
    and those rising over the last ``RISING_WINDOW`` seconds (a key that turns heavy is
    drawn on the next push, not once it outgrows the heaviest so far)."""

    def __init__(self, run: Run, send: Callable[[str, dict], None],
                 listening: Callable[[], bool],
                 report: Callable[[str], SkewReport] | None = None,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.run, self.send, self.listening = run, send, listening
        self.clock = clock  # seconds, for the gap between reads of the slow charts' rows
        self.report = report or run.skew  # operator -> its live report
        self.wake = threading.Event()
        self._changes: LiveChanges | None = None
        self._counts = CountsWindow()  # the keys' counts of late: which keys rise
        self._pushed_at = 0.0  # when the last push read the sketches (wall time)
        self._every_at = -SLOW_GAP  # when a push last read the cells and the load over time

    def start(self) -> SkewPusher:
        threading.Thread(target=self._loop, daemon=True,
                         name=f"icedtea-skew-{self.run.id}").start()
        return self

    def _loop(self) -> None:
        if self.listening():  # before the first sketch: Altair takes seconds on busy cores
            warm_templates()
        while self.run.status == "running":
            self.wake.wait(PUSH_TICK)
            self.wake.clear()
            started = time.monotonic()
            if self.listening():
                try:
                    self.push()
                except Exception:  # a view not computable yet (no worker): the next look
                    self._changes = None
            time.sleep(max(0.0, PUSH_GAP - (time.monotonic() - started)))  # from push to push
        _LIVE_OPERATOR.pop(self.run.id, None)

    def _since(self) -> float | None:
        """When the oldest sketch this push is the first to carry left its worker (wall
        time, seconds): what the sidebar's latency is counted from."""
        coordinator = getattr(self.run, "coordinator", None)
        agent = coordinator.agent(AGENT) if coordinator is not None else None
        sketches = agent.latest() if isinstance(agent, SkewCoordinator) else {}
        new = [p.get("sent", p["received"]) for p in sketches.values()
               if p["received"] > self._pushed_at]
        return min(new) if new else None

    def push(self) -> None:
        """Send what changed (nothing when nothing did)."""
        run = self.run
        if run.status != "running":  # ended: the sidebar asks for the final report (one
            return  # made here read the whole store: 2.3 s of the kernel's CPU at 2,400 workers)
        pushed_at = time.time()  # a sketch arriving from now on counts for the next push
        since = self._since()
        report = self.report(_LIVE_OPERATOR.get(run.id) or default_operator(run))
        if not report.live:
            return  # the run ended while the report was made
        changes = self._changes
        if changes is None or changes.operator != report.operator:
            changes, self._counts = None, CountsWindow()
        now = self.clock()
        every = changes is None or now - self._every_at >= SLOW_GAP
        view = report.live_view(self._counts.since(report.keys_sketch, now), every)
        if changes is not None and not changes.same_charts(view):
            changes = None  # a new chart: the load over time moved to the reduce side, or
            # the heat map's columns now span more partitions (more have reported)
            view = report.live_view(self._counts.since(report.keys_sketch, now))
            every = True
        if every:
            self._every_at = now
        if changes is None:
            self._changes = LiveChanges(report.operator, view["timeline_operator"],
                                        view["span"])
            self._changes.changes(view)
            self._pushed_at = pushed_at
            self.send("skew.changed", {"run": run.id, "operator": report.operator,
                                       "report": report_json(run, report, view),
                                       "changes": None, "since": since})
            return
        changed = changes.changes(view)
        self._pushed_at = pushed_at  # a sketch that changed nothing is shown already
        if changed is not None:
            self.send("skew.changed", {"run": run.id, "operator": report.operator,
                                       "report": None, "changes": jsonable(changed),
                                       "since": since})
