"""A join's key-based links (Titian): its output of key K to every record of key K on
each input, found through the keys of the records on either side.

The keys of a partition's records, in position order, are fetched by one Spark job
over every (node, partition) a step lacks (back: the join's output on the partitions
the trace crosses and every partition of each input; forward: the crossed partitions
of the input and every partition of the join) and kept in the store,
``lineage/derived/keys-op<o>-p<p>.arrow`` (column ``key``, the node's partition count
in its metadata): later traces, in this kernel or a reopened run, read them. Keys that
are not plain values to Arrow (tuples, mixed types) are kept in memory only.
"""
from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeAlias

import pyarrow as pa
import pyarrow.compute as pc

from ..store import layout
from .records import Positions, key_columns

KEY = "key"
PARTITIONS = b"partitions"  # the node's partition count, in each file's metadata
_PLAIN = (pa.string(), pa.large_string(), pa.binary(), pa.int64(), pa.float64(), pa.bool_(),
          pa.null())  # null: no records, or every key None
Column: TypeAlias = "pa.Array | list[Any]"


class JoinKeys:
    """The keys of joins' and their inputs' records, partition by partition."""

    def __init__(self, store_path: str, rdd_of: Callable[[int], Any]) -> None:
        self.store_path = store_path
        self.rdd_of = rdd_of  # node -> its RDD in this kernel, or None (a reopened run)
        self._columns: dict[tuple[int, int], Column] = {}
        self._partitions: dict[int, int] = {}

    def partitions(self, node: int) -> int | None:
        """How many partitions ``node`` has (None: unknown, a reopened run none kept)."""
        if node not in self._partitions:
            rdd = self.rdd_of(node)
            files = [] if rdd is not None else layout.derived_keys_files(self.store_path, node)
            if rdd is not None:
                self._partitions[node] = rdd.getNumPartitions()
            elif files:
                with pa.memory_map(files[0]) as source:
                    schema = pa.ipc.open_file(source).schema
                self._partitions[node] = int((schema.metadata or {})[PARTITIONS])
        return self._partitions.get(node)

    def prepare(self, wanted: dict[int, list[int] | None]) -> bool:
        """Have the keys of each node's records on its partitions (None: every one):
        kept, else fetched in one job and kept. False: some are neither kept nor can be
        fetched (a reopened run whose recording kernel traced no such step)."""
        missing: dict[int, list[int]] = {}
        for node, parts in wanted.items():
            count = self.partitions(node)
            if count is None:
                return False
            lacking = [p for p in (range(count) if parts is None else parts)
                       if (node, p) not in self._columns and not self._read(node, p)]
            if lacking:
                missing[node] = lacking
        rdds = {node: self.rdd_of(node) for node in missing}
        if not missing or any(rdd is None for rdd in rdds.values()):
            return not missing
        fetched = key_columns({node: (rdds[node], parts) for node, parts in missing.items()})
        for (node, part), keys in fetched.items():
            self._columns[(node, part)] = self._keep(node, part, keys)
        return True

    def add(self, node: int, part: int, keys: list) -> None:
        """Keep the keys of ``node``'s records on ``part`` that another job fetched (the
        map side's after the join, in the same pass)."""
        if self.partitions(node) is not None:
            self._columns[(node, part)] = self._keep(node, part, keys)

    def keys_at(self, node: int, positions: Positions) -> set:
        """The keys of ``node``'s records at ``positions``."""
        found: set = set()
        for part, wanted in positions.items():
            column = self._columns.get((node, part))
            inside = sorted(p for p in wanted if column is not None and 0 <= p < len(column))
            if isinstance(column, pa.Array):
                found.update(column.take(pa.array(inside, pa.int64())).to_pylist())
            elif column is not None:
                found.update(column[p] for p in inside)
        return found

    def with_keys(self, node: int, keys: set) -> Positions:
        """The positions of ``node``'s records whose key is one of ``keys``."""
        found: Positions = {}
        for part in range(self.partitions(node) or 0) if keys else ():
            column = self._columns.get((node, part))
            hits = _positions_of(column, keys) if column is not None else set()
            if hits:
                found[part] = hits
        return found

    def _read(self, node: int, part: int) -> bool:
        try:
            with pa.memory_map(layout.derived_keys_path(self.store_path, node, part)) as source:
                table = pa.ipc.open_file(source).read_all()
        except FileNotFoundError:
            return False
        self._columns[(node, part)] = table.column(KEY).combine_chunks()
        return True

    def _keep(self, node: int, part: int, keys: list) -> Column:
        """Write the keys to the store as an Arrow column when they are plain values
        (a read-only store, or other keys: kept in memory only)."""
        try:
            column = pa.array(keys)
        except (pa.ArrowException, OverflowError, TypeError, ValueError):
            return keys
        if column.type not in _PLAIN:
            return keys
        schema = pa.schema([(KEY, column.type)],
                           metadata={PARTITIONS: str(self._partitions[node]).encode()})
        path = layout.derived_keys_path(self.store_path, node, part)
        try:
            with layout.whole_file(path) as tmp, pa.OSFile(tmp, "wb") as sink, \
                    pa.ipc.new_file(sink, schema) as writer:
                writer.write_table(pa.table({KEY: column}, schema=schema))
        except OSError:
            pass
        return column


def _positions_of(column: Column, keys: set) -> set[int]:
    if isinstance(column, pa.Array):
        try:
            value_set = pa.array(list(keys), column.type)
        except (pa.ArrowException, OverflowError, TypeError, ValueError):
            column = column.to_pylist()
        else:
            return set(pc.indices_nonzero(pc.is_in(column, value_set=value_set)).to_pylist())
    return {position for position, key in enumerate(column) if key in keys}
