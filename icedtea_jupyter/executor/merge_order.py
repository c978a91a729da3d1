"""The order PySpark's spilling merger gives its combiners in, made one replay can rebuild.

A key-based aggregation merges with ``pyspark.shuffle.ExternalMerger`` (``ExternalGroupBy``
for groups). Kept in memory, it outputs its keys in the order it first saw them. Once the
process's memory passes the limit (``spark.python.worker.memory``, and the check is on
the whole process, so a big kernel or a long-lived worker passes it on small data), it
spills, and then outputs bucket by bucket (``hash((key, seed)) % partitions``), each bucket
in first-seen order — with a seed PySpark takes from the merger's address.

So the mergers here have a fixed seed and do not re-split a bucket (``new_merger``), and
replay merges in memory (``memory = inf``) and puts its combiners in the run's order
where the run's merger spilled (``spilled_order``: a stable sort by bucket, which leaves
an order already bucketed as it is). A map side marks the positions it tags its
combiners with (``SPILLED``), so the reduce side's log tells replay which map
partitions spilled.
"""
from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

SEED = 0x1CED  # the buckets' seed (PySpark's: the merger's address, different each time)
BUCKETS = 59  # PySpark's default
SPILLED = 1 << 31  # on a combiner's position tag: its map partition's merger spilled
POSITION = SPILLED - 1  # a position tag's bits that hold the position
REPLAY_RUN_ID = "icedtea-replay"  # the run id of a replayed worker's spec
HASH_PROBE = "icedtea-jupyter hash probe"  # hashed in the workers and in replay


def new_merger(cls: type, aggregator: Any, memory: float, serializer: Any,
               replaying: bool = False) -> Any:
    """A PySpark merger of class ``cls`` whose output order replay can rebuild: in memory
    when ``replaying``, else spilling past ``memory`` MB into buckets of a fixed seed."""
    merger = cls(aggregator, math.inf if replaying else memory, serializer,
                 partitions=BUCKETS)
    merger._seed = SEED
    merger.MAX_TOTAL_PARTITIONS = 0  # never re-split a bucket with a seed of its own
    return merger


def has_spilled(merger: Any) -> bool:
    """Whether ``merger``, its input merged, outputs bucket by bucket (it spilled)."""
    return bool(merger.spills)


def bucket(key: Any) -> int:
    """The bucket a spilled merger of ours keeps ``key`` in (hashed as in its process)."""
    return hash((key, SEED)) % BUCKETS


def spilled_order(buckets: Sequence[int]) -> list[int]:
    """The positions of combiners listed in first-seen order, with the buckets of their
    keys, in the order a spilled merger outputs them."""
    return sorted(range(len(buckets)), key=buckets.__getitem__)


def position(tag: int) -> tuple[int, bool]:
    """A position tag as (position, whether its map partition spilled)."""
    return tag & POSITION, bool(tag & SPILLED)
