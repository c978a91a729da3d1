"""The records of a DataFrame Python operator of G(θ) in a worker of its own.

After θ's ``mapInPandas`` (or UDF), Spark's JVM operators — a filter, a projection, a
shuffle — take θ's output rows and cut them again into Arrow batches (by
``maxRecordsPerBatch``) or groups for the next Python operator, which runs in a Python
worker of its own. Replay regenerates that operator's input batches from its own input
DataFrame with Spark (``dataframe_inputs.every_partition``: the run's SQL settings
pinned, one query), checked against the batch rows and checksums its worker logged.
Its worker reported how far it had got at each interaction; a jump hands it exactly that
many batches. Steps then release its batches as θ's steps complete them (``Release``):

- ``ByRows``: in θ's stage with only filters, projections and explodes between, the rows
  each of θ's input batches gave it (``row_links``): a batch goes once θ has emitted its
  last row;
- ``AtPartitionEnd``: in θ's stage with other operators between (a broadcast join):
  the rest of its batches when θ's partition ends;
- ``AtStageEnd``: after a shuffle, in a later stage: its records once every partition of
  θ has ended, as Spark starts that stage once the map stage is done;
- ``AfterCombine``: an RDD join of inputs partitioned alike (no shuffle): its combiners,
  regenerated with Spark, once θ's partition has ended (its map-side combine reads the
  whole partition first).
"""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from .logs import Target


class Release:
    """How many of a fed operator's records θ's cursors (``upstream``) have completed."""

    how = ""  # what a jump's notes say of it

    def ready(self, upstream: dict, total: Callable[[], int]) -> int:
        """How many records are complete (``total()``: how many there are)."""
        raise NotImplementedError

    def ended(self, upstream: dict) -> bool:
        raise NotImplementedError


class AtStageEnd(Release):
    """Everything once every partition of θ has ended (a stage after a shuffle)."""

    how = ("ran after a shuffle, in a later Spark stage: steps give it its records once "
           "every partition of θ has ended, as Spark starts that stage once θ's is done")

    def ready(self, upstream: dict, total: Callable[[], int]) -> int:
        return total() if self.ended(upstream) else 0

    def ended(self, upstream: dict) -> bool:
        return all(paths.ended for paths in upstream.values())


class InThetasTask(Release):
    """An operator fed in θ's task on partition ``q``: it ends when θ's partition does."""

    def __init__(self, q: int) -> None:
        self.q = q

    def ended(self, upstream: dict) -> bool:
        paths = upstream.get(self.q)
        return paths is None or paths.ended


class AtPartitionEnd(InThetasTask):
    """The rest once θ's partition ``q`` has ended (rows not one-for-one with θ's)."""

    def __init__(self, q: int, why: str) -> None:
        super().__init__(q)
        self.how = (f"ran in θ's Spark stage, but {why}: which of θ's records each of its "
                    "batches waited for is not known, so a step leaves it where it is until "
                    "θ's partition ends, and then it takes the rest")

    def ready(self, upstream: dict, total: Callable[[], int]) -> int:
        return total() if self.ended(upstream) else 0


class AfterCombine(AtPartitionEnd):
    """A join of inputs partitioned alike: its map-side combine reads all of partition
    ``q`` of its inputs, θ's among them, before its merge gets a combiner."""

    def __init__(self, q: int) -> None:
        InThetasTask.__init__(self, q)
        self.how = ("is a join of inputs partitioned alike (no shuffle): its map-side "
                    "combine reads all of θ's partition before the merge gets a combiner, "
                    "so a step gives it its combiners, regenerated with Spark, when θ's "
                    "partition ends")


class ByRows(InThetasTask):
    """Partition ``q``'s records as θ emits their rows: ``links[i]`` is the rows θ's input
    batch ``i`` gave the operator (the last entry: after θ's input ended), ``ends`` the
    cumulative rows of its records (``row_links.links``)."""

    how = ("ran in θ's Spark stage after row-by-row operators (filters, projections, "
           "explodes): a step gives it each batch once θ has emitted the rows that "
           "complete it (the rows each of θ's batches gives it, computed with Spark)")

    def __init__(self, q: int, links: list[int], ends: np.ndarray) -> None:
        super().__init__(q)
        self.available = np.concatenate([[0], np.cumsum(links, dtype=np.int64)])
        self.ends = ends

    def ready(self, upstream: dict, total: Callable[[], int]) -> int:
        paths = upstream.get(self.q)
        if paths is None or paths.ended:
            return total()
        taken = min(c.position for c in paths.paths)
        rows = self.available[min(taken, len(self.available) - 1)]
        return min(int(np.searchsorted(self.ends, rows, "right")), total())


def release_for(logs: Any, inputs: Any, name: str, q: int) -> Release:
    """How steps release ``name``'s records on partition ``q`` (see the module)."""
    if not logs.same_stage_as_theta(name, q):
        return AtStageEnd()
    dag = getattr(logs, "dag", None)
    if dag is not None and getattr(dag.node(name), "copartitioned", False):
        return AfterCombine(q)
    try:
        links = inputs.links(name, q)
    except LookupError as why:
        return AtPartitionEnd(q, str(why))
    ends = record_ends(logs, name, q)
    if sum(links) != (ends[-1] if len(ends) else 0):
        return AtPartitionEnd(q, f"its {ends[-1] if len(ends) else 0} input rows on partition "
                                 f"{q} are not the {sum(links)} that θ's rows give through the "
                                 "operators between")
    return ByRows(q, links, ends)


def record_ends(logs: Any, name: str, q: int) -> np.ndarray:
    """Where each of ``name``'s records on ``q`` ends, in its input rows: a batch's rows
    from its worker's log, or one row a record (a row UDF's calls)."""
    log = logs.log(name, q)
    if log is not None and log.batch_rows is not None:
        return np.cumsum(log.batch_rows, dtype=np.int64)
    records = log.records_in if log is not None else 0
    return np.arange(1, records + 1, dtype=np.int64)


class OwnCounts:
    """Partition ``q`` of ``name``: its regenerated records (``records()``), handed over
    up to the count its worker logged at the interaction the debugger goes to (``at``),
    then as steps of θ complete them (``release``)."""

    def __init__(self, name: str, q: int, target: Callable[[int], Target],
                 records: Callable[[], list], release: Callable[[], Release]) -> None:
        self.name, self.q = name, q
        self.target, self.records = target, records
        self._release = release
        self._made: Release | None = None
        self.index: int | None = None
        self.jumped = self.stepped = False
        self.handed = 0

    @property
    def release(self) -> Release:
        made = self._made
        if made is None:
            made = self._made = self._release()
        return made

    def at(self, index: int) -> None:
        """The interaction the next feed goes to."""
        self.index, self.jumped = index, True

    def next_records(self, upstream: dict) -> list:
        if self.index is None:
            return []
        self.stepped = not self.jumped
        if self.jumped:  # where its worker stood at the interaction
            self.jumped = False
            target = self.target(self.index)
            if not target.count and not target.finished:
                return []  # not started: nothing to regenerate yet
            end = len(self.records()) if target.finished else target.count
        else:  # a step: what θ's records have completed since
            end = max(self.handed, self.release.ready(upstream, lambda: len(self.records())))
        fresh = self.records()[self.handed:end]
        self.handed += len(fresh)
        return fresh

    def complete(self, upstream: dict) -> bool:
        if self.index is None:
            return False
        if self.target(self.index).finished:
            return True
        return self.stepped and self.handed >= len(self.records()) and self.release.ended(upstream)


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
