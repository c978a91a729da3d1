"""A ``partitionBy`` after θ's chain: where each record the reduce side reads came from.

A shuffle delivers a reduce partition's records map partition after map partition, in
fetch order, which varies from run to run; one map partition's records arrive together,
in the order the map side emitted them. So while recording, each map partition starts
with one marker record per reduce partition (``BlockMarks``: a chained iterator, nothing
of ours runs per record), and the reduce side's ``ShuffleRead`` host reads PySpark's
batches whole: a batch that starts with a marker starts the next map partition's block.
It logs (map partition, records) runs (``BlockRuns``, kind ``"shuffle_runs"``); replay
routes each map partition's outputs with the run's partitioner and feeds the operators
after the shuffle the logged runs of them, in order (``replay/order.py``). A join or
cogroup after θ's chain tags its map side's combiners instead (``OriginMerge``).
"""
from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from itertools import chain, count, repeat, tee
from operator import itemgetter
from typing import Any

from .host import WorkerHost
from .input_order import InputOrder, Origins
from .merge_order import HASH_PROBE, SPILLED
from .shipping import Shipped
from .spec import OperatorSpec
from .wrappers import GroupMerge, TaggedCombine

SHUFFLE_RUNS = "shuffle_runs"  # the replay-log kind of a ShuffleRead worker
_KEY, _VALUE = itemgetter(0), itemgetter(1)


def tag_positions(split: int, records: Iterable) -> Iterator[tuple]:
    """``(key, value)`` records to ``(key, (split, position, value))``, in C; positions
    marked ``SPILLED`` if the map side's merger spilled (``wrappers.Combined``)."""
    start = SPILLED if getattr(records, "spilled", False) else 0
    keys, values = tee(records)
    return zip(map(_KEY, keys), zip(repeat(split), count(start), map(_VALUE, values)))


class Marker:
    """The key of the record that starts map partition ``split``'s block of reduce
    partition ``partition``; PySpark's default partitioner (``portable_hash``: ``hash``)
    sends it there, and ``Marking`` does for any other."""

    __slots__ = ("split", "partition")

    def __init__(self, split: int, partition: int) -> None:
        self.split, self.partition = split, partition

    def __hash__(self) -> int:
        return self.partition

    def __reduce__(self) -> tuple:
        return Marker, (self.split, self.partition)


class BlockMarks:
    """The map side: one marker record per reduce partition before the records."""

    def __init__(self, partitions: int) -> None:
        self.partitions = partitions

    def __call__(self, split: int, records: Iterable) -> Iterator:
        marks = [(Marker(split, r), None) for r in range(self.partitions)]
        return chain(marks, records)


class Marking:
    """A user's partition function that also sends each marker to its partition."""

    def __init__(self, partition_func: Callable[[Any], int]) -> None:
        self.partition_func = partition_func

    def __call__(self, key: Any) -> int:
        if key.__class__ is Marker:
            return key.partition
        return self.partition_func(key)


class BlockRuns(InputOrder):
    """Which map partition each record read came from, as (map partition, first
    position) pairs: one per block, noted per batch (records pass in C)."""

    kind = SHUFFLE_RUNS

    def read(self, batches: Iterable[list],
             tap: Callable[[Iterable[list]], Iterable[list]] | None = None) -> Iterator:
        """PySpark's batches of ``(key, value)`` records, flattened, markers dropped
        (``tap``: sees each batch so)."""
        noted = self._noted(batches)
        return chain.from_iterable(noted if tap is None else tap(noted))

    def _noted(self, batches: Iterable[list]) -> Iterator[list]:
        starts, position = self.starts, 0
        for batch in batches:
            first = batch[0][0] if batch else None
            if first.__class__ is Marker:
                starts.append(first.split)
                starts.append(position)
                position += len(batch) - 1
                yield batch[1:]
            else:
                position += len(batch)
                yield batch

    def replay_log(self, log: dict | None, consumed: int) -> tuple[dict, bytes]:
        log, body = super().replay_log(log, consumed)
        return dict(log, hash_probe=hash(HASH_PROBE)), body


def _as_read(records: Iterable) -> Iterable:
    return records


class ShuffleRead(Shipped):
    """The reduce side of a marked ``partitionBy``: a stateless worker that reads the
    shuffle's batches and logs its blocks' order; in replay (the records, in that order)
    it passes them on. ``route`` is the run's partitioner, for replay."""

    def __init__(self, spec: OperatorSpec, partitions: int,
                 partition_func: Callable[[Any], int]) -> None:
        self.spec = spec
        self.partitions, self.partition_func = partitions, partition_func

    def route(self, key: Any) -> int:
        """The reduce partition of ``key`` (as PySpark's ``partitionBy`` computes it)."""
        return self.partition_func(key) % self.partitions

    def __call__(self, split: int, batches: Iterable[list]) -> Iterator:
        host = WorkerHost(self.spec, split)
        host.order = order = BlockRuns()
        host.user_function = _as_read  # stateless, in the run as in replay
        return host.run_partition(_as_read, order.read(batches, host.keyed_batches))

    def replay(self, partition: int, records: Iterable) -> Iterator:
        host = WorkerHost(self.spec, partition)
        host.user_function = _as_read
        return host.run_partition(_as_read, records)


class OriginMerge(GroupMerge):
    """The reduce side of a join or cogroup that reads θ's chain: it logs where each
    combiner came from (map partition of the inputs' union, position). Replay rebuilds
    θ's side's combiners with ``combine`` from θ's replayed outputs (``offsets``: where
    each input's partitions start in the union) and hands the merge untagged ones."""

    def __init__(self, merge: GroupMerge, combine: TaggedCombine, offsets: list[int]) -> None:
        super().__init__(merge.spec, merge.dispatch, merge.flat, merge.memory,
                         merge.serializer)
        self.combine, self.offsets = combine, offsets

    def __call__(self, split: int, iterator: Iterable) -> Iterator:
        return self.merged(split, iterator, Origins())

    def replay(self, partition: int, combiners: Iterable) -> Iterator:
        return self.merged(partition, combiners, InputOrder())
