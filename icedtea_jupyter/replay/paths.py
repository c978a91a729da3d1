"""θ's tree on one partition: one chain cursor per path, the way PySpark runs it.

Without a cache, PySpark computes θ once for every path that leaves it (θ feeding two
maps that meet in a union runs in two Spark tasks per partition, each with its own θ
worker), and an interaction can find the two tasks at different places: one running,
one not started yet. Each path is therefore replayed as its own ``PartitionCursor``,
with its own logged counts. Steps move the paths of a partition together: θ's next
record is the next one that not every path's θ has processed, and a step gives it to
each path that has not (IcedTea Figure 13: θ's record reaches both paths).
"""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..snapshots.history import busiest
from .cursor import PartitionCursor, StepRefused
from .logs import Target
from .worker import RecordedFailure, ReplayWorker


class PartitionPaths:
    """The paths of θ's tree on ``partition`` (one, for a chain), moved as one."""

    def __init__(self, partition: int, paths: list[PartitionCursor]) -> None:
        self.partition = partition
        self.paths = paths
        self.names = list(dict.fromkeys(n for c in paths for n in c.names))
        self.sinks = {c.names[-1]: c.sink for c in paths}
        self.failure: dict | None = None  # the run's failure, reproduced: the partition ended

    @property
    def ended(self) -> bool:
        return all(c.ended for c in self.paths)

    @property
    def workers(self) -> list[ReplayWorker]:
        return [w for c in self.paths for w in c.workers]

    @property
    def checks(self) -> list:
        return [check for c in self.paths for check in c.checks]

    # --- which worker is meant -----------------------------------------------------
    def worker(self, name: str) -> ReplayWorker:
        """The worker shown for ``name``: the busiest of its copies (``busiest``)."""
        copies = [(c, c.workers[c.names.index(name)]) for c in self._holding(name)]
        return max(copies, key=lambda cw: busiest(self._status(cw[0]), cw[1].processed))[1]

    @staticmethod
    def _status(cursor: PartitionCursor) -> str:
        if cursor.ended:
            return "finished"
        return "running" if cursor.position else "not started"

    def items(self) -> list[tuple[str, ReplayWorker]]:
        return [(name, self.worker(name)) for name in self.names]

    def counts(self) -> dict[str, int]:
        return {name: worker.processed for name, worker in self.items()}

    def state(self, operator: str) -> Any:
        return self.worker(operator).state()

    def _holding(self, name: str) -> list[PartitionCursor]:
        holding = [c for c in self.paths if name in c.names]
        if not holding:
            raise StepRefused(f"{name!r} is not in θ's chain on this partition "
                              f"(the chain: {', '.join(self.names)})")
        return holding

    def _behind(self, name: str) -> list[PartitionCursor]:
        """The paths whose ``name`` worker moves on the next step: the least far along
        among those with a record for it (all of them, if none has: they refuse)."""
        holding = self._holding(name)
        i = holding[0].names.index(name)
        if i == 0:
            ready = [c for c in holding if not c.ended]
            far = {id(c): c.position for c in ready}
        else:
            ready = [c for c in holding if c.waiting[c.names.index(name)]]
            far = {id(c): c.workers[c.names.index(name)].processed for c in ready}
        if not ready:
            return holding[:1]
        least = min(far.values())
        return [c for c in ready if far[id(c)] == least]

    # --- what waits where -----------------------------------------------------------
    def pending(self, limit: int = 20) -> dict[str, dict]:
        return {name: self._behind(name)[0].pending(limit)[name] for name in self.names}

    def overlap(self) -> str | None:
        """Why θ's next record cannot be stepped over now, or None."""
        return next((r for r in (c.overlap() for c in self._behind(self.names[0])) if r), None)

    def can_step_over(self) -> bool:
        return not self.ended and self.overlap() is None

    def step_into_options(self) -> int:
        if self.failure is not None:
            return 0
        return sum(1 for name in self.names if self._can_step_into(name))

    def _can_step_into(self, name: str) -> bool:
        if name == self.names[0]:
            return any(c.position < len(c.inputs) for c in self.paths)
        return any(c.waiting[c.names.index(name)] for c in self._holding(name))

    # --- steps -----------------------------------------------------------------------
    def _guarded(self, cursor: PartitionCursor, move: Callable[..., Any], *args: Any) -> Any:
        """``move(*args)`` on ``cursor``; the run's failure reproduced ends the partition
        there."""
        try:
            return move(*args)
        except RecordedFailure as failure:
            cursor.ended = True
            self.failure = failure.info
            return []

    def _refuse_after_failure(self) -> None:
        failure = self.failure
        if failure is not None:
            raise StepRefused(
                f"partition {self.partition} has ended as in the recorded run: "
                f"{failure['operator']!r} raised {failure['exception']}: "
                f"{failure['message']:.200}; jump to go back (dbg.jump_to_failure() or "
                "dbg.jump(k))")

    def step_over(self) -> None:
        self._refuse_after_failure()
        behind = self._behind(self.names[0])
        reason = next((r for r in (c.overlap() for c in behind) if r), None)
        if reason is not None:
            raise StepRefused(f"cannot step over θ's input #{behind[0].position} on "
                              f"partition {self.partition}: {reason}")
        for cursor in behind:
            self._guarded(cursor, cursor.step_over)

    def step_into(self, operator: str) -> list:
        self._refuse_after_failure()
        return [out for cursor in self._behind(operator)
                for out in self._guarded(cursor, cursor.step_into, operator)]

    def step_out(self) -> None:
        self._refuse_after_failure()
        busy = [c for c in self.paths if any(c.waiting[1:])]
        if not busy:
            raise StepRefused(f"no scope is in progress on partition {self.partition}: "
                              "nothing waits downstream of θ")
        for cursor in busy:
            self._guarded(cursor, cursor.step_out)

    def advance(self, targets: list[Target]) -> None:
        """Each path to its own target (θ's count in that path's task)."""
        for cursor, target in zip(self.paths, targets):
            if target.finished:
                if not cursor.ended:
                    self._guarded(cursor, cursor.finish)
            else:
                self._guarded(cursor, cursor.advance_to, target.count)

    def marks(self) -> list[int]:
        return [len(c.sink) for c in self.paths]

    def emitted_since(self, marks: list[int]) -> list:
        """What left the tree since ``marks()``, path by path."""
        return [out for c, m in zip(self.paths, marks) for out in c.sink[m:]]

    def abandon(self) -> None:
        for cursor in self.paths:
            cursor.abandon()
