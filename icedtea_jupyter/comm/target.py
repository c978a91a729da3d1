"""The ``icedtea`` comm target: dispatches requests to handlers, pushes run events."""
from __future__ import annotations

import logging
import threading
import time
import traceback
import weakref
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from ..replay.client import ReplayCancelled
from ..session import registry
from ..session.actions import acting_as
from ..session.run import Run, StepRefused
from .agent_data import AGENT_DATA
from .alerts import ALERTS
from .control import CONTROL, CONTROL_EVENTS
from .handlers import RUNS, HandlerRegistry, jsonable, run_item
from .lineage import LINEAGE
from .lineage import SLOW as LINEAGE_REQUESTS
from .messages import DEFAULT_SOURCE, RequestError, error_reply, event, reply, validate_request
from .skew import SKEW, SkewPusher, live_report
from .time_travel import EVENTS as TIME_TRAVEL_EVENTS
from .time_travel import TIME_TRAVEL
from .versions import VERSIONS

LOG = logging.getLogger("icedtea_jupyter")

TARGET = "icedtea"
PROGRESS_PERIOD = 0.25
_OPEN: list[CommChannel] = []
_LOCK = threading.Lock()
_WATCHING = False
_WATCHED: weakref.WeakSet[Run] = weakref.WeakSet()  # runs whose events are forwarded


def default_handlers() -> HandlerRegistry:
    """Every request method's handler: runs, time travel, skew, lineage, versions, control,
    samples and summaries."""
    return (HandlerRegistry().add(RUNS).add(TIME_TRAVEL).add(SKEW).add(LINEAGE).add(VERSIONS)
            .add(CONTROL).add(AGENT_DATA).add(ALERTS))


HANDLERS = default_handlers()
EVENTS = {**TIME_TRAVEL_EVENTS, **CONTROL_EVENTS}  # run events forwarded as they happen

# requests that may take seconds (a replay, a trace's Spark jobs): answered from a thread
# of their own, in order, so that the kernel goes on answering the others (and
# ``debug.cancel``) meanwhile
MOVES = frozenset({"debug.jump", "debug.jump_to_failure", "debug.step_over", "debug.step_into",
                   "debug.step_out"}) | LINEAGE_REQUESTS


class CommChannel:
    """One open comm with a frontend."""

    def __init__(self, comm: Any) -> None:
        self.comm = comm
        self._moves = ThreadPoolExecutor(1, thread_name_prefix="icedtea-comm-moves")
        comm.on_msg(self._on_msg)
        comm.on_close(self._on_close)

    def _on_msg(self, msg: dict) -> None:
        data = msg["content"]["data"]
        if isinstance(data, dict) and data.get("method") in MOVES:
            self._moves.submit(self._answer_move, data)
        else:
            self.send(handle(data))

    def _answer_move(self, data: dict) -> None:
        """A jump's or step's reply, from the moves thread: nobody reads that thread's
        futures, so a reply that cannot be sent (a closed frontend) is logged here."""
        try:
            self.send(handle(data))
        except Exception:
            LOG.exception("icedtea: could not send the reply to %r to a frontend",
                          data.get("method"))

    def _on_close(self, msg: dict) -> None:
        with _LOCK:
            if self in _OPEN:
                _OPEN.remove(self)
        self._moves.shutdown(wait=False)

    def send(self, data: dict) -> None:
        self.comm.send(data)


def handle(message: Any) -> dict:
    """The reply to one request (errors become error replies; nothing raises)."""
    request_id = message.get("id") if isinstance(message, dict) else None
    try:
        request_id, method, params = validate_request(message)
        with acting_as(params.get("source", DEFAULT_SOURCE)):
            return reply(request_id, HANDLERS.handler(method)(params))
    except RequestError as exc:
        return error_reply(request_id if isinstance(request_id, int) else None, exc.kind, str(exc))
    except StepRefused as exc:  # a step or view the debugger cannot give now: why
        return error_reply(request_id, "refused", str(exc))
    except ReplayCancelled as exc:  # debug.cancel stopped it
        return error_reply(request_id, "cancelled", str(exc))
    except LookupError as exc:
        return error_reply(request_id, "not_found", str(exc.args[0] if exc.args else exc))
    except Exception as exc:
        return error_reply(request_id, "internal",
                           f"{type(exc).__name__}: {exc}\n{traceback.format_exc(limit=5)}")


def broadcast(name: str, data: dict) -> None:
    message = event(name, jsonable(data))
    with _LOCK:
        channels = list(_OPEN)
    for channel in channels:
        try:
            channel.send(message)
        except Exception:  # a closed frontend must not stop the others: logged, not raised
            LOG.exception("icedtea: could not send %r to a frontend", name)


def _on_open(comm: Any, open_msg: dict) -> None:
    channel = CommChannel(comm)
    with _LOCK:
        _OPEN.append(channel)


class _RunWatcher:
    """Forwards a run's events: its many live ones as at most four progress events a
    second; interactions, debugger moves and actions as they happen (also after the run)."""

    def __init__(self, run: Run) -> None:
        self.run = run
        self.dirty = threading.Event()
        self.skew: SkewPusher | None = None
        run.subscribe(self._on_event)
        if run.status == "running":
            threading.Thread(target=self._loop, daemon=True,
                             name=f"icedtea-comm-{run.id}").start()
            if run.options.get("skew"):
                self.skew = SkewPusher(run, broadcast, _listening,
                                       lambda operator: live_report(run, operator)).start()

    def _on_event(self, kind: str, data: dict) -> None:
        if kind in EVENTS:
            if _listening():  # a debug view is worth building only for a frontend
                broadcast(*EVENTS[kind](self.run, data))
            if kind == "interaction":
                self.dirty.set()
        elif kind == "alert":
            broadcast("run.alert", {"run": self.run.id, "alert": data})
        elif kind == "skew" and self.skew is not None:
            self.skew.wake.set()  # a worker's sketch: pushed as changed rows, not progress
        elif kind == "run":
            self._progress()
            broadcast("run.status", {"run": self.run.id, "status": self.run.status,
                                     "error": self.run.error, "warnings": self.run.warnings})
        else:
            self.dirty.set()

    def _progress(self, progress: list[dict] | None = None) -> None:
        broadcast("run.progress", {"run": self.run.id, "status": self.run.status,
                                   "duration": self.run.duration,
                                   "progress": self.run.progress() if progress is None
                                   else progress})

    def _loop(self) -> None:
        """While the run records: its progress at most four times a second, when an event
        asks or the counts moved (the workers' heartbeats move them without an event)."""
        last: list[dict] | None = None
        while self.run.status == "running":
            asked = self.dirty.wait(PROGRESS_PERIOD)
            self.dirty.clear()
            progress = self.run.progress()
            if asked or _counts(progress) != _counts(last):
                last = progress
                self._progress(progress)
                time.sleep(PROGRESS_PERIOD)


def _listening() -> bool:
    with _LOCK:
        return bool(_OPEN)


def _counts(progress: list[dict] | None) -> list[tuple] | None:
    """What a progress event is sent for: the records and partitions per operator."""
    if progress is None:
        return None
    return [(p["operator"], p["records_in"], p["records_out"], p["done"], p["running"],
             p["failed"]) for p in progress]


def _run_added(run: Run) -> None:
    broadcast("run.added", {"run": run_item(run)})
    _watch(run)


def _watch(run: Run) -> None:
    with _LOCK:
        if run in _WATCHED:
            return
        _WATCHED.add(run)
    _RunWatcher(run)


def watch_runs() -> None:
    """Forward the events of every run of the kernel, known or added later (idempotent)."""
    global _WATCHING
    with _LOCK:
        if _WATCHING:
            return
        _WATCHING = True
    registry.on_added(_run_added)
    for run in registry.runs():
        _watch(run)


def register_target() -> None:
    """Register the comm target in the running kernel (idempotent)."""
    from comm import get_comm_manager

    manager = get_comm_manager()
    if manager is None:
        return
    manager.register_target(TARGET, _on_open)
    watch_runs()
