"""A ``partitionBy`` after θ's chain: where each record the reduce side reads came from.

A shuffle delivers a reduce partition's records map partition after map partition, in
fetch order, which varies from run to run. While recording, the map side tags each
record's value with its map partition and position (C iterators: nothing of ours runs
per record there) and the reduce side's ``ShuffleRead`` host strips the tags, logging
them (``input_order.Origins``, kind ``"origins"``): replay feeds the operators after the
shuffle exactly the records θ's chain emitted, in the order the run read them. A join
or cogroup after θ's chain does the same with its map side's combiners (``OriginMerge``).
"""
from __future__ import annotations

from array import array
from collections.abc import Iterable, Iterator
from functools import partial
from itertools import count, filterfalse, repeat, tee
from operator import itemgetter

from .host import WorkerHost
from .input_order import InputOrder, Origins
from .shipping import Shipped
from .spec import OperatorSpec
from .wrappers import GroupMerge, TaggedCombine

_KEY, _VALUE, _THIRD, _PAIR = itemgetter(0), itemgetter(1), itemgetter(2), itemgetter(0, 1)


def tag_positions(split: int, records: Iterable) -> Iterator[tuple]:
    """``(key, value)`` records to ``(key, (split, position, value))``, in C."""
    keys, values = tee(records)
    return zip(map(_KEY, keys), zip(repeat(split), count(), map(_VALUE, values)))


class _Arrivals(Origins):
    """The origins of the records read, noted as each one is untagged: C iterators
    only (a tee per field, ``array.append`` as a filter that keeps everything)."""

    def __init__(self) -> None:
        super().__init__()
        self.splits, self.positions = array("I"), array("I")

    def untag_all(self, records: Iterable) -> Iterator:
        keys, tagged = tee(records)
        splits, positions, values = tee(map(_VALUE, tagged), 3)
        noted = zip(filterfalse(self.splits.append, map(_KEY, splits)),
                    filterfalse(self.positions.append, map(_VALUE, positions)))
        return map(_PAIR, zip(map(_KEY, keys), map(_THIRD, values), noted))

    def replay_log(self, log: dict | None, consumed: int) -> tuple[dict, bytes]:
        n = min(consumed, len(self.splits), len(self.positions))
        self.pairs = array("I", bytes(8 * n))
        self.pairs[0::2], self.pairs[1::2] = self.splits[:n], self.positions[:n]
        return super().replay_log(log, consumed)


def _untag(order: _Arrivals, records: Iterable) -> Iterator:
    return order.untag_all(records)  # not a generator: the worker has no state


def _as_read(records: Iterable) -> Iterable:
    return records


class ShuffleRead(Shipped):
    """The reduce side of a tagged ``partitionBy``: a stateless worker that strips the
    tags and logs their order; in replay (untagged records, in that order) it passes
    them on."""

    def __init__(self, spec: OperatorSpec) -> None:
        self.spec = spec

    def __call__(self, split: int, records: Iterable) -> Iterator:
        host = WorkerHost(self.spec, split)
        host.order = order = _Arrivals()
        host.user_function = _as_read  # stateless, in the run as in replay
        return host.run_partition(partial(_untag, order), records)

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
