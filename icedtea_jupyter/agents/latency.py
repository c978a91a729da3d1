"""Latency alerts and profiling (``--agent latency``, Inspector Gadget's latency tool).

Per operator and worker: the time each input record took the operator (a per-record
operator's call; a whole-partition function's time to produce each output), a
histogram of those times in powers of two of microseconds, the slowest records with
their values, and an alert when a record takes more than F times the operator's
running average on that worker (F = ``options["factor"]``, 10 by default; set it with
``LatencyAgent.with_options(factor=5)``), after the first ``warmup`` records.
``run.latency(operator)`` lists the slowest records, ``run.agent_table("latency")``
the histograms.
"""
from __future__ import annotations

import heapq
from typing import Any

from ..coordinator.agent import CoordinatorAgent
from ..executor.agent import Agent
from .alert_sampler import AlertSampler

SLOWEST = 5
WARMUP = 20


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
    """Times every record; alerts on those over F times the running average."""

    name = "latency"
    coordinator = LatencyCoordinator
    options: dict = {"factor": 10.0, "warmup": WARMUP}

    def init(self, context: Any) -> None:
        self.factor = float(self.options.get("factor", 10.0))
        self.warmup = int(self.options.get("warmup", WARMUP))
        self.count, self.total = 0, 0.0
        self.histogram: dict[int, int] = {}
        self.slowest: list[tuple[float, int, str]] = []  # a min-heap of the slowest
        self.sampler = AlertSampler(self, f"{context.operator}: latency > {self.factor:g}× "
                                          "average")

    def observe_outputs(self, record: Any, outputs: list, seconds: float) -> None:
        count, total = self.count, self.total
        if count >= self.warmup and seconds > self.factor * total / count:
            self.sampler.add(f"a record took {seconds * 1e3:.3g} ms, "
                             f"{seconds * count / max(total, 1e-12):.0f}× the average "
                             f"{total / count * 1e6:.3g} µs", record if record is not None
                             else outputs, seconds=seconds)
        self.count, self.total = count + 1, total + seconds
        bucket = int(seconds * 1e6).bit_length()
        self.histogram[bucket] = self.histogram.get(bucket, 0) + 1
        if len(self.slowest) < SLOWEST:
            heapq.heappush(self.slowest, (seconds, count, repr(record)[:500]))
        elif seconds > self.slowest[0][0]:
            heapq.heapreplace(self.slowest, (seconds, count, repr(record)[:500]))

    def heartbeat(self) -> None:
        self.sampler.flush()

    def finish(self) -> None:
        self.sampler.flush(final=True)
        self.send_to_coordinator({
            "histogram": {str((1 << b) >> 1): n for b, n in self.histogram.items()},
            "slowest": [(s, r) for s, _, r in sorted(self.slowest, reverse=True)]})
