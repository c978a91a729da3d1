"""Spark's ``TaskContext`` while a replayed operator runs: an operator that asks for its
partition (``TaskContext.get().partitionId()``, to seed a generator, say) gets the one it
had in the run, not ``None``.

PySpark keeps one context per worker process; replay runs many partitions in one process
(the kernel's, or a replay process), each in its own greenlet. So the context is set
when control enters a replayed operator and put back as it was when control leaves: the
kernel, where ``TaskContext.get()`` must stay ``None`` (PySpark takes a context there to
mean "on an executor"), never sees it.
"""
from __future__ import annotations

from typing import Any


class ReplayTaskContext:
    """Enter and leave one partition's task context (cheap: a few attribute sets)."""

    def __init__(self, partition: int, attempt: int = 0, stage: int = 0) -> None:
        from pyspark import TaskContext

        self._cls = TaskContext
        context = object.__new__(TaskContext)
        context._partitionId = partition
        context._attemptNumber = attempt
        context._stageId = stage
        context._taskAttemptId = -1  # no Spark task: replay runs outside Spark
        context._localProperties = {}
        context._resources = {}
        context._cpus = 1
        self.context = context

    def enter(self) -> Any:
        """Make this partition's context the current one; returns the one it replaced."""
        previous = self._cls._taskContext
        self._cls._taskContext = self.context
        return previous

    def leave(self, previous: Any) -> None:
        self._cls._taskContext = previous
