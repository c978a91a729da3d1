"""Samples: a uniform reservoir sample of every operator's input (``--agent samples``).

Each worker keeps a reservoir of ``K`` records of its input, picked by skip counts
(Li's "algorithm L", ``Agent.input_picks``): between two picks the records pass through
``islice`` in C, so most records cost nothing. At its end a worker sends its reservoir and its input count;
the coordinator merges the reservoirs of an operator's partitions into one uniform
sample of ``K`` records and writes it to the run store (``samples/op<o>.parquet``), one
row per record with its partition. ``run.samples(operator)`` reads it as a DataFrame.
"""
from __future__ import annotations

import random
import threading
from collections.abc import Callable, Iterator
from typing import Any

from ..coordinator.agent import CoordinatorAgent
from ..executor.agent import Agent
from ..executor.picks import picked_stream
from .fields import plain_fields
from .streams import algorithm_l_gaps

SIZE = 100  # K: records kept per operator


def reservoir_stream(records: Iterator, reservoir: list, size: int,
                     rng: random.Random) -> Iterator:
    """``records`` unchanged, while ``reservoir`` becomes a uniform sample of ``size`` of
    them (algorithm L: the gap to the next pick is drawn; the gap passes in C)."""
    return picked_stream(records, [(algorithm_l_gaps(size, rng),
                                    reservoir_taker(reservoir, size, rng))])


def reservoir_taker(reservoir: list, size: int, rng: random.Random) -> Callable[[Any], None]:
    """Keeps a picked record: appended while the reservoir fills, then in a random slot."""
    def take(record: Any) -> None:
        if len(reservoir) < size:
            reservoir.append(record)
        else:
            reservoir[rng.randrange(size)] = record
    return take


def merge_reservoirs(parts: list[tuple[int, list]], size: int,
                     rng: random.Random) -> list[tuple[int, Any]]:
    """One uniform sample of ``size`` from the union of the parts' inputs: each part is
    (its input count, a uniform sample of it), each pick from a part chosen in proportion
    to its records not yet picked. Returns (part index, record) pairs."""
    left = [n for n, _ in parts]
    pools = [list(sample) for _, sample in parts]
    merged: list[tuple[int, Any]] = []
    while len(merged) < size and any(pools):
        weights = [left[i] if pools[i] else 0 for i in range(len(parts))]
        i = rng.choices(range(len(parts)), weights=weights)[0]
        merged.append((i, pools[i].pop(rng.randrange(len(pools[i])))))
        left[i] -= 1
    return merged


class SamplesCoordinator(CoordinatorAgent):
    """Merges each operator's reservoirs and writes the sample when the run ends."""

    def __init__(self) -> None:
        super().__init__()
        self.parts: dict[tuple[int, int], dict] = {}  # (operator, partition): its reservoir
        self._lock = threading.Lock()
        self.run: Any = None

    def init(self, run: Any) -> None:
        self.run = run

    def receive_message(self, worker: dict, payload: Any) -> None:
        key = (worker["operator"], worker["partition"])
        with self._lock:  # a partition's later job or retry replaces its earlier one
            self.parts[key] = dict(payload, worker=worker)

    def finish(self) -> None:
        if self.run is None:
            return
        from ..store.agent_files import write_sample

        ok = successful_attempts(self.run)
        by_operator: dict[int, list[dict]] = {}
        with self._lock:
            for (operator, _), part in sorted(self.parts.items()):
                if ok is None or _attempt(part["worker"]) in ok:
                    by_operator.setdefault(operator, []).append(part)
        rng = random.Random()
        for operator, parts in by_operator.items():
            merged = merge_reservoirs([(p["count"], p["records"]) for p in parts],
                                      parts[0].get("size", SIZE), rng)
            rows = [dict(record, _partition=parts[i]["worker"]["partition"])
                    for i, record in merged]
            write_sample(self.run.path, operator, rows)


def successful_attempts(run: Any) -> set[tuple] | None:
    """The task attempts that ended well (None: the run has no coordinator to ask)."""
    coordinator = getattr(run, "coordinator", None)
    if coordinator is None:
        return None
    return {_attempt(state) for _, state in coordinator.worker_states()
            if state.get("status") == "ok"}


def _attempt(worker: dict) -> tuple:
    return (worker["operator"], worker["partition"], worker["stage"], worker["attempt"],
            worker["task"])


class SamplesAgent(Agent):
    """Keeps a reservoir of ``size`` input records; sends it when the worker ends."""

    name = "samples"
    coordinator = SamplesCoordinator
    size = SIZE

    def __init__(self) -> None:
        super().__init__()
        self.reservoir: list = []
        self.rng = random.Random()
        self._keep = reservoir_taker(self.reservoir, self.size, self.rng)

    def input_picks(self) -> Iterator[int]:
        return algorithm_l_gaps(self.size, self.rng)

    def take(self, record: Any) -> None:
        self._keep(record)

    def finish(self) -> None:
        if self.context is not None:
            self.send_to_coordinator({"count": self.context.counts()["records_in"],
                                      "size": self.size,
                                      "records": [plain_fields(r) for r in self.reservoir]})
