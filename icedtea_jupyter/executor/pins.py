"""``--interact-at`` in θ's worker: its chain's snapshot at the pinned counts.

Each pinned interaction names, per partition, how many input records θ has processed
when it is taken (``snapshots/pinned.py``). θ's worker takes it where a conditional
interaction is taken: as the loop pulls the next input, every earlier input's scope is
done in the whole chain. Count 0 is taken with I0 (before the first record); ``end`` is
not taken at all: the partition's final snapshot is its state then.
"""
from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from typing import Any

PINNED = "pinned"


class Pins:
    """The pinned interactions of one θ partition, in the order of their counts."""

    def __init__(self, points: tuple, partition: int) -> None:
        at = [(point[partition], index) for index, point in enumerate(points, 1)
              if partition in point]
        self.named = {index for _, index in at}  # interactions this partition takes itself
        self.initial = [index for count, index in at if count == 0]
        self.counted = sorted((count, index) for count, index in at if count)

    def __bool__(self) -> bool:
        return bool(self.counted)

    def taken(self, records: Iterable, snapshot: Callable[[int, int], None],
              rows: Callable[[Any], int], missed: Callable[[str], None]) -> Iterator:
        """``records`` as they are pulled; ``snapshot(index, processed)`` at each pinned
        count (``rows``: the records an input holds: a batch's rows, else 1)."""
        pins, at, done = self.counted, 0, 0
        for record in records:
            while at < len(pins) and pins[at][0] <= done:
                snapshot(pins[at][1], done)
                at += 1
            yield record
            done += rows(record)
        while at < len(pins) and pins[at][0] <= done:
            snapshot(pins[at][1], done)
            at += 1
        if at < len(pins):
            missed(f"interactions {', '.join(f'I{i}' for _, i in pins[at:])} were pinned at "
                   f"up to {pins[-1][0]:,} records of this partition, which had {done:,}: "
                   "they show its final state")
