"""Fed workers: the workers of G(θ) outside θ's Python worker, fed what θ's cursors emit.

An aggregation's reduce side (after the shuffle) gets the combiners the map sides
emitted, in the order the shuffle delivered them in the run (``OriginOrder``), and so do
the operators after a user's ``partitionBy`` of θ's outputs (``ShuffleRuns``); a join's
reduce side gets its inputs' combiners in the logged order (``JoinFeed``); the operators after a union
get one path's outputs on one partition (``StraightFeed``); a DataFrame operator in a
worker of its own gets its regenerated inputs up to its logged counts at a jump, then as
θ's steps complete them (``OwnCounts``).
They process what arrives at once — a step's scope runs to its end, across the shuffle
or the union — and end when their sources have ended and everything has arrived.
"""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..executor.shuffle_read import SHUFFLE_RUNS
from .cursor import PartitionCursor
from .order import JoinFeed, OriginOrder, StraightFeed
from .paths import PartitionPaths
from .regenerated_feed import OwnCounts, own_target, release_for
from .shuffle_feed import ShuffleRuns
from .stages import Fed


class FedWorkers:
    """One chain of fed workers (``logs.Fed``) on each of its partitions: a cursor per
    partition, and the source that hands it what θ's cursors have emitted."""

    def __init__(self, partitions: list[int], make_cursor: Callable[[int], PartitionCursor],
                 source_of: Callable[[int], Any]) -> None:
        self.cursors = {q: make_cursor(q) for q in partitions}
        self.sources = {q: source_of(q) for q in partitions}

    def feed(self, upstream: dict[int, PartitionPaths]) -> list[int]:
        """Hand each partition what has arrived and process it; returns those changed."""
        changed = []
        for q, cursor in self.cursors.items():
            source = self.sources[q]
            arrived = source.next_records(upstream)
            if arrived:
                cursor.inputs.extend(arrived)
                cursor.advance_to(len(cursor.inputs))
                changed.append(q)
            if not cursor.ended and source.complete(upstream):
                cursor.finish()
                changed.append(q)
        return changed

    def at(self, index: int) -> None:
        """The interaction the debugger goes to (the sources that feed by the run's own
        counts, ``OwnCounts``, need it)."""
        for source in self.sources.values():
            if isinstance(source, OwnCounts):
                source.at(index)

    def releases(self) -> dict[str, set[str]]:
        """How steps move each DataFrame operator fed by its own regenerated inputs
        (``Release.how``), by the operator's name."""
        hows: dict[str, set[str]] = {}
        for source in self.sources.values():
            if isinstance(source, OwnCounts):
                hows.setdefault(source.name, set()).add(source.release.how)
        return hows

    def abandon(self) -> None:
        for cursor in self.cursors.values():
            cursor.abandon()


def source_of(fed: Fed, q: int, logs: Any, inputs: Any) -> Any:
    """What hands partition ``q`` of ``fed`` its records (``Fed.sources``): the logged
    order of a shuffle's reads, a join's combiners, a path's outputs after a union, or
    a DataFrame operator's regenerated inputs."""
    kind, *where = fed.sources[q]
    if kind == "origins":
        log = logs.log(where[1], q)
        if log is not None and log.kind == SHUFFLE_RUNS:  # a partitionBy's reduce side
            return ShuffleRuns(log, where[0], q, logs.operator(where[1])().route)
        return OriginOrder(getattr(log, "order", None), where[0],
                           getattr(log, "hash_probe", None))
    if kind == "regenerated":
        name = where[0]
        return OwnCounts(name, q, lambda index: own_target(logs, index, name, q),
                         lambda: inputs.regenerated(name, q),
                         lambda: release_for(logs, inputs, name, q))
    if kind == "join":
        reader = where[0]
        log = logs.log(reader, q)
        return JoinFeed(getattr(log, "order", None), fed.sources[q],
                        logs.operator(reader)().combine.in_memory(),
                        lambda m: inputs.side(reader, m), getattr(log, "hash_probe", None))
    return StraightFeed(where[0], where[1])

