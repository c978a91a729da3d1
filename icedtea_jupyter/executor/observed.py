"""The operator's function as the agents see it process records (``Agent.observe_outputs``,
``Agent.record_failed``), for per-record operators.

Used only when an agent overrides one of those hooks: one Python call per record more,
timing it and listing its outputs. With ``record_failed`` a map becomes a flatMap of one
output or none, so that a quarantined record gives no output (as ``error_guard.py``
does for ``--on-error pause``); a filter drops it; a flatMap's or an ``Operator``'s
gives nothing.

With ``record_failed`` alone (``--tolerate``), a map, filter or ``Operator`` that runs
in blocks is not wrapped: its C loop is resumed after a record that raised
(``resumed.py``); the wrappers here serve the per-record loop and flatMaps.
"""
from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from itertools import chain, compress, tee
from operator import call
from random import random
from time import perf_counter
from typing import Any

from .error_guard import GuardedOperator

SAMPLE = 64  # a sampling observer sees one record in this many at most (``SampledTiming``)


def observe(agents: Any, kind: str, f: Callable) -> tuple[str, Callable]:
    """``kind``, ``f`` for the host's loop with ``agents`` (the ``AgentPlugin``) told of
    each record's outputs and time, and asked about each record that raises."""
    if not agents.output_observers:  # failures only (--tolerate): no timing, no lists
        return guarded(agents.on_failure, kind, f)
    if kind == "map":
        return ("flatMap" if agents.failure_handlers else "map"), _map(agents, f)
    if kind == "filter":
        return kind, _filter(agents, f)
    return kind, _flat_map(agents, f)


def guarded(on_failure: Callable[[Any, Exception], bool], kind: str,
            f: Callable) -> tuple[str, Callable]:
    """``f`` whose failing records ``on_failure`` may take (skipped): one frame a record."""
    if kind == "map":
        def one(record: Any) -> tuple:
            try:
                return (f(record),)
            except Exception as exc:
                if on_failure(record, exc):
                    return ()
                raise
        return "flatMap", one
    if kind == "filter":
        def keep(record: Any) -> Any:
            try:
                return f(record)
            except Exception as exc:
                if on_failure(record, exc):
                    return False
                raise
        return kind, keep

    def outputs(record: Any) -> list:  # a flatMap's outputs may raise as they are made
        try:
            out = f(record)
            return [] if out is None else list(out)
        except Exception as exc:
            if on_failure(record, exc):
                return []
            raise
    return kind, outputs


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
        try:  # the one observer's hook itself (several: on_outputs isolates them)
            agents.notify(record, [out], perf_counter() - started)
        except Exception as exc:
            agents.outputs_failed(exc)
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
        try:  # the one observer's hook itself (several: on_outputs isolates them)
            agents.notify(record, [record] if keep else [], perf_counter() - started)
        except Exception as exc:
            agents.outputs_failed(exc)
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
        try:  # the one observer's hook itself (several: on_outputs isolates them)
            agents.notify(record, outs, perf_counter() - started)
        except Exception as exc:
            agents.outputs_failed(exc)
        return outs
    return call


def observe_operator(agents: Any, op: Any) -> GuardedOperator:
    """An ``Operator`` whose ``process`` the agents observe (``observe``)."""
    _, process = observe(agents, "flatMap", op.process)
    return GuardedOperator(op, process)


def guarded_operator(on_failure: Callable[[Any, Exception], bool], op: Any) -> GuardedOperator:
    """An ``Operator`` whose failing records ``on_failure`` may take, record by record."""
    _, process = guarded(on_failure, "flatMap", op.process)
    return GuardedOperator(op, process)


class SampledTiming:
    """A map's, filter's or flatMap's function with the agents told of one record in
    N <= ``SAMPLE`` (timed by ``observe``'s wrapper), the others run by the plain
    function: in blocks the host calls ``operator.call`` on the next function of
    ``functions`` and the record (C calls only). The one observer
    (``Agent.outputs_sample``) says, after each N records (64 when N is 1), the N of the
    next ones; the one shown among them is drawn at random, so that every record may be."""

    def __init__(self, agents: Any, kind: str, f: Callable) -> None:
        self.user = f
        self.kind, self._timed = observe(agents, kind, f)
        self.sample_size = agents.hook(agents.output_observers[0], "outputs_sample")
        self._plain = (f,) * SAMPLE
        self._every = (self._timed,) * SAMPLE
        self._groups: dict[int, tuple] = {}  # N -> the N groups of N (one per pick)
        self.functions = chain.from_iterable(iter(self._pattern, None))

    def _pattern(self) -> tuple:
        try:
            n = min(max(int(self.sample_size()), 1), SAMPLE)
        except Exception:  # the agent's own failure: time every record (it is told)
            n = 1
        if n == 1:
            return self._every
        groups = self._groups.get(n)
        if groups is None:  # built once per N: a pick costs a draw and an index
            groups = self._groups[n] = tuple(
                self._plain[:shown] + (self._timed,) + self._plain[shown + 1:n]
                for shown in range(n))
        return groups[int(random() * n)]

    def outputs(self, inputs: Iterable) -> Iterator:
        """The host's outputs of ``inputs`` (a filter's inputs pass through ``tee``)."""
        if self.kind == "map":
            return map(call, self.functions, inputs)
        if self.kind == "flatMap":
            return chain.from_iterable(map(call, self.functions, inputs))
        records, tested = tee(inputs)
        return compress(records, map(call, self.functions, tested))

    def operator_outputs(self, op: Any, inputs: Iterable) -> Iterator:
        """``Operator.__call__`` of ``op`` (``kind`` flatMap, ``f`` its ``process``),
        each record's ``process`` the next of ``functions``."""
        op.open()
        for process, record in zip(self.functions, inputs):
            outputs = process(record)
            if outputs is not None:
                yield from outputs
        final = op.close()
        if final is not None:
            yield from final
