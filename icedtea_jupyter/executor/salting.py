"""Splitting heavy keys over several partitions (Reshape's split by keys, as a rewrite).

``Salt(heavy, salts)`` gives each record of a heavy key the key ``Salted(key, s)``, with
``s`` going round ``range(salts)`` (deterministically: from the partition's index and the
record's position), so Spark's partitioner spreads the key's records over up to
``salts`` reduce partitions; the other keys are left as they are. After a first
aggregation, ``unsalt`` gives the partial results their keys back, and a second one
merges them: an associative aggregation gives the same answer (``s.mitigate()``).
"""
from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any


class Salted(tuple):
    """``(key, salt)``: a heavy key's share; hashed like the tuple (``portable_hash``)."""

    __slots__ = ()

    def __new__(cls, key: Any, salt: int) -> Salted:
        return super().__new__(cls, (key, salt))

    def __getnewargs__(self) -> tuple:
        return tuple(self)

    def __repr__(self) -> str:
        return f"Salted({self[0]!r}, {self[1]})"


class Salt:
    """``(partition, records) -> records`` with the heavy keys salted."""

    def __init__(self, heavy: Iterable, salts: int) -> None:
        if salts < 2:
            raise ValueError(f"salts must be at least 2, not {salts}")
        self.heavy, self.salts = frozenset(heavy), salts

    def __call__(self, split: int, records: Iterable) -> Iterator:
        heavy, salts = self.heavy, self.salts
        for i, record in enumerate(records, split):
            key = record[0]
            yield (Salted(key, i % salts), record[1]) if key in heavy else record


def unsalt(pair: tuple) -> tuple:
    """A partial result of a salted key, with its key back; any other pair as it is."""
    key = pair[0]
    return (key[0], pair[1]) if type(key) is Salted else pair


def is_salted(pair: tuple) -> bool:
    return type(pair[0]) is Salted


def not_salted(pair: tuple) -> bool:
    return type(pair[0]) is not Salted
