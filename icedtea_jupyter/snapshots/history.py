"""The interaction history of a run: ``run.interactions``, and each worker's view at an
interaction, behind ``run.snapshot(k)`` (``snapshot.py``).

Built from two lists, live from the coordinator or reloaded from the store: the
interactions in order, and every worker's reports (count, status, state delta).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..dag import Dag
from ..executor.state import decode
from ..executor.timetravel import FINAL
from .deltas import apply_delta
from .snapshot import Snapshot

OUTSIDE = "outside θ's chain"  # a later stage, or another Python process after a union


def busiest(status: str, count: int | None) -> tuple[int, int]:
    """Which of an operator's workers on one partition is shown when it ran in several
    tasks: one running past its first record, then a finished one, then the rest; the
    furthest along among equals. (``History.view`` and the debugger share this rule.)"""
    if status == "running" and count:
        rank = 3
    elif status == "finished":
        rank = 2
    else:
        rank = 0 if status == "not started" else 1
    return rank, count or 0


@dataclass(frozen=True)
class Interaction:
    """One moment of the run: ``counts`` maps (operator, partition) to records processed."""

    index: int
    time: float
    trigger: str  # "initial", "manual", "periodic" or "condition"
    counts: dict = field(repr=False)
    record: dict | None = field(default=None, repr=False)
    latency: float | None = None
    complete: bool = True


@dataclass(frozen=True)
class InteractionMark:
    """An interaction without its counts: what a timeline draws, read without going
    through every worker's reports (``run.interaction_marks()``)."""

    index: int
    time: float
    trigger: str
    complete: bool = True

    @classmethod
    def of(cls, raw: dict) -> InteractionMark:
        return cls(raw["index"], raw["time"], raw["trigger"], bool(raw.get("complete", True)))


def marks(raw: list[dict]) -> list[InteractionMark]:
    """The marks of interactions as the book or the store lists them, in order."""
    return [InteractionMark.of(r) for r in sorted(raw, key=lambda r: r["index"])]


@dataclass
class WorkerView:
    operator: str
    partition: int
    status: str  # "running", "not started", "finished", "outside θ's chain", "no snapshot"
    count: int | None
    encoded: dict | None = field(default=None, repr=False)


class History:
    """The interaction history of a run and the snapshots behind it."""

    def __init__(self, interactions: list[dict], entries: list[dict], dag: Dag,
                 workers: list[dict]) -> None:
        self.dag = dag
        self.raw = sorted(interactions, key=lambda i: i["index"])
        self.entries = entries
        self.workers = workers  # lifecycle rows: operator, partition, attempt, task, started, ended...
        self._chains = self._chains_by_worker()
        self._by_worker: dict[tuple, list] = {}
        for (op, part, task), chain in self._chains.items():
            self._by_worker.setdefault((op, part), []).append((task, chain))
        self._position_cache: dict[int, dict[Any, int]] = {}  # id(chain) -> positions
        self._attempts: dict[tuple, list] = {}
        for w in self.workers:
            self._attempts.setdefault((w["operator"], w["partition"]), []).append(w)

    @classmethod
    def from_store(cls, store: Any, dag: Dag, workers: list[dict]) -> History:
        """The history a ``RunStore`` kept."""
        return cls(store.interactions(), store.snapshot_reports(), dag, workers)

    def _chains_by_worker(self) -> dict[tuple, list[dict]]:
        chains: dict[tuple, list[dict]] = {}
        for entry in self.entries:
            w = entry["worker"]
            chains.setdefault((w["operator"], w["partition"], w["task"]), []).append(entry)
        return chains

    # --- interactions -------------------------------------------------------------------
    def interactions(self) -> list[Interaction]:
        return [self._interaction(raw) for raw in self.raw]

    def _interaction(self, raw: dict) -> Interaction:
        counts = {(v.operator, v.partition): v.count
                  for v in self.views(raw["index"], states=False)}
        return Interaction(raw["index"], raw["time"], raw["trigger"], counts, raw.get("record"),
                           raw.get("latency"), bool(raw.get("complete", True)))

    def interaction_time(self, index: int) -> float:
        if 0 <= index < len(self.raw) and self.raw[index]["index"] == index:
            return self.raw[index]["time"]
        for raw in self.raw:
            if raw["index"] == index:
                return raw["time"]
        raise IndexError(f"no interaction I{index}: this run has I0..I{len(self.raw) - 1}")

    # --- workers at an interaction -----------------------------------------------------------
    def partitions(self, node: Any) -> list[int]:
        seen = {w["partition"] for w in self.workers if w["operator"] == node.id}
        seen |= {c[1] for c in self._chains if c[0] == node.id}
        if node.partitions:
            seen |= set(range(node.partitions))
        return sorted(seen)

    def views(self, index: int, states: bool = True) -> list[WorkerView]:
        when = self.interaction_time(index)
        return [self.view(index, node, p, when, states) for node in self.dag.g_theta
                if node.kind == "python" for p in self.partitions(node)]

    def view(self, index: int, node: Any, partition: int, when: float | None = None,
             states: bool = True) -> WorkerView:
        """A worker at an interaction; ``states=False`` leaves its state out (faster).

        An operator that ran in several successful tasks on one partition (on two paths
        from an uncached θ, or in two jobs) shows the task where it was running, the
        furthest along if several were (``busiest``)."""
        when = self.interaction_time(index) if when is None else when
        tasks = {task for task, _ in self._by_worker.get((node.id, partition), [])}
        tasks |= {w["task"] for w in self._attempts.get((node.id, partition), [])}
        failed = {w["task"] for w in self._attempts.get((node.id, partition), [])
                  if w.get("status") in ("failed", "lost", "killed")}
        views = [self.view_in_task(index, node, partition, task, when, states)
                 for task in sorted(tasks - failed or tasks, reverse=True)]
        if not views:
            return WorkerView(node.name, partition, "not started", 0)
        return max(views, key=lambda v: busiest(v.status, v.count))

    def view_in_task(self, index: int, node: Any, partition: int, task: int,
                     when: float | None = None, states: bool = True) -> WorkerView:
        """The worker of one Spark task at an interaction."""
        when = self.interaction_time(index) if when is None else when
        chain = self._chains.get((node.id, partition, task))
        if chain:
            view = self._from_chain(chain, index, node.name, partition, when, states)
            if view is not None:
                return view
        attempts = [w for w in self._attempts.get((node.id, partition), [])
                    if w["task"] == task]
        started = [w for w in attempts if (w.get("started") or 0) <= when]
        if not started:
            return WorkerView(node.name, partition, "not started", 0)
        ended = [w for w in started if w.get("ended") and w["ended"] <= when]
        if ended:
            return WorkerView(node.name, partition, "finished", ended[-1].get("records_in"))
        return WorkerView(node.name, partition, "no snapshot", None)

    def _positions(self, chain: list[dict]) -> dict[Any, int]:
        """Where in ``chain`` each interaction's first report is (and the final one's)."""
        positions = self._position_cache.get(id(chain))
        if positions is None:
            positions = {}
            for at, entry in enumerate(chain):
                positions.setdefault(entry["index"], at)
            self._position_cache[id(chain)] = positions
        return positions

    def _from_chain(self, chain: list[dict], index: int, operator: str, partition: int,
                    when: float, states: bool = True) -> WorkerView | None:
        """The worker's view at ``index`` from its own reports, in arrival order.

        A running worker answers interactions in order, so no report for ``index``
        means it started later (its first report is younger than the interaction), or
        ended before its next check (then its final state is its state at ``index``).
        Without ``states`` it reads one report (the interactions list of a long run
        reads every worker at every interaction)."""
        positions = self._positions(chain)
        at = positions.get(index)
        first = chain[0]
        if at is None and first["time"] > when and first["index"] != FINAL:
            initial = apply_delta(None, first["delta"]) if states and "delta" in first \
                and first["index"] == 0 and not first.get("count") else None
            return WorkerView(operator, partition, "not started", 0, initial)
        encoded = None
        if states:
            for entry in chain[:len(chain) if at is None else at + 1]:
                if "delta" in entry:
                    encoded = apply_delta(encoded, entry["delta"])
        if at is not None:
            reported = chain[at]
            if reported["status"] == "later":  # a DataFrame operator's report has its state
                return WorkerView(operator, partition, OUTSIDE, reported["count"],
                                  encoded if "delta" in reported else None)
            return WorkerView(operator, partition, "running", reported["count"], encoded)
        final = positions.get(FINAL)
        if final is not None:
            return WorkerView(operator, partition, "finished", chain[final]["count"], encoded)
        return None

    def snapshot(self, index: int) -> Snapshot:
        return Snapshot(self, self._interaction(self._raw(index)))

    def points(self) -> list[dict[int, int | None]]:
        """θ's count on each partition at each interaction after I0 (0: not started,
        None: ended), as ``--interact-at`` takes them; a partition without a count is
        left out."""
        theta = self.dag.interesting
        if theta is None:
            return []
        points = []
        for raw in self.raw[1:]:
            point: dict[int, int | None] = {}
            for partition in self.partitions(theta):
                view = self.view(raw["index"], theta, partition, states=False)
                if view.status in ("finished", "not started", "running") \
                        and view.count is not None:
                    point[partition] = None if view.status == "finished" else view.count
            points.append(point)
        return points

    def final_state(self, node: Any, partition: int) -> dict | None:
        """A worker's state in its last report, when its partition ended (None: no report)."""
        ended = [(task, chain) for (op, part, task), chain in self._chains.items()
                 if op == node.id and part == partition
                 and any(e["index"] == FINAL for e in chain)]
        if not ended:
            return None
        encoded = None
        for entry in max(ended, key=lambda c: c[0])[1]:
            if "delta" in entry:
                encoded = apply_delta(encoded, entry["delta"])
        return None if encoded is None else decode(encoded)

    def _raw(self, index: int) -> dict:
        if not 0 <= index < len(self.raw):
            raise IndexError(f"no interaction I{index}: this run has I0..I{len(self.raw) - 1}")
        return self.raw[index]

