"""Heavy keys of an operator: the workers' sketches merged, each key with its partition.

Each key-counting worker (``executor/skew.py``) reports its sketch (``executor/sketch.py``)
whose keys travel as tagged JSON (``executor/state.encode``) with the reduce partition
the job's partitioner sends them to. Merged here (mergeable summaries: the error bounds
add up). Where no record's key was sampled, a key's ``count`` is a lower bound of its
records and ``count + error`` an upper bound (``exact``); where some were, ``count`` is
an estimate and ``low``–``high`` an interval at ``CONFIDENCE``, not a bound.
"""
from __future__ import annotations

import json
from collections import deque
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from ..executor.sketch import CAPACITY, CONFIDENCE, EVERY, REPLICATES, HeavyHitters, KeySketch
from ..executor.state import decode

# error: exact, count <= true <= count + error; else the interval's larger half-width
KEY_COLUMNS = ["key", "count", "share", "partition", "error", "low", "high", "exact"]
KeyCounts = tuple[int, dict[str, int]]  # records counted, count per key (canonical JSON)
RISING_WINDOW = 2.0  # seconds over which a live view's rising keys grew (workers send each 1 s)


@dataclass
class Keys:
    """The merged sketch of one operator's workers."""

    sketch: KeySketch = field(default_factory=KeySketch)
    values: dict[str, Any] = field(default_factory=dict)  # canonical JSON -> the key
    partitions: dict[str, int] = field(default_factory=dict)  # canonical JSON -> partition
    workers: int = 0
    inputs: dict[int, int] = field(default_factory=dict)  # a join's records per input
    missing: int = 0  # records the map side took in that no sketch counted (``uncounted``)

    @property
    def n(self) -> int:
        return self.sketch.n

    @property
    def error(self) -> int:
        return self.sketch.error

    def frame(self, top: int | None = 20) -> pd.DataFrame:
        """key, count, share (of all the records), partition, error, low, high, exact;
        heaviest first. ``exact`` (nothing sampled): ``low = count <= true <= count +
        error = high``, a bound. Else ``count`` is an estimate and ``low <= true <=
        high`` holds at ``CONFIDENCE`` (``executor/sketch.py``); ``error`` is then the
        interval's larger distance from ``count``."""
        return self._frame(self.sketch.top(top))

    def _frame(self, counted: list[tuple[str, int]]) -> pd.DataFrame:
        sketch = self.sketch
        n = sketch.n or 1
        exact = not sketch.sampled
        rows = []
        for k, count in counted:
            low, high = (int(v) for v in sketch.interval(k))
            count = int(count)
            error = high - count if exact else max(count - low, high - count)
            rows.append((self.values[k], count, count / n, self.partitions.get(k, -1),
                         error, low, high, exact))
        return pd.DataFrame(rows, columns=KEY_COLUMNS)

    def uncounted(self, records: int) -> None:
        """The map side's workers took in ``records``: any the sketches lack (a worker's
        sketch missing, a record no tap saw) may be any key's, so every key's bound
        widens by as many, and no count claims to be exact."""
        self.missing = max(records - self.sketch.n, 0) if not self.sketch.sampled else 0
        self.sketch.exact.error += self.missing
        self.sketch.exact.n += self.missing

    def note(self) -> str:
        """What the counts are, in words that agree with ``frame``'s numbers."""
        sketch = self.sketch
        if not sketch.n:
            return ""
        if self.missing:
            return (f"Counts are lower bounds: {self.missing:,} of the {sketch.n:,} records "
                    "were not counted (a worker's counts are missing); each key's true count "
                    f"is between its count and {sketch.error:,} more.")
        if not sketch.sampled:
            if not sketch.error:
                return f"Counts are exact: every key of the {sketch.n:,} records was counted."
            return (f"Counts are lower bounds: each key's true count is between its count "
                    f"and {sketch.error:,} more (Misra–Gries, over the {sketch.n:,} records "
                    "counted).")
        return (f"Counts are estimates: the keys of {sketch.estimated:,} of the "
                f"{sketch.n:,} records were sampled (one record or chunk in {EVERY}). "
                f"low–high is each key's {CONFIDENCE:.0%} interval, a statistical one, not "
                f"a bound (from the spread of {REPLICATES} replicate samples).")

    def counts(self) -> KeyCounts:
        """The records counted and each key's count, now (for ``rising`` later)."""
        return self.sketch.n, self.sketch.counts

    def rising(self, before: KeyCounts, share: float = 0.01, limit: int = 4) -> pd.DataFrame:
        """``frame``'s rows of the ``limit`` keys whose counts grew the most since
        ``before`` (``counts()`` then), each by at least ``share`` of the records counted
        since: the keys heavy now, which the heaviest so far may not name yet."""
        grown = self.sketch.n - before[0]
        then, now = before[1], self.sketch.counts
        growth = sorted(((count - then.get(k, 0), k) for k, count in now.items()),
                        reverse=True)[:limit]
        return self._frame([(k, now[k]) for g, k in growth
                            if grown > 0 and g >= share * grown])

    def per_partition(self) -> dict[int, int]:
        """The records of the sketch's keys per partition (lower bounds where nothing was
        sampled, else estimates)."""
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
    """The workers' summaries (``{"n", "capacity", "error", "estimated", "keys": [[key,
    count, partition, (count in each replicate)]], "samples": [{"n", "error"}]}``),
    merged."""
    keys = Keys(KeySketch(CAPACITY))
    for summary in summaries:
        worker = summary_sketch(summary)
        for row in summary.get("keys", []):
            encoded, count, part = row[:3]
            canonical = json.dumps(encoded, sort_keys=True)
            if count:
                worker.exact.counts[canonical] = int(count)
            for sample, sampled in zip(worker.samples, row[3] if len(row) > 3 else ()):
                if sampled:
                    sample.counts[canonical] = int(sampled)
            if canonical not in keys.values:
                keys.values[canonical] = decode(encoded)
            if part is not None and part >= 0:
                keys.partitions[canonical] = int(part)
        worker.rescale()
        keys.sketch.merge(worker)
        keys.workers += 1
        for index, count in summary.get("inputs", {}).items():
            keys.inputs[int(index)] = keys.inputs.get(int(index), 0) + int(count)
    return keys


def summary_sketch(summary: dict) -> KeySketch:
    """A worker's sketch from its summary, its counts not yet in (``merge_summaries``)."""
    capacity = int(summary.get("capacity", CAPACITY))
    sketch = KeySketch(capacity)
    samples = summary.get("samples") or []
    for sample in samples:
        replicate = HeavyHitters(capacity)
        replicate.n, replicate.error = int(sample["n"]), int(sample["error"])
        sketch.samples.append(replicate)
    estimated = int(summary.get("estimated", 0))
    sketch.exact.n = int(summary.get("n", 0)) - estimated
    sketch.exact.error = int(summary.get("error", 0))
    if not samples:  # a store from before the replicates: its estimates mixed in
        sketch.unreplicated = estimated
    sketch.region = int(summary.get("region") or 0)
    return sketch
