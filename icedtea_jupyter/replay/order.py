"""Order enforcers: replay consumes what the run logged, in the logged order.

``ResultFeed`` hands ``log_result`` calls their logged values one after the other;
``OutputCheck`` compares each replayed input's number of outputs with the log and
reports the first divergence (an operator that is not deterministic).
"""
from __future__ import annotations

from typing import Any

import numpy as np

from ..executor.merge_order import POSITION, SPILLED, bucket, spilled_order
from ..executor.state import decode
from .shuffle_feed import HashedAsWorkers
from .worker import ReplayError


class ResultFeed:
    """The ``log_result`` values of one worker, in call order."""

    def __init__(self, name: str, partition: int, results: list, position: int = 0) -> None:
        self.name, self.partition = name, partition
        self.results = results
        self.position = position

    def next_result(self) -> Any:
        if self.position >= len(self.results):
            raise ReplayError(
                f"{self.name!r} on partition {self.partition} calls "
                f"log_result more often in replay than in the run ({len(self.results)} "
                "calls were logged): its control flow is not deterministic")
        value = decode(self.results[self.position])
        self.position += 1
        return value


class OutputCheck:
    """Outputs per input of one worker against its replay log: per input, or (a host
    that ran in blocks) the outputs between two logged block boundaries."""

    def __init__(self, name: str, logged: Any, boundaries: Any = None) -> None:
        self.name = name
        self.logged = logged  # numpy array of outputs per input, or None
        self.boundaries = boundaries  # (inputs, outputs) rows, or None
        self.divergence: str | None = None
        self._next = -1  # in blocks: the next input index expected
        self._total = 0  # outputs replayed since the first checked input
        self._origin: tuple[int, int, int] | None = None  # (inputs, replayed, logged)

    def check(self, index: int, outputs: int) -> None:
        if self.boundaries is not None:
            self.check_many(index, np.array([outputs]))
            return
        logged = self.logged
        if self.divergence is not None or logged is None or index >= len(logged):
            return
        if int(logged[index]) != outputs:
            self.divergence = (f"{self.name!r} emitted {outputs} record(s) for its input "
                               f"#{index} in replay and {int(logged[index])} in the run")

    def check_many(self, start: int, counts: np.ndarray) -> None:
        """``check`` for inputs ``start``, ``start + 1``, … with ``counts`` outputs each."""
        if self.boundaries is not None:
            self._check_blocks(start, np.asarray(counts, dtype=np.int64))
            return
        logged = self.logged
        if self.divergence is not None or logged is None or start >= len(logged):
            return
        end = min(len(logged), start + len(counts))
        differ = np.flatnonzero(np.asarray(logged[start:end]) != counts[:end - start])
        if len(differ):
            self.check(start + int(differ[0]), int(counts[differ[0]]))

    def _check_blocks(self, start: int, counts: np.ndarray) -> None:
        if self.divergence is not None or not len(counts):
            return
        if start != self._next:  # a cursor restored mid-way: compare from the next boundary
            self._origin, self._total = None, 0
        inputs = self.boundaries[:, 0]
        first = np.searchsorted(inputs, start, "left" if self._origin is None else "right")
        last = np.searchsorted(inputs, start + len(counts), "right")
        totals = self._total + np.concatenate([[0], np.cumsum(counts)])
        for n_in, logged in self.boundaries[first:last].tolist():
            replayed = int(totals[n_in - start])
            if self._origin is not None and \
                    replayed - self._origin[1] != logged - self._origin[2]:
                self.divergence = (
                    f"{self.name!r} emitted {replayed - self._origin[1]} record(s) for its "
                    f"inputs #{self._origin[0]}–#{n_in - 1} in replay and "
                    f"{logged - self._origin[2]} in the run")
                return
            self._origin = (n_in, replayed, logged)
        self._total, self._next = int(totals[-1]), start + len(counts)


class OriginOrder:
    """The inputs of an aggregation's reduce side, in the shuffle's logged order:
    (map partition, position) pairs into what the map sides — the ``leaf`` worker of
    θ's cursor on each partition — emitted. ``next_records`` hands over the longest next
    run whose records have been emitted, and stops at the first that has not: nothing
    is reordered. A map partition whose merger spilled in the run (its positions marked,
    ``merge_order``) gave its combiners bucket by bucket: replay, merging in memory,
    puts them in that order once the partition has ended (``hashing`` the keys as the
    run's workers did: ``HashedAsWorkers`` of ``merge_order.bucket``)."""

    def __init__(self, origins: Any, leaf: str, probe: int | None = None) -> None:
        pairs = np.zeros((0, 2), np.int64) if origins is None else \
            np.asarray(origins, np.int64).reshape(-1, 2)
        marked = (pairs[:, 1] & SPILLED) != 0
        self.spilled = set(pairs[marked, 0].tolist())
        self.origins = np.stack([pairs[:, 0], pairs[:, 1] & POSITION], 1).tolist()
        self.leaf = leaf
        self.position = 0
        self.hashing = HashedAsWorkers(bucket, probe)
        self.reordered: dict[int, list] = {}

    def emitted(self, m: int, cursors: dict) -> Any:
        """What map partition ``m`` has emitted so far."""
        return cursors[m].sinks[self.leaf] if m in cursors else ()

    def in_run_order(self, m: int, cursors: dict) -> Any:
        """What map partition ``m`` has emitted, in the order it did in the run."""
        if m not in self.spilled:
            return self.emitted(m, cursors)
        if m not in self.reordered:
            if m not in cursors or not cursors[m].ended:
                return ()
            emitted = list(self.emitted(m, cursors))
            order = spilled_order(self.hashing.routes([r[0] for r in emitted]))
            self.reordered[m] = [emitted[i] for i in order]
        return self.reordered[m]

    def next_records(self, cursors: dict) -> list:
        records = []
        while self.position < len(self.origins):
            m, j = self.origins[self.position]
            emitted = self.in_run_order(m, cursors)
            if j >= len(emitted):
                break
            records.append(emitted[j])
            self.position += 1
        return records

    def complete(self, cursors: dict) -> bool:
        return self.position >= len(self.origins) and all(c.ended for c in cursors.values())


class JoinFeed(OriginOrder):
    """The combiners a join's or cogroup's reduce side read, in the logged order of their
    origins (map partition of the inputs' union, position). An input of θ's tree gives
    its combiners once θ's partition has ended (the map side combines a whole
    partition), rebuilt with the run's ``combine`` (merging in memory) from what the
    leaf emitted; any other input's come from ``side(map partition)`` (its map side,
    regenerated)."""

    def __init__(self, origins: Any, source: tuple, combine: Any, side: Any,
                 probe: int | None = None) -> None:
        super().__init__(origins, "", probe)
        _, _, self.sides, self.offsets = source
        self.combine, self.side = combine, side
        self.built: dict[int, list] = {}

    def emitted(self, m: int, cursors: dict) -> Any:
        if m not in self.built:
            index = max(i for i, start in enumerate(self.offsets) if start <= m)
            leaf = self.sides[index]
            if leaf is None:
                self.built[m] = list(self.side(m))
            else:
                cursor = cursors.get(m - self.offsets[index])
                if cursor is None or not cursor.ended:
                    return ()
                tagged = ((key, (index, value)) for key, value in cursor.sinks[leaf])
                self.built[m] = list(self.combine(tagged))
        return self.built[m]

    def in_run_order(self, m: int, cursors: dict) -> Any:
        if m not in self.spilled:
            return self.emitted(m, cursors)
        if m not in self.reordered:
            emitted = self.emitted(m, cursors)
            if not emitted and m not in self.built:
                return ()
            order = spilled_order(self.hashing.routes([r[0] for r in emitted]))
            self.reordered[m] = [emitted[i] for i in order]
        return self.reordered[m]


class StraightFeed:
    """The inputs of a worker after a union: one path's outputs on one partition, in order
    (a union's partitions are its inputs' partitions, one after the other)."""

    def __init__(self, partition: int, leaf: str) -> None:
        self.partition, self.leaf = partition, leaf
        self.position = 0

    def next_records(self, cursors: dict) -> list:
        emitted = cursors[self.partition].sinks[self.leaf]
        records = emitted[self.position:]
        self.position = len(emitted)
        return records

    def complete(self, cursors: dict) -> bool:
        return cursors[self.partition].ended
