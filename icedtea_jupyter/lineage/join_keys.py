"""A join's key-based links (Titian): its output of key K to every record of key K on
each input, found through the keys of the records on either side.

The keys of a partition's records, in position order, are captured during the run
when they are strings or integers: each input's by a tap before the join's map side
(``executor/lineage.SideKeys``, ``lineage/derived/keys-op<o>-p<p>.arrow``), the
join's outputs' by its reduce side (its lineage file's ``key`` column), both Arrow
dictionary columns. Others (tuples, mixed types, runs recorded before) are fetched by
one Spark job over every (node, partition) a step lacks (back: the join's output on
the partitions the trace crosses and every partition of each input; forward: the
crossed partitions of the input and every partition of the join) and kept in the
store the same way (column ``key``, the node's partition count in its metadata), or
in memory only if they are not plain values to Arrow.
"""
from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeAlias

import pyarrow as pa
import pyarrow.compute as pc

from ..executor.lineage import JOINS, PARTITIONS, write_links
from ..executor.lineage import KEY_COLUMN as KEY
from ..store import layout
from .records import Positions, key_columns

_PLAIN = (pa.string(), pa.large_string(), pa.binary(), pa.int64(), pa.float64(), pa.bool_(),
          pa.null())  # null: no records, or every key None
Column: TypeAlias = "pa.Array | list[Any]"


class JoinKeys:
    """The keys of joins' and their inputs' records, partition by partition."""

    def __init__(self, store_path: str, rdd_of: Callable[[int], Any],
                 captured: dict[tuple[int, int], str] | None = None) -> None:
        self.store_path = store_path
        self.rdd_of = rdd_of  # node -> its RDD in this kernel, or None (a reopened run)
        self.captured = captured or {}  # (join, partition) -> its reduce side's file
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
            elif any(n == node for n, _ in self.captured):  # a join: a file a partition
                self._partitions[node] = 1 + max(p for n, p in self.captured if n == node)
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
        found.discard(None)  # a captured key no join output (nulled at the run's end)
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
        """The keys captured in the run or kept by an earlier trace, if any."""
        for path in (self.captured.get((node, part)),
                     layout.derived_keys_path(self.store_path, node, part)):
            try:
                with pa.memory_map(path) as source:
                    table = pa.ipc.open_file(source).read_all()
            except (FileNotFoundError, TypeError):  # TypeError: no such captured file
                continue
            if KEY in table.schema.names:
                self._columns[(node, part)] = table.column(KEY).combine_chunks()
                return True
        return False

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


def keep_joined_keys(store_path: str, dag: Any, files: dict[tuple[int, int], str]) -> None:
    """At a run's end: each join input's captured keys kept only for the keys some join
    reading it output (``files``: the chosen lineage files, the joins' with their
    outputs' keys); the others, which no trace can reach, become nulls. A Zipf text's
    keys cost their entropy (about 10 bits a record): only the joined records pay it."""
    wanted: dict[int, set | None] = {}  # input -> keys its joins output (None: unknown)
    for node in dag.operators:
        if node.kind != "python" or node.api not in JOINS or not node.inputs:
            continue
        keys = _output_keys([path for (op, _), path in files.items() if op == node.id])
        for source in node.inputs:
            before = wanted.get(source, set())
            wanted[source] = None if keys is None or before is None else before | keys
    for source, keys in wanted.items():
        if keys is not None:
            for path in layout.derived_keys_files(store_path, source):
                _null_others(path, keys)


def _output_keys(paths: list[str]) -> set | None:
    """The keys a join output, from its reduce side's files (None: some not captured)."""
    found: set = set()
    for path in paths:
        with pa.memory_map(path) as source:
            table = pa.ipc.open_file(source).read_all()
        if KEY not in table.schema.names:
            return None
        column = table.column(KEY).combine_chunks()
        found.update(column.dictionary.to_pylist() if isinstance(column, pa.DictionaryArray)
                     else column.to_pylist())
    return found if paths else None


def _null_others(path: str, keys: set) -> None:
    with pa.memory_map(path) as source:
        table = pa.ipc.open_file(source).read_all()
    column = table.column(KEY).combine_chunks()
    if not isinstance(column, pa.DictionaryArray):
        return
    try:
        value_set = pa.array(list(keys), column.dictionary.type)
    except (pa.ArrowException, OverflowError, TypeError, ValueError):
        value_set = pa.array([], column.dictionary.type)
    kept = pc.take(pc.is_in(column.dictionary, value_set=value_set), column.indices)
    values = pc.if_else(kept, column.dictionary_decode(), pa.scalar(None, column.dictionary.type))
    pruned = pa.table({KEY: values.dictionary_encode()}).replace_schema_metadata(
        table.schema.metadata)
    write_links(path, pruned)


def _positions_of(column: Column, keys: set) -> set[int]:
    if isinstance(column, pa.DictionaryArray):  # captured: match the dictionary first
        try:
            value_set = pa.array(list(keys), column.dictionary.type)
        except (pa.ArrowException, OverflowError, TypeError, ValueError):
            return set()  # no key of that type on this side
        codes = pc.indices_nonzero(pc.is_in(column.dictionary, value_set=value_set))
        hits = pc.is_in(column.indices, value_set=codes.cast(column.indices.type))
        return set(pc.indices_nonzero(hits).to_pylist())
    if isinstance(column, pa.Array):
        try:
            value_set = pa.array(list(keys), column.type)
        except (pa.ArrowException, OverflowError, TypeError, ValueError):
            column = column.to_pylist()
        else:
            return set(pc.indices_nonzero(pc.is_in(column, value_set=value_set)).to_pylist())
    return {position for position, key in enumerate(column) if key in keys}
