"""Heavy keys of an operator: the workers' sketches merged, each key with its partition.

Each key-counting worker (``executor/skew.py``) reports a Misra–Gries summary whose
keys travel as tagged JSON (``executor/state.encode``) with the reduce partition the
job's partitioner sends them to. Merged here (mergeable summaries: the error bounds
add up), a key's ``count`` is a lower bound of its records and ``count + error`` an
upper bound.
"""
from __future__ import annotations

import json
from collections import deque
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from ..executor.skew import CAPACITY, HeavyHitters
from ..executor.state import decode

KEY_COLUMNS = ["key", "count", "share", "partition", "error"]
KeyCounts = tuple[int, dict[str, int]]  # records counted, count per key (canonical JSON)
RISING_WINDOW = 2.0  # seconds over which a live view's rising keys grew (workers send each 1 s)


@dataclass
class Keys:
    """The merged sketch of one operator's workers."""

    sketch: HeavyHitters = field(default_factory=HeavyHitters)
    values: dict[str, Any] = field(default_factory=dict)  # canonical JSON -> the key
    partitions: dict[str, int] = field(default_factory=dict)  # canonical JSON -> partition
    workers: int = 0
    inputs: dict[int, int] = field(default_factory=dict)  # a join's records per input

    @property
    def n(self) -> int:
        return self.sketch.n

    @property
    def error(self) -> int:
        return self.sketch.error

    def frame(self, top: int | None = 20) -> pd.DataFrame:
        """key, count, share (of all the records counted), partition, error (the key's
        true count is at most ``count + error``, and at least ``count - error`` where
        part of it was sampled: the sketch's bound plus ``sampling_error``); heaviest
        first."""
        return self._frame(self.sketch.top(top))

    def _frame(self, counted: list[tuple[str, int]]) -> pd.DataFrame:
        sketch = self.sketch
        n = sketch.n or 1
        rows = [(self.values[k], count, count / n, self.partitions.get(k, -1),
                 sketch.error + sketch.sampling_error(count)) for k, count in counted]
        return pd.DataFrame(rows, columns=KEY_COLUMNS)

    def counts(self) -> KeyCounts:
        """The records counted and each key's count, now (for ``rising`` later)."""
        return self.sketch.n, dict(self.sketch.counts)

    def rising(self, before: KeyCounts, share: float = 0.01, limit: int = 4) -> pd.DataFrame:
        """``frame``'s rows of the ``limit`` keys whose counts grew the most since
        ``before`` (``counts()`` then), each by at least ``share`` of the records counted
        since: the keys heavy now, which the heaviest so far may not name yet."""
        grown = self.sketch.n - before[0]
        then = before[1]
        growth = sorted(((count - then.get(k, 0), k) for k, count in self.sketch.counts.items()),
                        reverse=True)[:limit]
        return self._frame([(k, self.sketch.counts[k]) for g, k in growth
                            if grown > 0 and g >= share * grown])

    def per_partition(self) -> dict[int, int]:
        """The records of the sketch's keys per partition (lower bounds)."""
        totals: dict[int, int] = {}
        for k, count in self.sketch.counts.items():
            part = self.partitions.get(k, -1)
            totals[part] = totals.get(part, 0) + count
        return totals

    def heavy(self, share: float = 0.01) -> list[str]:
        """The keys (canonical JSON) counted above ``share`` of the records, or the
        heaviest one."""
        n = self.sketch.n or 1
        top = self.sketch.top()
        return [k for k, count in top if count / n >= share] or [k for k, _ in top[:1]]


class CountsWindow:
    """A live sketch's counts over the last ``seconds``: ``since(keys, now)`` keeps the
    counts now and returns those of about ``seconds`` ago (or the oldest kept)."""

    def __init__(self, seconds: float = RISING_WINDOW) -> None:
        self.seconds = seconds
        self._kept: deque[tuple[float, KeyCounts]] = deque()

    def since(self, keys: Keys, now: float) -> KeyCounts:
        self._kept.append((now, keys.counts()))
        while len(self._kept) > 1 and self._kept[1][0] <= now - self.seconds:
            self._kept.popleft()
        return self._kept[0][1]


def merge_summaries(summaries: Iterable[dict]) -> Keys:
    """The workers' summaries (``{"n", "capacity", "error", "keys": [[key, count,
    partition]]}``), merged."""
    keys = Keys(HeavyHitters(CAPACITY))
    for summary in summaries:
        worker = HeavyHitters(int(summary.get("capacity", CAPACITY)))
        worker.n, worker.error = int(summary.get("n", 0)), int(summary.get("error", 0))
        worker.estimated = int(summary.get("estimated", 0))
        for encoded, count, part in summary.get("keys", []):
            canonical = json.dumps(encoded, sort_keys=True)
            worker.counts[canonical] = int(count)
            if canonical not in keys.values:
                keys.values[canonical] = decode(encoded)
            if part is not None and part >= 0:
                keys.partitions[canonical] = int(part)
        keys.sketch.merge(worker)
        keys.workers += 1
        for index, count in summary.get("inputs", {}).items():
            keys.inputs[int(index)] = keys.inputs.get(int(index), 0) + int(count)
    return keys
