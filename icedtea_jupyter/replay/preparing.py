"""The root replay process and its checkpointing pass: fork checkpoints placed by the planner.

The root loads the run, puts θ's tree at I0 and parks a fork there. On ``prepare`` it
replays the run once, interaction after interaction, timing each, and parks a fork
whenever the replay since the last one reaches a quarter of the budget: candidates,
dense enough for any plan. At the end it measures the memory each parked fork holds
alone, and the offline planner (``checkpoints/planner.py``, IcedTea §6.2, with a fork's
memory as the checkpoint cost and the fork itself as the restore) keeps the cheapest set
under τ within the memory cap; the kernel closes the others.
"""
from __future__ import annotations

import json
import os
import time
from time import perf_counter
from typing import Any

from ..checkpoints.planner import InfeasiblePlan, InteractionCost, make_plan
from .process import Connection, fork_child, hand_over, parked, private_bytes, reap, serve
from .wire import WireError

HEADROOM = 0.8  # plan for 80% of τ: a busy machine and garbage collection take the rest
FIXED_SECONDS = 0.05  # a jump's round trips between the kernel and the processes
CANDIDATES_PER_BUDGET = 4  # candidate forks per budget of replay
MAX_CANDIDATES = 96  # beyond this the candidates are thinned (every other one closed)
PROGRESS_PERIOD = 0.25


class StoredRun:
    """A run as the replay process reads it from its store: what ``RunLogs`` and
    ``ReplayInputs`` ask of a ``Run``, without the session (nor Spark)."""

    def __init__(self, path: str) -> None:
        from ..dag import Dag
        from ..store.run_store import RunStore

        self.store = RunStore.open(path)
        self.path = self.store.path
        self.manifest = self.store.read_manifest()
        self.id = str(self.manifest.get("id"))  # as messages showed it
        self.dag = Dag.from_json(self.manifest.get("dag", {}))

    def history(self) -> Any:
        from ..snapshots.history import History

        return History.from_store(self.store, self.dag, self.store.worker_table().to_pylist())

    def upstream_rdd(self, operator: int) -> None:
        """No pipeline to regenerate inputs with: the kernel staged them."""
        return None

    def recorded_inputs(self, partition: int) -> list:
        records = self.store.recorded_inputs(self.dag.require_interesting().id, partition)
        if records is None:
            raise LookupError(f"no recorded inputs on partition {partition}")
        return records


def engine_for_run(run_path: str) -> Any:
    """The engine of the run stored at ``run_path``, its inputs loaded (every failure to
    load shows now, not in the middle of the pass). No Spark: inputs that were not
    recorded were staged in the store by the kernel."""
    from .debugger import Debugger
    from .inputs import ReplayInputs
    from .logs import RunLogs

    run = StoredRun(run_path)
    logs = RunLogs(run)
    inputs = ReplayInputs(run, logs)
    for partition in logs.partitions:
        inputs.records(partition)
    return Debugger(logs, inputs, threaded=False)


class PhaseCancelled(Exception):
    """The kernel closed the root, or asked it to exit, during the pass."""


class Root:
    def __init__(self, conn: Connection, engine: Any) -> None:
        self.conn = conn
        self.engine = engine
        self.forks: dict[int, int] = {}  # interaction -> pid of its parked fork
        self.fork_seconds = 0.0
        self.prepared: dict | None = None

    @classmethod
    def start(cls, conn: Connection, engine: Any) -> Root:
        """The root with its engine at I0, parked there once."""
        engine.jump(0)
        root = cls(conn, engine)
        root.park(0)
        return root

    def serve(self) -> None:
        serve(self.conn, {"info": self.info, "prepare": self.prepare})

    def info(self, _: dict) -> dict:
        engine = self.engine
        partitions = {name: engine.partitions(name) for name in engine.chain}
        failure = engine.logs.failure
        return {"chain": engine.chain, "partitions": partitions, "pid": os.getpid(),
                "interactions": engine.logs.interactions,
                "failure": None if failure is None else failure.before,
                "no_failure": engine.logs.no_failure}

    # --- forks -----------------------------------------------------------------------
    def park(self, index: int) -> None:
        start = perf_counter()
        pid, theirs = fork_child(self.conn, parked(self.engine, index))
        self.fork_seconds = max(self.fork_seconds, perf_counter() - start)
        self.forks[index] = pid
        hand_over(self.conn, {"event": "parked", "index": index}, None, pid, theirs)

    def drop(self, indices: list[int]) -> None:
        for index in indices:
            self.forks.pop(index, None)
        self.conn.send({"event": "dropped", "indices": indices})

    # --- the pass ----------------------------------------------------------------------
    def prepare(self, request: dict) -> dict:
        if self.prepared is not None:
            return self.prepared
        tau, cap = float(request["tau"]), int(request["memory_cap"])
        shown = self._show_seconds()
        budget = max(tau * HEADROOM - shown - FIXED_SECONDS, tau * 0.1)
        started = perf_counter()
        seconds = self._replay_all(budget / CANDIDATES_PER_BUDGET, cap)
        shown = max(shown, self._show_seconds())
        budget = max(tau * HEADROOM - shown - FIXED_SECONDS - self.fork_seconds, tau * 0.1)
        self.prepared = self._plan(seconds, tau, budget, cap)
        self.prepared["seconds"] = perf_counter() - started
        return self.prepared

    def _replay_all(self, gap: float, cap: int) -> list[float]:
        """Replay I1..In once, parking candidate forks; the seconds of each step."""
        engine, n = self.engine, self.engine.logs.interactions
        seconds, since, reported = [0.0], 0.0, time.monotonic()
        self.conn.send({"event": "progress", "done": 0, "of": n - 1})
        for index in range(1, n):
            self._check_kernel()
            start = perf_counter()
            engine.forward(index, show=False)
            seconds.append(perf_counter() - start)
            since += seconds[-1]
            if since >= gap:
                self.park(index)
                since = 0.0
                if len(self.forks) > MAX_CANDIDATES or self._held() > cap:
                    gap *= 2
                    self.drop(sorted(self.forks)[1::2])
            if time.monotonic() - reported > PROGRESS_PERIOD:
                reported = time.monotonic()
                self.conn.send({"event": "progress", "done": index, "of": n - 1})
            reap()
        self.conn.send({"event": "progress", "done": n - 1, "of": n - 1})
        return seconds

    def _plan(self, seconds: list[float], tau: float, budget: float, cap: int) -> dict:
        """Keep the cheapest candidates under ``budget`` within ``cap``; say what it costs."""
        held = {i: max(private_bytes(pid), 1) for i, pid in self.forks.items()}
        history = [InteractionCost(i, held.get(i, 0), s,
                                   self.fork_seconds if i in held else tau * 10)
                   for i, s in enumerate(seconds)]
        planned_for, keep, met = budget, set(held), True
        while True:
            try:
                plan = make_plan("offline", history, planned_for)
            except InfeasiblePlan:  # a single interaction takes longer than the budget
                met = False
                break
            chosen = set(plan.checkpoints) | {0}
            if sum(held[i] for i in chosen) <= cap or planned_for > 3600:
                keep = chosen
                met = met and planned_for == budget
                break
            met, planned_for = False, planned_for * 1.25
        worst = max(sum(seconds[max(c for c in keep if c <= k) + 1:k + 1])
                    for k in range(len(seconds)))
        dropped = sorted(set(held) - keep)
        if dropped:
            self.drop(dropped)
        return {"forks": sorted(keep), "memory_bytes": sum(held[i] for i in keep),
                "memory_cap": cap, "tau": tau, "planned_for": planned_for, "tau_met": met,
                "predicted_worst_jump": worst + self.fork_seconds + FIXED_SECONDS,
                "replay_seconds": sum(seconds), "fork_seconds": self.fork_seconds,
                "candidates": len(held)}

    def _held(self) -> int:
        return sum(private_bytes(pid) for pid in self.forks.values())

    def _show_seconds(self) -> float:
        """What a jump spends encoding every worker's state and sending it."""
        from ..executor.state import encode_state

        start = perf_counter()
        states = [encode_state(worker.state()) for cursor in self._all_cursors()
                  for _, worker in cursor.items()]
        json.dumps(states)
        return 2 * (perf_counter() - start)  # the kernel decodes it again

    def _all_cursors(self) -> list:
        engine = self.engine
        return list(engine.cursors.values()) + [c for stage in engine.fed
                                                 for c in stage.cursors.values()]

    def _check_kernel(self) -> None:
        """Between interactions: the kernel may have closed the root or asked it to exit."""
        if not self.conn.readable(0):
            return
        try:
            self.conn.reader._receive()
            while self.conn.reader.pending():
                request, _ = self.conn.reader.read()
                if request.get("op") == "exit":
                    raise PhaseCancelled("the kernel asked the replay process to exit")
                self.conn.send({"id": request.get("id"), "error": {
                    "type": "RuntimeError",
                    "message": "the replay process is preparing checkpoints; ask again later"}})
        except WireError:
            raise PhaseCancelled("the kernel closed the replay process") from None
