"""The checkpointing phase: measure every interaction, plan, take the planned checkpoints.

One replay pass over the recorded logs measures, for each interaction, the time to
replay up to it from the previous one, the bytes its checkpoint would take and the time
to restore it (IcedTea §6's cost model, measured rather than estimated). The chosen
plan (``none``, ``all``, ``online`` or ``offline`` under τ) then decides where a second
pass writes checkpoints. ``checkpoints/plan.json`` keeps the plan and the costs.
"""
from __future__ import annotations

import pickle
from time import perf_counter
from typing import Any

from ..executor.state import encode_state
from .file import CheckpointStore, saved_state
from .planner import InteractionCost, make_plan

HEADROOM = 0.8  # plan for 80% of τ: garbage collection and a busy machine take the rest


def measure(debugger: Any, shown: list | None = None) -> list[InteractionCost]:
    """The cost of every interaction, from one replay pass over the run; ``shown``
    collects the seconds each jump spends showing its states (the same from any base)."""
    cursors = {p: debugger._fresh_cursor(p) for p in debugger.logs.partitions}
    costs = [InteractionCost(0, 0, 0.0, 0.0)]
    for index in range(1, debugger.logs.interactions):
        start = perf_counter()
        for cursor in cursors.values():
            debugger._advance(cursor, index)
        seconds = perf_counter() - start
        if shown is not None:
            start = perf_counter()
            [encode_state(w.state()) for c in cursors.values() for _, w in c.items()]
            shown.append(perf_counter() - start)
        data = [pickle.dumps(saved_state(w.host), 5) for c in cursors.values() if _restorable(c)
                for w in c.workers]
        start = perf_counter()
        for blob in data:
            pickle.loads(blob)
        costs.append(InteractionCost(index, sum(map(len, data)), seconds,
                                     perf_counter() - start))
    for cursor in cursors.values():
        cursor.abandon()
    return costs


def take(debugger: Any, store: CheckpointStore, plan_name: str, tau: float) -> dict:
    """Measure, plan and write the plan's checkpoints; returns the plan. The replay
    budget is ``tau`` less headroom and the time a jump takes to show its states."""
    shown: list[float] = []
    costs = measure(debugger, shown)
    budget = max(tau * HEADROOM - max(shown, default=0.0), tau * 0.1)
    plan = make_plan(plan_name, costs, budget)
    store.clear()
    written = _write(debugger, store, sorted(plan.checkpoints))
    summary = {"plan": plan_name, "tau": tau, "planned_for": budget,
               "checkpoints": sorted(plan.checkpoints),
               "bytes_written": written, "model_cost": plan.cost(costs),
               "max_jump_seconds": plan.max_jump_seconds(costs),
               "costs": [vars(c) for c in costs]}
    store.save_plan(summary)
    return summary


def _write(debugger: Any, store: CheckpointStore, indices: list[int]) -> int:
    cursors = {p: debugger._fresh_cursor(p) for p in debugger.logs.partitions}
    written = 0
    for index in indices:
        for partition, cursor in cursors.items():
            debugger._advance(cursor, index)
            if not _restorable(cursor):
                continue
            for i, path in enumerate(cursor.paths):
                for name, worker in zip(path.names, path.workers):
                    extra = {"processed": worker.processed, "position": path.position,
                             "results": worker.results.position, "ended": path.ended}
                    written += store.write(index, partition,
                                           debugger.logs.key(name, partition, i),
                                           saved_state(worker.host), extra)
    for cursor in cursors.values():
        cursor.abandon()
    return written


def _restorable(cursor: Any) -> bool:
    return all(w.restorable for w in cursor.workers)
