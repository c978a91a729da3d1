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
from collections.abc import Callable, Iterator
from typing import Any

from ..executor.agent import Agent
from ..executor.picks import picked_stream
from .fields import plain_fields
from .reports import PartitionReports
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


class SamplesCoordinator(PartitionReports):
    """Merges each operator's reservoirs and writes the sample when the run ends."""

    def finish(self) -> None:
        if self.run is None:
            return
        from ..store.agent_files import write_sample

        rng = random.Random()
        for operator, parts in self.reports().items():
            merged = merge_reservoirs([(p["count"], p["records"]) for p in parts],
                                      parts[0].get("size", SIZE), rng)
            rows = [dict(record, _partition=parts[i]["worker"]["partition"])
                    for i, record in merged]
            write_sample(self.run.path, operator, rows)


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
