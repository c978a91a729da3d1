"""The coordinator's side of live control: pauses and their acknowledgements, the
breakpoints armed, their hits and the user's decisions, live states while paused.

Messages from workers arrive in the server's reader threads (``on_message``): nothing
here blocks them. What the user calls (``pause``, ``resume``, ``decide``...) waits, with a
timeout, for the workers' answers.
"""
from __future__ import annotations

import itertools
import threading
import time
from collections.abc import Callable
from typing import Any

from ..dag import Dag
from ..executor.control import ROW_UDF, ROW_UDF_REFUSAL
from ..executor.control_state import compile_expression
from ..executor.group_errors import plain_record
from ..executor.state import decode, encode
from ..store import control_files as edits
from .global_breakpoints import GlobalBreakpoint
from .hits import ACTIONS, Breakpoint, Hit, PauseReport

Broadcast = Callable[[dict], int]
Emit = Callable[[str, dict], None]


class BadBreakpoint(ValueError):
    """A breakpoint that cannot be armed: an unknown operator, an expression that does not
    parse. Nothing armed or recorded changes."""


class LiveController:
    def __init__(self, store_path: str, dag: Dag, broadcast: Broadcast,
                 running: Callable[[int | None], set], emit: Emit,
                 on_stop: Callable[[], None] | None = None) -> None:
        self.path, self.dag, self.broadcast, self.emit = store_path, dag, broadcast, emit
        self.running = running  # running task ids (of one operator, or all)
        self.on_stop = on_stop  # cancels the run's Spark jobs
        self.breakpoints: dict[int, Breakpoint] = {}
        self.globals: dict[int, GlobalBreakpoint] = {}
        self.hits: list[Hit] = []
        self.paused: int | None = None
        self.stopped = False
        self._pauses = itertools.count(1)
        self._ids = itertools.count(1)
        self._requests = itertools.count(1)
        self._acks: dict[int, dict[int, float]] = {}  # pause -> task -> time held
        self._resumed: dict[int, dict[int, float]] = {}  # pause -> task -> time going on
        self._asked: dict[int, float] = {}
        self._states: dict[int, dict] = {}
        self._cond = threading.Condition()
        self.record_action: Callable[[str], Any] = lambda call: None  # the run's action log
        self._announced: list[dict] = []  # the breakpoints as last broadcast

    # --- what the workers learn on connecting ------------------------------------------
    def sticky(self) -> dict:
        with self._cond:
            return {"paused": self.paused, "stopped": self.stopped, "breakpoints": self._items()}

    def _items(self) -> list[dict]:
        names = {name: op for op, name in self.dag.names().items()}
        return [{"id": bp.id, "operator": names[bp.operator], "kind": bp.kind, "when": bp.when,
                 "sum_of": bp.sum_of} for bp in self.breakpoints.values()
                if bp.armed and bp.operator in names]

    def _announce(self) -> None:
        with self._cond:
            items = self._announced = self._items()
        self.broadcast({"type": "breakpoints", "items": items})
        self.emit("control", self.summary())

    def operators_changed(self) -> None:
        """A worker of a new operator started: breakpoints named before it was built
        (``--break-when`` in a cell of several jobs) reach the processes connected earlier."""
        with self._cond:
            changed = self.breakpoints and self._items() != self._announced
        if changed:
            self._announce()

    # --- pause and resume ----------------------------------------------------------------
    def pause(self, timeout: float = 5.0, wait: bool = True) -> PauseReport:
        """Every running task holds between two records; returns when all have said so."""
        with self._cond:
            if self.paused is None:
                self.paused = next(self._pauses)
                self._asked[self.paused] = time.monotonic()
                self._acks[self.paused] = {}
                fresh = True
            else:
                fresh = False
            pause = self.paused
        if fresh:
            self.broadcast({"type": "pause", "pause": pause})
            self.emit("control", self.summary())
        return self._wait_acks(pause, self._acks, timeout if wait else 0.0)

    def resume(self, timeout: float = 5.0) -> float:
        """Pending hits go on with their records; the tasks go on. Returns the seconds
        until every held task said it went on."""
        for hit in self.pending_hits():
            self._send_decision(hit, "resume", None)
        with self._cond:
            pause, self.paused = self.paused, None
            if pause is None:
                return 0.0
            self._asked[pause] = time.monotonic()
            self._resumed[pause] = {}
            held = set(self._acks.get(pause, {}))
        self.broadcast({"type": "resume", "pause": pause})
        self.emit("control", self.summary())
        report = self._wait_acks(pause, self._resumed, timeout, held)
        return report.seconds

    def _wait_acks(self, pause: int, acks: dict, timeout: float,
                   expected: set | None = None) -> PauseReport:
        deadline = time.monotonic() + timeout
        with self._cond:
            while True:
                want = (expected if expected is not None else self.running(None))
                want = want & self.running(None) if expected is not None else want
                got = acks.get(pause, {})
                if want <= set(got) or time.monotonic() >= deadline:
                    break
                self._cond.wait(min(0.05, max(deadline - time.monotonic(), 0.001)))
            asked = self._asked[pause]
            times = [t for task, t in got.items()]
            seconds = (max(times) - asked) if times else 0.0
            return PauseReport(max(seconds, 0.0), len(got), len(want - set(got)))

    def on_paused(self, message: dict) -> None:
        task = message["worker"]["task"]
        table = self._acks if message["paused"] else self._resumed
        with self._cond:
            table.setdefault(message["pause"], {})[task] = time.monotonic()
            self._cond.notify_all()

    def task_ended(self) -> None:
        """A worker ended: whoever waits for tasks to answer looks again."""
        with self._cond:
            self._cond.notify_all()

    # --- breakpoints ---------------------------------------------------------------------
    def add(self, operator: str, kind: str = "condition", when: str | None = None,
            sum_of: str | None = None, target: float | None = None,
            check_operator: bool = True) -> Breakpoint:
        """Arm a breakpoint; BadBreakpoint (nothing changes) if it cannot be."""
        if check_operator:
            try:
                node = self.dag.node(operator)
            except KeyError as exc:
                raise BadBreakpoint(exc.args[0]) from None
            if node.kind != "python":
                raise BadBreakpoint(f"{operator!r} is a JVM operator: breakpoints are checked "
                                    "in Python workers")
            if node.api == ROW_UDF:
                raise BadBreakpoint(ROW_UDF_REFUSAL.format(op=operator))
        for text, what in ((when, "the condition"), (sum_of, "the sum's expression")):
            if text is not None:
                try:
                    compile_expression(text, "breakpoint")
                except SyntaxError as exc:
                    raise BadBreakpoint(f"{what} {text!r} is not a Python expression: "
                                        f"{exc.msg}") from None
        if kind in ("count", "sum") and (target is None or target <= 0):
            raise BadBreakpoint("a global breakpoint needs a target above 0")
        bp = Breakpoint(next(self._ids), operator, kind, when, sum_of,
                        None if target is None else float(target))
        with self._cond:
            self.breakpoints[bp.id] = bp
        edits.append(self.path, "breakpoints", {"event": "armed", **bp.to_json()})
        if kind in ("count", "sum"):
            self._arm_global(bp)
        self._announce()
        return bp

    def _arm_global(self, bp: Breakpoint) -> None:
        names = {name: op for op, name in self.dag.names().items()}
        op = names.get(bp.operator, -1)
        self.globals[bp.id] = GlobalBreakpoint(bp.id, op, bp.kind, float(bp.target or 0),
                                               self.broadcast, self.running, self._global_hit)

    def remove(self, bp_id: int) -> None:
        with self._cond:
            bp = self.breakpoints.get(bp_id)
            if bp is None:
                raise KeyError(f"no breakpoint {bp_id} (breakpoints: {sorted(self.breakpoints)})")
            bp.armed = False
        edits.append(self.path, "breakpoints", {"event": "removed", "id": bp_id})
        self._announce()

    def _global_hit(self, glob: GlobalBreakpoint, total: float) -> None:
        bp = self.breakpoints[glob.id]
        bp.armed = False
        hit = Hit(len(self.hits), bp.kind, bp.operator, None, bp.id, total=float(total),
                  time=time.time(), _controller=self)
        self.pause(wait=False)
        self._add_hit(hit)
        self._announce()

    # --- hits ------------------------------------------------------------------------------
    def on_hit(self, message: dict) -> None:
        """A worker met a breakpoint (or an exception) and holds: the whole job pauses."""
        worker = message["worker"]
        bp = self.breakpoints.get(message["breakpoint"])
        hit = Hit(len(self.hits), message["kind"], self.dag.names().get(worker["operator"],
                                                                         str(worker["operator"])),
                  worker["partition"], bp.id if bp else None,
                  record=decode(message.get("record"), edits.spark_row),
                  state=decode(message.get("state") or {}, edits.spark_row),
                  error=message.get("error"), time=message.get("time", time.time()),
                  task=worker["task"], hit=message["hit"], input_index=message["index"],
                  actions=tuple(message.get("actions") or ACTIONS),
                  refused=message.get("refused") or "", _controller=self)
        hit.described = message.get("described")  # type: ignore[attr-defined]
        hit.operator_id = worker["operator"]  # type: ignore[attr-defined]
        if bp is not None and not bp.armed:  # removed as the worker met it: go on
            self.broadcast({"type": "decide", "task": hit.task, "hit": hit.hit,
                            "action": "resume", "record": None})
            return
        if bp is not None:
            bp.hits += 1
        self.pause(wait=False)
        self._add_hit(hit)

    def _add_hit(self, hit: Hit) -> None:
        with self._cond:
            self.hits.append(hit)
            self._cond.notify_all()
        row = hit.to_json()
        row.pop("state", None)
        edits.append(self.path, "hits", {"event": "hit", **row})
        self.emit("hit", {"hit": hit.to_json()})

    def pending_hits(self) -> list[Hit]:
        with self._cond:
            return [h for h in self.hits if h.pending]

    def wait_hit(self, timeout: float) -> Hit:
        """The oldest hit waiting for a decision, waiting for one if there is none;
        TimeoutError after ``timeout`` s."""
        deadline = time.monotonic() + timeout
        with self._cond:
            while True:
                pending = [h for h in self.hits if h.pending]
                if pending:
                    return pending[0]
                left = deadline - time.monotonic()
                if left <= 0:
                    raise TimeoutError(f"no breakpoint hit within {timeout} s")
                self._cond.wait(left)

    def decide(self, hit: Hit, action: str, record: Any = None) -> None:
        """The user's decision on ``hit``; then the job goes on (or stops)."""
        if action not in ACTIONS:
            raise ValueError(f"unknown action {action!r} (one of {', '.join(ACTIONS)})")
        if not hit.pending:
            raise RuntimeError(f"hit {hit.index} was decided already ({hit.decision})")
        if hit.kind in ("count", "sum") and action in ("skip", "replace"):
            raise ValueError("a global breakpoint's hit has no record to skip or replace: "
                             "resume() or stop()")
        if action not in hit.actions:
            raise ValueError(f"{action}() is not offered at this hit: {hit.refused}")
        encoded = None
        if action == "replace":
            encoded = encode(plain_record(record))  # a pandas frame: its row dicts
            if isinstance(encoded, dict) and encoded.get("$t") in ("object", "summary"):
                raise ValueError(f"cannot send {type(record).__name__} to a worker: replace "
                                 "with a Row, tuple, dict, list or scalar")
        if action in ("skip", "replace"):
            edits.append(self.path, "edits", {
                "operator": getattr(hit, "operator_id", -1), "partition": hit.partition,
                "index": hit.input_index, "action": action, "kind": hit.kind,
                "record": encode(hit.record), "replacement": encoded, "time": time.time()})
        argument = repr(record) if action == "replace" else ""
        self.record_action(f"run.breakpoints[{hit.index}].{action}({argument})")
        if action == "stop":
            self.stop()
            return
        self._send_decision(hit, action, encoded)
        if not self.pending_hits():
            self.resume()

    def _send_decision(self, hit: Hit, action: str, encoded: Any) -> None:
        hit.decision = action
        edits.append(self.path, "hits", {"event": "decided", "index": hit.index,
                                         "decision": action})
        if hit.hit >= 0:
            self.broadcast({"type": "decide", "task": hit.task, "hit": hit.hit,
                            "action": action, "record": encoded})
        self.emit("hit", {"hit": hit.to_json()})

    def stop(self) -> None:
        """End the run: held workers end their tasks, the run's jobs are cancelled."""
        with self._cond:
            if self.stopped:
                return
            self.stopped = True
            pending = [h for h in self.hits if h.pending]
        for hit in pending:
            hit.decision = "stop"
            edits.append(self.path, "hits", {"event": "decided", "index": hit.index,
                                             "decision": "stop"})
        if self.on_stop is not None:
            self.on_stop()
        self.broadcast({"type": "stop"})
        self.emit("control", self.summary())

    # --- global breakpoints' and live states' messages ---------------------------------------
    def on_global_report(self, message: dict) -> None:
        glob = self.globals.get(message["breakpoint"])
        if glob is not None and not glob.done:
            if glob.op == -1:
                glob.op = message["worker"]["operator"]
            glob.report(message["worker"]["task"], message["value"], message["reached"],
                        message["final"])

    def live_state(self, op: int, partition: int, timeout: float = 3.0) -> tuple[dict, int]:
        """The state of the running worker of ``op`` on ``partition`` (decoded) and the
        records it has processed; LookupError if none answers within ``timeout``."""
        request = next(self._requests)
        self.broadcast({"type": "live_state", "request": request, "operator": op,
                        "partition": partition})
        deadline = time.monotonic() + timeout
        with self._cond:
            while request not in self._states:
                left = deadline - time.monotonic()
                if left <= 0:
                    raise LookupError(f"no running worker of operator {op} on partition "
                                      f"{partition} answered within {timeout} s")
                self._cond.wait(left)
            reply = self._states.pop(request)
        return decode(reply["state"], edits.spark_row), reply.get("processed", -1)

    def on_live_state(self, message: dict) -> None:
        with self._cond:
            self._states[message["request"]] = message
            self._cond.notify_all()

    def summary(self) -> dict:
        """A JSON-able view for the panel and the sidebar."""
        with self._cond:
            return {"paused": self.paused is not None, "stopped": self.stopped,
                    "breakpoints": [bp.to_json() for bp in self.breakpoints.values()],
                    "hits": len(self.hits), "pending": sum(1 for h in self.hits if h.pending)}
