"""A join's inputs' keys captured during a ``--lineage`` run (``SideKeys``), so that a
trace through the join reads them from the store instead of regenerating the inputs."""
from __future__ import annotations

import itertools
from array import array
from collections import defaultdict
from collections.abc import Callable, Iterable, Iterator
from typing import Any

from .artifacts import deliver
from .lineage import KEY_COLUMN, PARTITIONS, _keys_passing, key_column


class SideKeys:
    """``(partition, records) -> records``: a join's input under ``--lineage`` (before
    its values are tagged), its ``(key, value)`` records passed on unchanged, each
    one's key numbered as first seen (C calls only). When the partition's records run
    out, their keys in position order are written to the store
    (``layout.derived_keys_path``: one dictionary column ``key``, the input's partition
    count in the metadata), where a trace through the join reads them (Titian's
    key-based links: every record of the join's keys on each input) without
    regenerating the input."""

    def __init__(self, run: Any, node: int, partitions: int) -> None:
        self.run, self.node, self.partitions = run, node, partitions

    def __call__(self, split: int, records: Iterable) -> Iterator:
        number: dict = defaultdict(itertools.count().__next__)
        numbers = array("I")
        passing = _keys_passing(records, numbers.append, number.__getitem__)
        return itertools.chain(passing, _then(self._write, split, numbers, number))

    def _write(self, split: int, numbers: array, number: dict) -> None:
        from .channel import _run_has_ended

        if _run_has_ended(self.run):  # a trace or replay regenerating the input
            return
        column = key_column(numbers, list(number))
        if column is not None:
            deliver(self.run, "derived_keys", {"operator": self.node, "partition": split},
                    keys_table(column, self.partitions))


def keys_table(column: Any, partitions: int) -> Any:
    """A one-column ``key`` table, the node's partition count in its metadata."""
    import pyarrow as pa

    table = pa.table({KEY_COLUMN: column})
    return table.replace_schema_metadata({PARTITIONS: str(partitions).encode()})


def _then(call: Callable, *args: Any) -> Iterator:
    """No items: ``call(*args)`` once the iterator chained before it has run out."""
    call(*args)
    return
    yield  # a generator
