"""The operator's function as the agents see it process records (``Agent.observe_outputs``,
``Agent.record_failed``), for per-record operators.

Used only when an agent overrides one of those hooks: one Python call per record more,
timing it and listing its outputs. With ``record_failed`` a map becomes a flatMap of one
output or none, so that a quarantined record gives no output (as ``error_guard.py``
does for ``--on-error pause``); a filter drops it; a flatMap's or an ``Operator``'s
gives nothing.
"""
from __future__ import annotations

from collections.abc import Callable
from time import perf_counter
from typing import Any

from .error_guard import GuardedOperator


def observe(agents: Any, kind: str, f: Callable) -> tuple[str, Callable]:
    """``kind``, ``f`` for the host's loop with ``agents`` (the ``AgentPlugin``) told of
    each record's outputs and time, and asked about each record that raises."""
    if kind == "map":
        return ("flatMap" if agents.failure_handlers else "map"), _map(agents, f)
    if kind == "filter":
        return kind, _filter(agents, f)
    return kind, _flat_map(agents, f)


def _map(agents: Any, f: Callable) -> Callable:
    tolerant = bool(agents.failure_handlers)

    def call(record: Any) -> Any:
        started = perf_counter()
        try:
            out = f(record)
        except Exception as exc:
            if agents.on_failure(record, exc):
                return ()
            raise
        agents.on_outputs(record, [out], perf_counter() - started)
        return (out,) if tolerant else out
    return call


def _filter(agents: Any, f: Callable) -> Callable:
    def call(record: Any) -> bool:
        started = perf_counter()
        try:
            keep = bool(f(record))
        except Exception as exc:
            if agents.on_failure(record, exc):
                return False
            raise
        agents.on_outputs(record, [record] if keep else [], perf_counter() - started)
        return keep
    return call


def _flat_map(agents: Any, f: Callable) -> Callable:
    def call(record: Any) -> list:
        started = perf_counter()
        try:
            outs = f(record)
            outs = [] if outs is None else list(outs)
        except Exception as exc:
            if agents.on_failure(record, exc):
                return []
            raise
        agents.on_outputs(record, outs, perf_counter() - started)
        return outs
    return call


def observe_operator(agents: Any, op: Any) -> GuardedOperator:
    """An ``Operator`` whose ``process`` the agents observe (``observe``)."""
    return GuardedOperator(op, _flat_map(agents, op.process))
