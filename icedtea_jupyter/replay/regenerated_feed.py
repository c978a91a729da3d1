"""The records of a DataFrame Python operator of G(θ) in a worker of its own.

After θ's ``mapInPandas`` (or UDF), Spark's JVM operators — a filter, a projection, a
shuffle — take θ's output rows and cut them again into Arrow batches (by
``maxRecordsPerBatch``) or groups for the next Python operator, which runs in a Python
worker of its own. Replay regenerates that operator's input batches from its own input
DataFrame with Spark (``dataframe_inputs.every_partition``: the run's SQL settings
pinned, one query), checked against the batch rows and checksums its worker logged.
Its worker reported how far it had got at each interaction; a jump hands it exactly that
many batches. Which of θ's records a batch waits for is decided in the JVM and not
logged, so steps over θ's records leave it where the jump put it.
"""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .logs import Target


class OwnCounts:
    """Partition ``q`` of ``name``: its regenerated records (``records()``), handed over
    up to the count its worker logged at the interaction the debugger goes to (``at``)."""

    def __init__(self, name: str, q: int, target: Callable[[int], Target],
                 records: Callable[[], list]) -> None:
        self.name, self.q = name, q
        self.target, self.records = target, records
        self.index: int | None = None
        self.handed = 0

    def at(self, index: int) -> None:
        """The interaction the next feed goes to."""
        self.index = index

    def next_records(self, upstream: dict) -> list:
        if self.index is None:
            return []
        target = self.target(self.index)
        if not target.count and not target.finished:
            return []
        records = self.records()
        end = len(records) if target.finished else target.count
        fresh = records[self.handed:end]
        self.handed += len(fresh)
        return fresh

    def complete(self, upstream: dict) -> bool:
        return self.index is not None and self.target(self.index).finished


def own_target(logs: Any, index: int, name: str, q: int) -> Target:
    """Where ``name``'s own worker on partition ``q`` stood at interaction ``index``, in
    replay's records (batches, groups); a worker that did not answer it (between two
    checks when its task ended), where it stood at the interaction it last answered."""
    node = logs.dag.node(name)
    for earlier in range(index, -1, -1):
        view = logs.history.view(earlier, node, q, states=False)
        if view.status == "finished":
            return Target(logs.in_records(name, q, 0, view.count or 0) or 0, True)
        if view.status == "not started":
            return Target(0)
        if view.count is not None:
            return Target(logs.in_records(name, q, 0, view.count) or 0)
    return Target(0)
