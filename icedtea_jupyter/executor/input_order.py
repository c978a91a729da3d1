"""The input order of a multi-input worker (the reduce side of a join or cogroup).

A shuffle delivers the map-side combiners of a reduce partition in fetch order, which
varies from run to run; replay needs it to rebuild each key's values in the same order.
Each combiner holds the values of one input, tagged ``(input index, value)``. The log is
run-length encoded as it is consumed: one entry only where the input index changes.
"""
from __future__ import annotations

import zlib
from array import array
from collections.abc import Iterable, Iterator

from .merge_order import HASH_PROBE, SPILLED

KIND = "order"  # the replay-log kind of a worker that logs its input order


class InputOrder:
    """Which input each consumed combiner came from, as (input index, first position) pairs."""

    kind = KIND

    def __init__(self) -> None:
        self.starts = array("I")

    def tap(self, combiners: Iterable[tuple]) -> Iterator[tuple]:
        """Pass ``(key, [(input index, value), ...])`` combiners on, noting input changes."""
        starts, current = self.starts, -1
        for position, combiner in enumerate(combiners):
            index = combiner[1][0][0]
            if index != current:
                current = index
                starts.append(index)
                starts.append(position)
            yield combiner

    def runs(self, consumed: int) -> array:
        """(input index, combiners) pairs, in arrival order, for ``consumed`` combiners."""
        return run_lengths(self.starts, consumed)

    def replay_log(self, log: dict | None, consumed: int) -> tuple[dict, bytes]:
        """The worker's replay log with its input order as the body (kind ``"order"``).

        The worker's outputs all follow its last input (it is a merge), so the order
        takes the place of an ``after_last`` log, which has no body of its own."""
        log = dict(log or {"results": []}, kind=self.kind)
        runs = self.runs(consumed)
        return log, zlib.compress(runs.tobytes(), 1) if len(runs) else b""


def run_lengths(starts: Iterable[int], total: int) -> array:
    """(index, first position) pairs to (index, length) pairs; the last run ends at ``total``."""
    starts = list(starts)
    runs = array("I")
    for j in range(0, len(starts), 2):
        end = starts[j + 3] if j + 2 < len(starts) else total
        if end > starts[j + 1]:
            runs.append(starts[j])
            runs.append(end - starts[j + 1])
    return runs



ORIGINS = "origins"  # the replay-log kind of an aggregation's reduce side


def tag_origins(split: int, items: Iterable[tuple], spilled: bool = False) -> Iterator[tuple]:
    """The map side's combiners, each tagged with its map partition and position (marked
    ``merge_order.SPILLED`` if the merger spilled: replay then reorders them)."""
    for position, (key, combiner) in enumerate(items, SPILLED if spilled else 0):
        yield key, (split, position, combiner)


class Origins:
    """Where each combiner a reduce side consumed came from: (map partition, position)
    pairs, in arrival order, so replay can feed the reduce side exactly the records
    that descend from the records θ had processed, in the order the shuffle gave them."""

    def __init__(self) -> None:
        self.pairs = array("I")

    def tap(self, tagged: Iterable[tuple]) -> Iterator[tuple]:
        """Strip the tags of ``(key, (partition, position, combiner))``, noting them."""
        append = self.pairs.append
        for key, (split, position, combiner) in tagged:
            append(split)
            append(position)
            yield key, combiner

    def replay_log(self, log: dict | None, consumed: int) -> tuple[dict, bytes]:
        # how the worker hashed (the buckets of a spilled map side: ``merge_order``)
        log = dict(log or {"results": []}, kind=ORIGINS, hash_probe=hash(HASH_PROBE))
        pairs = self.pairs[:2 * consumed]
        return log, zlib.compress(pairs.tobytes(), 1) if len(pairs) else b""


def input_runs(origins: Iterable[tuple[int, int]], offsets: list[int]) -> list[tuple[int, int]]:
    """(map partition, position) origins of a join's combiners to (input index, combiners)
    runs, the inputs' partitions starting at ``offsets`` in the union the join shuffled."""
    runs: list[tuple[int, int]] = []
    for m, _ in origins:
        index = max(i for i, start in enumerate(offsets) if start <= m)
        if runs and runs[-1][0] == index:
            runs[-1] = (index, runs[-1][1] + 1)
        else:
            runs.append((index, 1))
    return runs

