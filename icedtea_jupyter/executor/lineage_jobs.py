"""What Spark runs in its Python workers for a lineage trace (not during the run): the
records at wanted positions of an operator's regenerated input (``Picker``,
``KeepPositions``), and the keys of a map side's or a join's regenerated records
(``KeyIndex``, ``KeyNumbers``, ``TappedKeyNumbers``, ``KeyColumn``) from which a trace
derives Titian's key-based links. Run by ``lineage/records.py``, ``steps.py`` and
``replay.py``; the capture during the run is ``lineage.py``."""
from __future__ import annotations

import itertools
from array import array
from collections import defaultdict
from collections.abc import Callable, Iterable, Iterator
from operator import itemgetter
from typing import Any

_KEY = itemgetter(0)


class Picker:
    """``(partition, records) -> [(partition, position, record)]`` for the wanted
    positions (all of a partition's records where ``wanted`` maps it to None)."""

    def __init__(self, wanted: dict[int, list[int] | None]) -> None:
        self.wanted = wanted

    def __call__(self, split: int, records: Iterable) -> Iterator[tuple[int, int, Any]]:
        want = self.wanted.get(split)
        if want is None:
            for position, record in enumerate(records):
                yield split, position, record
            return
        keep, last = set(want), max(want, default=-1)
        for position, record in enumerate(records):
            if position > last:
                return
            if position in keep:
                yield split, position, record


class KeyIndex:
    """``(partition, records) -> [(partition, {key: positions})]``: where each key
    (``record[0]``) stands in a partition (a map side's key-based links)."""

    def __call__(self, split: int, records: Iterable) -> Iterator[tuple[int, dict]]:
        index: dict = defaultdict(lambda: array("q"))
        for position, record in enumerate(records):
            index[record[0]].append(position)
        yield split, dict(index)


class KeyNumbers:
    """``(partition, records) -> [(partition, numbers)]``: each record's key
    (``record[0]``) numbered in the order first seen in the partition, as PySpark's
    merger orders its combiners: input k of a map side is linked with its combiner
    ``numbers[k]`` (an ``array('I')``, numbered by C calls only)."""

    def __call__(self, split: int, records: Iterable) -> Iterator[tuple[int, array]]:
        number: dict = defaultdict(itertools.count().__next__)
        yield split, array("I", map(number.__getitem__, map(_KEY, records)))


class TappedKeyNumbers:
    """``(partition, records) -> [(partition, numbers, keys)]``: ``KeyNumbers`` of what
    ``function`` (an operator's partition function) outputs from ``records`` (a join's
    outputs), and those records' keys in position order, in one pass over them."""

    def __init__(self, function: Callable) -> None:
        self.function = function

    def __call__(self, split: int, records: Iterable) -> Iterator[tuple[int, array, list]]:
        records, keys = iter(records), []

        def tapped() -> Iterator:
            for record in records:
                keys.append(record[0])
                yield record
        number: dict = defaultdict(itertools.count().__next__)
        numbers = array("I", map(number.__getitem__, map(_KEY, self.function(split, tapped()))))
        keys.extend(map(_KEY, records))  # what the function left unread
        yield split, numbers, keys


class KeyColumn:
    """``(partition, records) -> [(tag, partition, keys)]``: each record's key
    (``record[0]``) in position order, tagged (a join's or a join input's keys, fetched
    by several RDDs in one job)."""

    def __init__(self, tag: int) -> None:
        self.tag = tag

    def __call__(self, split: int, records: Iterable) -> Iterator[tuple[int, int, list]]:
        yield self.tag, split, list(map(_KEY, records))


class KeepPositions:
    """``(partition, records) -> records`` at the wanted positions of each partition."""

    def __init__(self, wanted: dict[int, set[int]]) -> None:
        self.wanted = wanted

    def __call__(self, split: int, records: Iterable) -> Iterator:
        keep = self.wanted.get(split, set())
        return (record for position, record in enumerate(records) if position in keep)
