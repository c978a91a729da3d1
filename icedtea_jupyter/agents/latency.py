"""Latency alerts and profiling (``--agent latency``, Inspector Gadget's latency tool).

Per operator and worker: the time each input record took the operator (a per-record
operator's call; a whole-partition function's time to produce each output), a
histogram of those times in powers of two of microseconds, the slowest records with
their values, and an alert when a record takes more than F times the operator's
average on that worker (as of its last heartbeat, at most 0.25 s old) (F = ``options["factor"]``, 10 by default; set it with
``LatencyAgent.with_options(factor=5)``), after the first ``warmup`` records.
``run.latency(operator)`` lists the slowest records, ``run.agent_table("latency")``
the histograms.

Sampled timing: while an operator's records average under ``TIME_EVERY_OVER_COST`` times
the cost of timing a record (measured when the worker starts: ``timing_cost``; about
20 µs on a machine where a timed record costs ~1 µs, so that timing every record of a
slower operator costs under ~5 %) after the warm-up, a map, filter, flatMap or
``Operator`` running in blocks is timed on one record in 64 (one at random in each 64;
the others run without a Python call of ours), and each timed
record counts for 64 in the histogram and the average (an estimate, off by at most 63
records). What that misses: a slow record among the 63 untimed ones is neither alerted
nor listed slowest — a lone slow record in a fast operator is found with probability
1/64, a slow stretch longer than 64 records always. Slower operators (the timing then
costs under ~5 %), whole-partition functions and operators that also
have a ``--tolerate`` or another ``observe_outputs`` agent are timed on every record.
"""
from __future__ import annotations

import heapq
import math
from collections import Counter
from collections.abc import Callable
from time import perf_counter
from typing import Any

from ..coordinator.agent import CoordinatorAgent
from ..executor.agent import Agent
from .alert_sampler import AlertSampler

SLOWEST = 5
WARMUP = 20
MICROSECONDS = 1e6
SAMPLE = 64  # a sampled operator's timed record stands for this many (executor/observed.py)
TIME_EVERY_OVER_COST = 150  # an average slower than this × timing_cost(): time every record
REFOLD = 1024  # timing every record, fold the average this often (a pause may end)


def timing_cost(trials: int = 5, calls: int = 64) -> float:
    """Seconds a loop of a call, two clock reads and an append takes a record here: the
    least of ``trials`` loops of ``calls`` (~40 µs in all). The choice to time every
    record scales with it, so it follows the machine's speed (and valgrind's slowdown:
    instruction counts measure the path a native run takes), not a fixed 20 µs."""
    times: list[float] = []

    def one(clock: Callable[[], float] = perf_counter,
            append: Callable[[float], None] = times.append) -> None:
        started = clock()
        append(clock() - started)
    best = math.inf
    for _ in range(trials):
        started = perf_counter()
        for _ in range(calls):
            one()
        best = min(best, perf_counter() - started)
    return best / calls


class LatencyCoordinator(CoordinatorAgent):
    """Keeps each worker's histogram and slowest records in the run store."""

    def receive_message(self, worker: dict, payload: Any) -> None:
        where = {"operator": worker["operator_name"], "partition": worker["partition"],
                 "attempt": worker["attempt"]}
        self.keep("latency", [{**where, "bucket_us": int(bucket), "records": n}
                              for bucket, n in payload["histogram"].items()])
        self.keep("latency_slowest", [{**where, "seconds": seconds, "record": record}
                                      for seconds, record in payload["slowest"]])


class LatencyAgent(Agent):
    """Times every record, or one in 64 of a fast operator; alerts on those over F
    times the average. Per timed record: an append and two comparisons; the histogram
    and the average are folded in batches, each heartbeat (so the average an alert
    compares with is at most 0.25 s old)."""

    name = "latency"
    coordinator = LatencyCoordinator
    options: dict = {"factor": 10.0, "warmup": WARMUP}

    def init(self, context: Any) -> None:
        self.factor = float(self.options.get("factor", 10.0))
        self.warmup = int(self.options.get("warmup", WARMUP))
        self.count, self.total = 0, 0.0
        self.every: list[float] = []  # since the last fold: records timed one by one
        self.sampled: list[float] = []  # ... and records standing for SAMPLE each
        self.times = self.every  # where the next records' times go
        self.threshold = math.inf  # F × the average, once ``warmup`` records are folded
        self.every_over = TIME_EVERY_OVER_COST * timing_cost()  # slower: time every record
        self.histogram: Counter = Counter()
        self.slowest: list[tuple[float, int, str]] = []  # a min-heap of the slowest
        self.floor = -1.0  # a record slower than this enters ``slowest``
        self.sampler = AlertSampler(self, f"{context.operator}: latency > {self.factor:g}× "
                                          "average")

    def outputs_sample(self) -> int:
        """One record in SAMPLE while the operator is fast (``every_over``)."""
        if self.count < self.warmup or len(self.every) >= REFOLD:
            self._fold()  # the average now, not at the next heartbeat (0.25 s away)
        fast = self.count >= self.warmup and self.total < self.every_over * self.count
        self.times = self.sampled if fast else self.every
        return SAMPLE if fast else 1

    def observe_outputs(self, record: Any, outputs: list, seconds: float) -> None:
        self.times.append(seconds)
        if seconds > self.threshold:
            self._slow_alert(record if record is not None else outputs, seconds)
        if seconds > self.floor:
            self._keep_slowest(record, seconds)

    def _slow_alert(self, record: Any, seconds: float) -> None:
        average = self.total / self.count
        self.sampler.add(f"a record took {seconds * 1e3:.3g} ms, {seconds / average:.0f}× "
                         f"the average {average * 1e6:.3g} µs", record, seconds=seconds)

    def _keep_slowest(self, record: Any, seconds: float) -> None:
        entry = (seconds, self.count + len(self.every), repr(record)[:500])
        if len(self.slowest) < SLOWEST:
            heapq.heappush(self.slowest, entry)
        else:
            heapq.heapreplace(self.slowest, entry)
        if len(self.slowest) == SLOWEST:
            self.floor = self.slowest[0][0]

    def _fold(self) -> None:
        """The times since the last fold into the count, average and histogram (C
        iterators: no Python call per record)."""
        for times, weight in ((self.every, 1), (self.sampled, SAMPLE)):
            self.count += weight * len(times)
            self.total += weight * math.fsum(times)
            buckets = Counter(map(int.bit_length, map(int, map(MICROSECONDS.__mul__, times))))
            self.histogram.update({bucket: weight * n for bucket, n in buckets.items()})
            times.clear()  # the list observe_outputs appends to stays the same
        if self.count >= self.warmup and self.total > 0:
            self.threshold = self.factor * self.total / self.count

    def heartbeat(self) -> None:
        self._fold()
        self.sampler.flush()

    def finish(self) -> None:
        self._fold()
        self.sampler.flush(final=True)
        self.send_to_coordinator({
            "histogram": {str((1 << b) >> 1): n for b, n in self.histogram.items()},
            "slowest": [(s, r) for s, _, r in sorted(self.slowest, reverse=True)]})
