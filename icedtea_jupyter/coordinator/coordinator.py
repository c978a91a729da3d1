"""The coordinator of one run: the workers' lifecycle, agents' coordinator sides, alerts."""
from __future__ import annotations

import json
import logging
import os
import secrets
import threading
import time
import traceback
from collections.abc import Callable
from typing import Any

from ..checkpoints.policy import CheckpointPolicy
from ..control.controller import LiveController
from ..dag import Dag
from ..executor.agent import Agent
from ..executor.protocol import WORKER_FIELDS
from ..executor.spec import RunSpec
from ..executor.worker_file import write_replay_log
from ..store import layout
from ..store.full import is_full, reported_full
from ..store.run_store import RunStore
from .agent import CoordinatorAgent
from .artifacts import ArtifactInbox
from .interactions import (
    CONDITION,
    MANUAL,
    InteractionBook,
    PeriodicInteractions,
    RecordingStopped,
    RunFinishing,
)
from .server import Connection, ControlServer

Emit = Callable[[str, dict], None]
Handler = Callable[[dict, bytes], None]
log = logging.getLogger(__name__)
LATE_END = 30.0  # seconds more for the end of a worker whose task Spark says succeeded


def worker_key(worker: dict) -> tuple:
    return (worker["operator"], worker["stage"], worker["partition"], worker["attempt"],
            worker["task"])


class Coordinator:
    """Serves the control channel of one run and keeps what its workers report."""

    def __init__(self, run_id: str, store: RunStore, dag: Dag, agent_classes: list[type[Agent]],
                 emit: Emit, bind: str = "127.0.0.1", advertise: str | None = None,
                 port: int = 0, advertise_port: int | None = None,
                 interact_every: float | None = None, condition: str | None = None,
                 record_inputs: bool = False, checkpoint: str = "none", lineage: bool = False,
                 tau: float = 1.0, skew: bool = False,
                 breakpoints: tuple[tuple[str, str], ...] = (),
                 on_error: str = "fail", interact_at: tuple = ()) -> None:
        self.run_id, self.store, self.dag, self.emit = run_id, store, dag, emit
        self.secret = secrets.token_bytes(32)
        self.server = ControlServer(run_id, self.secret, self._on_message, self._welcome,
                                    host=bind, port=port)
        address = (advertise or self.server.address[0], advertise_port or self.server.address[1])
        self.run_spec = RunSpec(run_id, address, self.secret, store.path, tuple(agent_classes),
                                condition=condition, record_inputs=record_inputs,
                                checkpoint=checkpoint, lineage=lineage, skew=skew,
                                on_error=on_error, interact_at=interact_at,
                                store_token=store.token)
        self.control = LiveController(store.path, dag, self.server.broadcast,
                                      self.running_tasks, emit)
        for operator, when in breakpoints:  # --break-when: operators are named, not built
            self.control.add(operator, when=when, check_operator=False)
        self.workers: dict[tuple, dict] = {}
        self.inbox = ArtifactInbox(store.path, self.store_is_full)  # off-host workers' files
        self.alerts: list[dict] = []
        self.first_error: dict | None = None
        self.local_reasons: list[str] = []
        self._lock = threading.Lock()
        self._ended = threading.Condition(self._lock)
        started = time.time()
        policy = CheckpointPolicy.during_run(checkpoint, tau, started)
        self.book = InteractionBook(store.path, self._running_theta_workers,
                                    self.server.broadcast, started, policy,
                                    on_change=self._interaction_changed)
        self.book.on_full = self.store_is_full
        self.book.theta_operator = lambda: getattr(self.dag.interesting, "id", None)
        self.book.pin(list(interact_at))  # --interact-at: I1..IK, taken at these counts
        self.periodic = PeriodicInteractions(self.book, interact_every) if interact_every else None
        self.agents: dict[str, CoordinatorAgent] = {}
        for cls in agent_classes:
            coordinator_side = getattr(cls, "coordinator", None)
            if coordinator_side is not None:
                self.agents[cls.agent_name()] = coordinator_side()
                self.agents[cls.agent_name()].options = dict(getattr(cls, "options", {}))
        # a handler per worker message type (executor/protocol.py's WORKER_MESSAGES)
        self._handlers: dict[str, Handler] = {
            "worker_start": lambda message, body: self._worker_started(message),
            "worker_end": lambda message, body: self._worker_ended(message, body=body),
            "agent": lambda message, body: self._agent_message(message),
            "alert": lambda message, body: self._alert_message(message),
            "snapshot": lambda message, body: self._snapshots([message]),
            "snapshots": lambda message, body: self._snapshots(message["reports"]),
            "interact_request": lambda message, body: self._interact_request(message),
            "paused": lambda message, body: self.control.on_paused(message),
            "hit": lambda message, body: self.control.on_hit(message),
            "global_report": lambda message, body: self.control.on_global_report(message),
            "live_state": lambda message, body: self.control.on_live_state(message),
            "artifact": lambda message, body: log.error(  # taken in _on_message, answered
                "icedtea: run %s: an artifact without its connection; ignored", run_id),
        }

    def _welcome(self) -> dict:
        """What a worker process learns on connecting: operator names, live control."""
        return {"operators": {str(k): v for k, v in self.dag.names().items()},
                "control": self.control.sticky(), "g": self._g_theta(),
                "theta": getattr(self.dag.interesting, "id", None)}

    def _g_theta(self) -> list[int]:
        return [n.id for n in self.dag.g_theta]

    def announce_g(self) -> None:
        """G(θ) grew (a UDF column applied after θ, its spec pickled before): tell the
        worker processes already connected; later ones learn it from the welcome."""
        self.server.broadcast({"type": "g_theta", "operators": self._g_theta()})

    def start_agents(self, run: Any) -> None:
        for name, agent in self.agents.items():
            agent._send = self._sender(name)
            agent._alert = self._alerter(name)
            agent._keep = lambda table, rows: self._record(self.store.append_agent_rows,
                                                           table, rows)
            self._call(name, agent, "init", run)

    def agent(self, name: str) -> CoordinatorAgent | None:
        return self.agents.get(name)

    # --- messages -----------------------------------------------------------------
    def _on_message(self, message: dict, body: bytes, connection: Connection | None) -> None:
        """A worker's message (validated by the server, or a local record's event)."""
        if message["type"] == "artifact" and connection is not None:
            self.inbox.receive(message, body, connection)  # answered on its connection
            return
        handler = self._handlers.get(message["type"])
        if handler is None:
            log.error("icedtea: run %s: no handler for a worker's %r message; ignored",
                      self.run_id, message["type"])
            return
        try:
            handler(message, body)
        except OSError as exc:
            if not is_full(exc):
                raise
            self.store_is_full(exc)

    def _record(self, write: Callable[..., Any], *args: Any) -> None:
        """A write to the run store, unless it is full; a write refused for want of
        space stops the recording (``store_is_full``), any other failure is raised."""
        if self.store.full:
            return
        try:
            write(*args)
        except OSError as exc:
            if not is_full(exc):
                raise
            self.store_is_full(exc)

    def store_is_full(self, exc: OSError) -> None:
        """A write to the run store failed for want of space: recording stops (the job
        goes on), the panel is told once, the final manifest still gets written."""
        if not self.store.full.note(exc):
            return
        self.book.stopped = True
        warning = self.store.full.warning
        log.warning("icedtea: run %s: %s", self.run_id, warning)
        alert = {"source": "store", "level": "error", "operator": None, "message": warning,
                 "time": time.time()}
        with self._lock:
            self.alerts.append(alert)  # shown, not stored: the store is full
        self.emit("alert", alert)

    def _alert_message(self, message: dict) -> None:
        refused = reported_full(message["message"])
        if refused is not None:  # a worker's write to the store failed: said once
            self.store_is_full(refused)
            return
        worker = message["worker"]
        self.add_alert(dict(message, operator=self._name(worker["operator"]),
                            partition=worker["partition"]))

    def _snapshots(self, reports: list[dict]) -> None:
        """One worker's snapshot, or a task chain's (θ's last; each validated as a
        snapshot by the server)."""
        self.book.on_snapshots([(r, worker_key(r["worker"])) for r in reports])
        if reports:
            self.emit("snapshot", {"index": reports[-1]["index"]})

    def _interact_request(self, message: dict) -> None:
        """A worker's condition (--interact-when) held on a record: interact, unless
        recording stopped or the run is concluding; then the worker is told at once
        (``interact_refused``) and goes on."""
        origin = message["worker"]["task"]
        try:
            self.book.request(CONDITION, record=message.get("record"), origin=origin,
                              request=message["request"])
            return
        except (RecordingStopped, RunFinishing) as exc:
            reason = str(exc)
        log.info("icedtea: run %s: a worker's --interact-when hit: %s", self.run_id, reason)
        self.server.broadcast({"type": "interact_refused", "request": message["request"],
                               "origin": origin, "reason": reason})

    def _name(self, op_id: int) -> str:
        return self.dag.names().get(op_id, str(op_id))

    def _worker_started(self, message: dict) -> None:
        worker = message["worker"]
        if worker["operator"] not in self.dag.names():
            return
        self.dag.observe_stage(worker["stage"], worker["operator"])
        with self._lock:
            self.workers.setdefault(worker_key(worker), {"status": "running", **worker,
                                                         "started": message.get("started")})
        self.control.operators_changed()
        self.emit("worker", {"worker": worker, "status": "running"})

    def _worker_ended(self, message: dict, local: bool = False, body: bytes = b"") -> None:
        worker = message["worker"]
        if worker["operator"] not in self.dag.names():
            return
        if not local:
            self._record(self.store.write_worker, message)
            if message.get("log") is not None:
                self._record(write_replay_log, self.store.path, message, body)
        self.book.worker_ended(worker_key(worker))
        error = message.get("error")
        with self._ended:
            state = self.workers.setdefault(worker_key(worker), dict(worker))
            state.update(status=message["status"], records_in=message["records_in"],
                         records_out=message["records_out"], seconds=message.get("seconds"),
                         bytes_in=message.get("bytes_in"), ended=message.get("ended"))
            if error and self.first_error is None:
                self.first_error = dict(error, operator=self._name(error["operator"]),
                                        stage=worker["stage"], attempt=worker["attempt"])
            self._ended.notify_all()
        self.control.task_ended()
        self.emit("worker", {"worker": worker, "status": message["status"]})

    def _agent_message(self, message: dict) -> None:
        name, worker = message["agent"], message["worker"]
        forward = message.get("forward")
        if forward:
            target = self.dag.node(forward["operator"]).id if forward.get("operator") else None
            self.server.broadcast({"type": "to_agent", "agent": name, "operator": target,
                                   "partition": forward.get("partition"),
                                   "payload": message.get("payload")})
            return
        agent = self.agents.get(name)
        if agent is not None:
            named = dict(worker, operator_name=self._name(worker["operator"]))
            self._call(name, agent, "receive_message", named, message.get("payload"))

    def _sender(self, name: str) -> Callable[..., int]:
        def send(payload: Any, operator: str | None, partition: int | None) -> int:
            target = self.dag.node(operator).id if operator is not None else None
            return self.server.broadcast({"type": "to_agent", "agent": name, "operator": target,
                                          "partition": partition, "payload": payload})
        return send

    def _alerter(self, name: str) -> Callable[[dict], None]:
        def alert(fields: dict) -> None:
            self.add_alert({**fields, "source": name, "message": str(fields["message"])})
        return alert

    def _call(self, name: str, agent: CoordinatorAgent, hook: str, *args: Any) -> None:
        try:
            getattr(agent, hook)(*args)
        except Exception as exc:
            self.add_alert({"source": name, "level": "error", "operator": None,
                            "message": f"agent {name!r} failed in its coordinator {hook}: "
                                       f"{type(exc).__name__}: {exc}",
                            "traceback": traceback.format_exc()})

    def add_alert(self, alert: dict) -> None:
        alert = {k: v for k, v in alert.items() if k != "type"}
        alert.setdefault("time", time.time())
        with self._lock:
            self.alerts.append(alert)
        self._record(self.store.append_alert, alert)
        self.emit("alert", alert)

    # --- the end ------------------------------------------------------------------
    def _running_theta_workers(self) -> set:
        theta = self.dag.interesting
        if theta is None:
            return set()
        with self._lock:
            return {key for key, state in self.workers.items()
                    if key[0] == theta.id and state["status"] == "running"}

    def running_tasks(self, op: int | None = None) -> set[int]:
        """The task attempts with a running worker (of operator ``op``, or any)."""
        with self._lock:
            return {state["task"] for key, state in self.workers.items()
                    if state["status"] == "running" and (op is None or key[0] == op)}

    def interact(self, trigger: str = MANUAL) -> int:
        try:
            return self.book.request(trigger)
        except RecordingStopped:
            raise RecordingStopped(f"no interaction: {self.store.full.warning}") from None

    def _interaction_changed(self, interaction: dict) -> None:
        """An interaction was requested, or its snapshot completed: tell the run's views."""
        self.emit("interaction", {"index": interaction["index"], "interaction": interaction})

    def worker_states(self) -> list[tuple[tuple, dict]]:
        """Copies of every worker's lifecycle state, keyed like the progress agent's."""
        with self._lock:
            return [(key, dict(state)) for key, state in self.workers.items()]

    def discard(self, killed: list[dict]) -> None:
        """Spark killed these task attempts (``operator, stage, partition, attempt,
        task``) because another attempt of their task won: they become ``killed`` and
        count nothing, and their rows in the store say so."""
        for attempt in killed:
            key = worker_key(attempt)
            with self._lock:
                state = self.workers.get(key)
                if state is None:
                    continue
                state["status"] = "killed"
                row = dict(state)
            self.emit("worker", {"worker": self._write_state(row), "status": "killed"})

    def _write_state(self, state: dict) -> dict:
        """Write a worker's lifecycle ``state`` as its row of the store's worker table;
        returns its identity fields."""
        worker = {name: state[name] for name in WORKER_FIELDS}
        self._record(self.store.write_worker, {**state, "worker": worker})
        return worker

    def finish(self, timeout: float = 3.0,
               succeeded: Callable[[list[tuple]], set[tuple]] | None = None) -> None:
        """Refuse new interactions, ask per-call workers to flush, wait for running
        workers, take local records; the workers that never reported are ``lost``, in
        memory and in the store's worker table. A worker whose Spark task ``succeeded``
        (keys of the workers still running → those whose task attempt Spark recorded as
        a success) sent its end before its task ended: it is waited for up to
        ``LATE_END`` seconds more (a busy kernel reads it late; lost, its replay log
        would be gone)."""
        self.book.close()  # what is listed from now on is what the store keeps
        if self.periodic is not None:
            self.periodic.stop()
        self.server.broadcast({"type": "flush"})
        self._wait_for_running(timeout)
        late = self._running_keys()
        if late and succeeded is not None:
            coming = succeeded(late)
            if coming:
                self._wait_for_running(LATE_END, coming)
        with self._ended:
            for state in self.workers.values():
                if state["status"] == "running":
                    state["status"] = "lost"  # killed with its task, or never reported
        self._take_local_records()
        self._record_lost()
        for path in self.inbox.close():
            self.add_alert({"source": "artifacts", "level": "error", "operator": None,
                            "message": f"{os.path.relpath(path, self.store.path)} never "
                                       "arrived whole: its worker stopped while sending it"})
        for name, agent in self.agents.items():
            self._call(name, agent, "finish")
        self.book.save()
        self.server.close()

    def _running_keys(self) -> list[tuple]:
        with self._ended:
            return [key for key, w in self.workers.items() if w["status"] == "running"]

    def _wait_for_running(self, timeout: float, keys: set[tuple] | None = None) -> None:
        """Until the workers (``keys``, else all) have ended, or ``timeout`` seconds."""
        deadline = time.monotonic() + timeout
        with self._ended:
            while any(w["status"] == "running" for key, w in self.workers.items()
                      if keys is None or key in keys):
                left = deadline - time.monotonic()
                if left <= 0:
                    return
                self._ended.wait(left)

    def _record_lost(self) -> None:
        """A row with status ``lost`` for each worker that reported neither its end nor a
        local record, unless its own row arrived meanwhile: a run read from the store
        counts it as the live run does."""
        with self._lock:
            lost = [dict(state) for state in self.workers.values() if state["status"] == "lost"]
        for state in lost:
            if not os.path.exists(layout.worker_path(self.store.path, state)):
                self._write_state(state)

    def _take_local_records(self) -> None:
        reasons: list[str] = []
        for event in self.store.local_events():
            kind = event.get("type")
            if kind == "local":
                reasons.append(event.get("reason", ""))
            elif kind in ("agent", "alert"):
                self._on_message(event, b"", None)
        for row in self.store.worker_table().to_pylist():
            if row["local"]:
                worker = {k: row[k] for k in ("operator", "partition", "stage", "attempt", "task")}
                self._worker_started({"worker": worker, "started": row["started"]})
                error = json.loads(row["error"]) if row["error"] else None
                self._worker_ended({**row, "worker": worker, "error": error}, local=True)
        self.local_reasons = sorted(set(reasons))
