"""Progress: records in and out, estimated input bytes and time, per operator and partition;
and each worker's records in over time (``LoadSeries``: the skew report's load over time)."""
from __future__ import annotations

import threading
import time
from array import array
from typing import Any

from ..coordinator.agent import CoordinatorAgent
from ..executor.agent import Agent

SERIES_TABLE = "load_timeline"  # agents/load_timeline.jsonl: one row per worker
SERIES_POINTS = 128  # points a worker keeps at most: then every other one goes
SERIES_GAP = 0.2  # seconds at least between two points a worker keeps (at first)
KEY_FIELDS = ("operator", "stage", "partition", "attempt", "task")


class LoadSeries:
    """One worker's records in over time, bounded: a point at least ``gap`` seconds
    after the last kept; past ``SERIES_POINTS`` every other point is dropped and the
    gap doubled, so a long task keeps its whole course at a coarser step."""

    __slots__ = ("seconds", "records", "gap")

    def __init__(self) -> None:
        self.seconds, self.records = array("d"), array("d")
        self.gap = SERIES_GAP

    def add(self, seconds: float, records: float) -> None:
        if self.seconds and seconds - self.seconds[-1] < self.gap:
            self.records[-1] = records  # the latest count, at the kept time
            return
        self.seconds.append(seconds)
        self.records.append(records)
        if len(self.seconds) > SERIES_POINTS:
            self.seconds, self.records = self.seconds[::2], self.records[::2]
            self.gap *= 2

    def row(self, key: tuple) -> dict:
        """The JSON row the run store keeps (``run.agent_table("load_timeline")``)."""
        return dict(zip(KEY_FIELDS, key), seconds=[round(s, 3) for s in self.seconds],
                    records=[int(r) for r in self.records])


class ProgressCoordinator(CoordinatorAgent):
    """Keeps the latest counts of every live worker, and each worker's records in over
    time since the run started (kept in the run store when it ends)."""

    def __init__(self) -> None:
        super().__init__()
        self.live: dict[tuple, dict] = {}
        self.series: dict[tuple, LoadSeries] = {}
        self.started = time.time()
        self._lock = threading.Lock()

    def init(self, run: Any) -> None:
        self.started = time.time()

    def receive_message(self, worker: dict, payload: Any) -> None:
        key = tuple(worker[name] for name in KEY_FIELDS)
        received = time.time()
        with self._lock:
            self.live[key] = dict(payload, received=received)
            series = self.series.get(key)
            if series is None:
                series = self.series[key] = LoadSeries()
            series.add(received - self.started, float(payload.get("records_in") or 0))

    def latest(self) -> dict[tuple, dict]:
        with self._lock:
            return dict(self.live)

    def timeline(self) -> list[dict]:
        """Every worker's series so far, as the rows the store keeps."""
        with self._lock:
            return [series.row(key) for key, series in self.series.items()]

    def series_of(self, keys: list[tuple]) -> dict[tuple, tuple[list, list]]:
        """(seconds, records in) so far of the workers ``keys`` name (those reported)."""
        with self._lock:
            found = {key: self.series.get(key) for key in keys}
            return {key: (s.seconds.tolist(), s.records.tolist())
                    for key, s in found.items() if s is not None}

    def finish(self) -> None:
        self.keep(SERIES_TABLE, self.timeline())


class ProgressAgent(Agent):
    """Sends the worker's counts on every heartbeat and once at the end."""

    name = "progress"
    coordinator = ProgressCoordinator

    def heartbeat(self) -> None:
        if self.context is not None:
            self.send_to_coordinator(self.context.counts())

    def finish(self) -> None:
        if self.context is not None:
            self.send_to_coordinator(self.context.counts())
