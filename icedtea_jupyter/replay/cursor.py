"""The cursor of one partition: where θ's chain stands, what waits at each worker, steps.

Records move down the chain the way PySpark moves them within a task: θ takes its next
input, its outputs wait at the next worker, and so on. Each waiting record carries its
scope — the index of θ's input it descends from (IcedTea Def. 4.4).
"""
from __future__ import annotations

from collections import deque
from typing import Any

from .order import OutputCheck
from .worker import ReplayWorker


class StepRefused(ValueError):
    """A step that cannot be taken now; the message says why."""


class PartitionCursor:
    """One chain of workers on one partition (one Spark task): ``names`` in pipeline
    order, upstream first. The last worker's outputs leave the cursor (``sink``)."""

    def __init__(self, partition: int, names: list[str], workers: list[ReplayWorker],
                 inputs: list, checks: list[OutputCheck]) -> None:
        self.partition = partition
        self.names = names
        self.workers = workers
        self.inputs = inputs
        self.checks = checks
        self.position = 0  # θ's next input
        self.waiting: list[deque] = [deque() for _ in workers]  # (scope, record); [0] unused
        self.ended = False
        self.sink: list = []  # everything that left the cursor, in order
        self.sinks = {names[-1]: self.sink}

    # --- what waits where -----------------------------------------------------------
    def pending(self, limit: int = 20) -> dict[str, dict]:
        """Per worker: how many records wait, and the first ``limit`` of them."""
        rows = {self.names[0]: {"count": max(len(self.inputs) - self.position, 0),
                                "records": self.inputs[self.position:self.position + limit],
                                "scopes": list(range(self.position,
                                                     min(len(self.inputs), self.position + limit)))}}
        for name, queue in zip(self.names[1:], self.waiting[1:]):
            head = list(queue)[:limit]
            rows[name] = {"count": len(queue), "records": [r for _, r in head],
                          "scopes": [s for s, _ in head]}
        return rows

    def overlap(self) -> str | None:
        """Why θ's next record cannot be stepped over now, or None."""
        for name, queue in zip(self.names[1:], self.waiting[1:]):
            if queue:
                scope, record = queue[0]
                return (f"{len(queue)} record(s) of the scope of θ's input #{scope} still wait "
                        f"at {name!r} (next: {record!r:.80}); the next record's scope would "
                        "interleave with it: step_out first")
        return None

    def can_step_over(self) -> bool:
        return not self.ended and self.overlap() is None

    def step_into_options(self) -> int:
        return int(self.position < len(self.inputs)) + sum(1 for q in self.waiting[1:] if q)

    # --- steps -------------------------------------------------------------------------
    def step_into(self, operator: str) -> list:
        """One worker processes its next waiting record; returns its outputs."""
        if operator not in self.names:
            raise StepRefused(f"{operator!r} is not in θ's chain on this partition "
                              f"(the chain: {', '.join(self.names)})")
        i = self.names.index(operator)
        if i == 0:
            if self.position >= len(self.inputs):
                raise StepRefused(f"θ ({operator!r}) has processed all {len(self.inputs)} "
                                  f"records of partition {self.partition}")
            scope, record = self.position, self.inputs[self.position]
            self.position += 1
        else:
            if not self.waiting[i]:
                raise StepRefused(f"no record waits at {operator!r} on partition "
                                  f"{self.partition}")
            scope, record = self.waiting[i].popleft()
        outputs = self.workers[i].process(record)
        self.checks[i].check(self.workers[i].processed - 1, len(outputs))
        self._pass_on(i, scope, outputs)
        return outputs

    def step_over(self) -> None:
        """θ's next record and its whole scope (Def. 4.5); after the last record, the end
        of the partition (the operators' closing outputs)."""
        if self.position >= len(self.inputs) and not self.ended and self.overlap() is None:
            self.finish()
            return
        reason = self.overlap()
        if reason is not None:
            raise StepRefused(f"cannot step over θ's input #{self.position} on partition "
                              f"{self.partition}: {reason}")
        self.step_into(self.names[0])
        self._drain()

    def step_out(self) -> None:
        """The rest of the current scope: every record waiting downstream."""
        if not any(self.waiting[1:]):
            raise StepRefused(f"no scope is in progress on partition {self.partition}: "
                              "nothing waits downstream of θ")
        self._drain()

    def advance_to(self, count: int) -> None:
        """Step over until θ has processed ``count`` inputs."""
        if count > len(self.inputs):
            raise StepRefused(f"θ processed {count} records of partition {self.partition} "
                              f"in the run, but only {len(self.inputs)} are available")
        self._drain()
        if self.position >= count:
            return
        records = self.inputs[self.position:count]  # every scope runs to its end:
        self.position = count  # each worker takes all its records in one go
        for worker, check in zip(self.workers, self.checks):
            outputs, counts = worker.process_many(records)
            check.check_many(worker.processed - len(records), counts)
            records = outputs
        self.sink.extend(records)

    def finish(self) -> None:
        """The end of the partition: every input, then each operator's closing outputs."""
        self.advance_to(len(self.inputs))
        for i, worker in enumerate(self.workers):
            self._pass_on(i, self.position, worker.finish())
            self._drain()
        self.ended = True

    def _drain(self) -> None:
        for i in range(1, len(self.workers)):
            while self.waiting[i]:
                self.step_into(self.names[i])

    def _pass_on(self, i: int, scope: int, outputs: list) -> None:
        if i + 1 < len(self.names):
            self.waiting[i + 1].extend((scope, out) for out in outputs)
        else:
            self.sink.extend(outputs)

    def abandon(self) -> None:
        for worker in self.workers:
            worker.abandon()

    def items(self) -> list[tuple[str, ReplayWorker]]:
        return list(zip(self.names, self.workers))

    def counts(self) -> dict[str, int]:
        return {name: w.processed for name, w in zip(self.names, self.workers)}

    def state(self, operator: str) -> Any:
        return self.workers[self.names.index(operator)].state()
