"""What a Python worker process knows of its run's live control (Amber), kept up to date
by the control reader thread as the coordinator's messages arrive.

One ``TaskControl`` per run and process (a Python worker runs one task at a time). The
reader thread only writes it (``observe``) and wakes whoever waits (``wake``); the task
thread reads it between two records (``control.LiveControl``). The welcome of a new
connection carries the run's current control (``observe_welcome``): a worker that starts
while the run is paused pauses at its first record, and knows the breakpoints armed.
"""
from __future__ import annotations

import threading
from typing import Any

# the coordinator's live-control messages (executor/protocol.py)
CONTROL_TYPES = frozenset({"pause", "resume", "breakpoints", "decide", "target", "stop",
                           "live_state", "query"})


class TaskControl:
    """The run's live control as this process knows it."""

    def __init__(self) -> None:
        self.paused: int | None = None  # the pause in force, by id
        self.acked: set[tuple[int, int]] = set()  # (task, pause) acknowledged
        self.stopped = False  # the user stopped the run: held workers end their task
        self.breakpoints: dict[int, dict] = {}  # id -> {id, operator, kind, when, sum_of}
        self.version = 0  # bumped when the breakpoints change
        self.decisions: dict[tuple[int, int], dict] = {}  # (task, hit) -> decide message
        self.targets: dict[tuple[int, int], tuple[int, float]] = {}  # (bp, task) -> (seq, t)
        self.wake = threading.Event()  # set at every control message
        self.error_holds: set[int] = set()  # tasks held at an exception hit: their record
        # is not done (a replacement is still to run), so snapshots wait (timetravel.py)

    def observe(self, message: dict) -> None:
        """A coordinator message, in the reader thread: note what it changes."""
        kind = message.get("type")
        if kind not in CONTROL_TYPES:
            return
        if kind == "pause":
            self.paused = message["pause"]
        elif kind == "resume" and self.paused == message["pause"]:
            self.paused = None
        elif kind == "breakpoints":
            self.breakpoints = {bp["id"]: bp for bp in message["items"]}
            self.version += 1
        elif kind == "decide":
            self.decisions[(message["task"], message["hit"])] = message
        elif kind == "target":
            self.targets[(message["breakpoint"], message["task"])] = (message["seq"],
                                                                     message["target"])
        elif kind == "stop":
            self.stopped = True
        self.wake.set()

    def observe_welcome(self, control: dict | None) -> None:
        """The run's control when this process connected."""
        if not control:
            return
        self.paused = control.get("paused")
        self.stopped = bool(control.get("stopped"))
        self.observe({"type": "breakpoints", "items": control.get("breakpoints", [])})


_STATES: dict[str, TaskControl] = {}
_LOCK = threading.Lock()


def state_for(run_id: str) -> TaskControl:
    """The process-wide control of run ``run_id``."""
    state = _STATES.get(run_id)
    if state is None:
        with _LOCK:
            state = _STATES.setdefault(run_id, TaskControl())
    return state


def observe(run_id: str, message: dict) -> None:
    if message.get("type") in CONTROL_TYPES:
        state_for(run_id).observe(message)


def compile_expression(expression: str, what: str) -> Any:
    """``lambda row: (expression)``; SyntaxError if it does not parse."""
    return eval(compile(f"lambda row: ({expression})", f"<{what}>", "eval"), {})
