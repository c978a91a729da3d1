"""The lineage links of a run, one table in DuckDB (``lineage/*.arrow`` in the run store).

Each successful worker wrote its links (``executor/lineage.py``); a partition computed
by several successful attempts (a speculative copy, a second job) counts once: the
attempt that went through its whole input, else the one that read most, else the
first. The files are memory-mapped and handed to DuckDB as Arrow, read in place; a
filter's ``kept`` and a flatMap's ``out_counts`` (one value an input) are expanded into
links here. A map side's links are its inputs' key numbers (``KeyLinks``): derived by
one job over its regenerated inputs the first time a trace crosses a partition, or
read from its ``key_out`` column in runs recorded before. A join's or cogroup's file,
says it links by key (``KeyLinks.joins``), its column the keys of its outputs (runs
recorded before: no rows): a trace finds the keys by value (``join_keys.py``).
"""
from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ..dag import Dag
from ..executor.lineage import (
    FIRST_SEEN,
    KEPT,
    KEY_ORDER,
    KEY_OUT,
    LINKED_BY,
    OUT_COUNTS,
    link_types,
)
from ..store import layout
from ..store.missing import missing_lineage
from ..store.run_store import RunStore
from .records import Positions

KEY_NUMBER = "key_number"  # a derived map side's file: input k's combiner, numbered

class NoLineage(LookupError):
    """The run has no lineage links to trace: recorded without ``--lineage``, or with it
    but no hosted Python operator of it wrote links, or its workers' links never reached
    the store (the message says which, from which hosts)."""


def no_links_reason(store: RunStore) -> str:
    """Why a run has no links, in its own terms: never "recorded without --lineage" of a
    run whose manifest says it was recorded with it."""
    manifest = store.read_manifest()
    if not (manifest.get("options") or {}).get("lineage"):
        return (f"run {store.path!r} has no lineage: it was recorded without --lineage; run "
                "the cell again with %%icedtea --lineage")
    nodes = (manifest.get("dag") or {}).get("operators") or []
    python = [n["name"] for n in nodes if n.get("kind") == "python"]
    if not python:
        others = ", ".join(n["name"] for n in nodes) or "none"
        return (f"run {store.path!r} was recorded with --lineage, but its cell has no hosted "
                f"Python operator to write lineage links (its operators: {others}); lineage "
                "follows the cell's own map, filter, flatMap, mapPartitions and aggregations")
    missing = missing_lineage(store, manifest, Dag.from_json(manifest.get("dag") or {}))
    if missing:  # successful workers whose links never arrived (store/missing.py)
        return missing
    return (f"run {store.path!r} was recorded with --lineage, but none of its Python "
            f"operators ({', '.join(python)}) left lineage links in the store: no task of "
            "theirs ended successfully, or their workers could not write to the run store")


def chosen_files(store: RunStore) -> dict[tuple[int, int], str]:
    """(operator, partition) -> the lineage file of the attempt that counts."""
    return {key: path for key, (path, _) in chosen_attempts(store).items()}


def chosen_attempts(store: RunStore) -> dict[tuple[int, int], tuple[str, dict]]:
    """(operator, partition) -> the lineage file and worker row of the attempt that counts."""
    rows = {(row["task"], row["operator"]): row for row in store.worker_table().to_pylist()
            if row["status"] == "ok"}
    best: dict[tuple[int, int], tuple[tuple, tuple[str, dict]]] = {}
    for name, path in layout.lineage_files(store.path):
        row = rows.get((name.task, name.operator))
        if row is None:
            continue  # not an attempt the run counts
        rank = (not row["exhausted"], -(row["records_in"] or 0), name.task)
        key = (name.operator, name.partition)
        if key not in best or rank < best[key][0]:
            best[key] = (rank, (path, row))
    return {key: attempt for key, (_, attempt) in best.items()}


def output_counts(store: RunStore) -> dict[int, dict[int, int]]:
    """Operator -> partition -> its outputs there, in the attempts that count."""
    counts: dict[int, dict[int, int]] = {}
    for (op, part), (_, row) in chosen_attempts(store).items():
        counts.setdefault(op, {})[part] = row["records_out"] or 0
    return counts


def load_links(store: RunStore) -> tuple[pa.Table, KeyLinks]:
    """Every counted worker's links with its ``op`` and ``part``, and the map sides'
    key links (read when a trace crosses them); NoLineage if none."""
    files = chosen_files(store)
    if not files:
        raise NoLineage(no_links_reason(store))
    tables, keys = [], KeyLinks(store.path)
    for (op, part), path in sorted(files.items()):
        with pa.memory_map(path) as source:
            reader = pa.ipc.open_file(source)
            if keys.add(op, part, path, reader.schema):
                continue
            table = expanded(reader.read_all(), part)
        n = len(table)
        tables.append(table.add_column(0, "op", pa.repeat(pa.scalar(op, pa.int32()), n))
                      .add_column(1, "part", pa.repeat(pa.scalar(part, pa.int32()), n)))
    schema = pa.schema([("op", pa.int32()), ("part", pa.int32())] + link_types(pa))
    return pa.concat_tables(tables) if tables else schema.empty_table(), keys


def expanded(table: pa.Table, part: int) -> pa.Table:
    """A worker's links: as written, or expanded from a filter's ``kept`` or a
    flatMap's ``out_counts`` (one value an input)."""
    names = table.schema.names
    if names == [KEPT]:
        return _kept_links(table.column(KEPT).to_numpy(), part)
    if names == [OUT_COUNTS]:
        return _count_links(table.column(OUT_COUNTS).to_numpy().astype(np.int64), part)
    return table


def _kept_links(kept: np.ndarray, part: int) -> pa.Table:
    """A filter's links: each run of kept inputs to its run of outputs, one to one."""
    edges = np.diff(np.concatenate(([0], kept.astype(np.int8), [0])))
    starts, ends = np.flatnonzero(edges == 1), np.flatnonzero(edges == -1)
    before = np.concatenate(([0], np.cumsum(kept, dtype=np.int64)))[starts]
    return _links_table(before, ends - starts, starts, ends - starts, part, cross=False)


def _count_links(counts: np.ndarray, part: int) -> pa.Table:
    """A flatMap's links: each input to its outputs (an input without outputs: no row)."""
    starts = np.concatenate(([0], np.cumsum(counts)[:-1])) if len(counts) else counts
    inputs = np.flatnonzero(counts)
    return _links_table(starts[inputs], counts[inputs], inputs, np.ones(len(inputs), np.int64),
                        part, cross=True)


def _links_table(out_start: np.ndarray, out_count: np.ndarray, in_start: np.ndarray,
                 in_count: np.ndarray, part: int, cross: bool) -> pa.Table:
    n = len(out_start)
    types = dict(link_types(pa))
    columns = {"out_start": out_start, "out_count": out_count, "input": np.zeros(n, np.int32),
               "in_part": np.full(n, part, np.int32), "in_start": in_start,
               "in_count": in_count, "cross": np.full(n, cross)}
    return pa.table({name: pa.array(values, types[name]) for name, values in columns.items()})


class KeyLinks:
    """The map sides' links: on each partition, input k to output ``numbers[k]`` (the
    combiner of its key). A partition's numbers are derived by one job the first time a
    trace crosses it (``derive``: node, partitions -> partition -> numbers, the map
    side's inputs' keys numbered as first seen) and kept in the store for later traces
    and reopened runs, or read from a run recorded before (``key_out``); a step is then
    a C scan of them (no join). A map side whose merger
    spilled on some partition is not here (a trace matches its keys by value); nor
    are the joins and cogroups that link by key (``joins``), matched by value too."""

    def __init__(self, store_path: str) -> None:
        self.store_path = store_path
        self.files: dict[tuple[int, int], str] = {}  # key_out, recorded before
        self.derived: dict[tuple[int, int], bool] = {}  # first-seen order held there
        self.derive: Callable[[int, list[int]], dict[int, pa.Array]] | None = None
        self._columns: dict[tuple[int, int], pa.Array] = {}
        self.joins: set[int] = set()  # joins and cogroups linked by key
        self.join_files: dict[tuple[int, int], str] = {}
        self._deriving = threading.Lock()  # a trace and the run's derive_ahead

    def add(self, op: int, part: int, path: str, schema: pa.Schema) -> bool:
        """Whether the file at ``path`` is a map side's or a join's by key (noted here)."""
        if LINKED_BY in (schema.metadata or {}):
            self.joins.add(op)
            self.join_files[(op, part)] = path  # its outputs' keys, if captured
            return True
        if KEY_OUT in schema.names:
            self.files[(op, part)] = path
            return True
        order = (schema.metadata or {}).get(KEY_ORDER)
        if order is None:
            return False
        self.derived[(op, part)] = order == FIRST_SEEN
        return True

    @property
    def operators(self) -> set[int]:
        spilled = {op for (op, _), ordered in self.derived.items() if not ordered}
        return {op for op, _ in [*self.files, *self.derived]} - spilled

    def back(self, op: int, positions: Positions) -> Positions:
        """The inputs of ``op`` whose combiners are at ``positions`` of its output."""
        self.prepare(op, list(positions))
        found: Positions = {}
        for part, wanted in positions.items():
            column = self._column(op, part)
            if column is not None and wanted:
                hits = pc.indices_nonzero(pc.is_in(column, pa.array(sorted(wanted), column.type)))
                found[part] = set(hits.to_pylist())
        return found

    def forward(self, op: int, positions: Positions) -> Positions:
        """The outputs of ``op`` (combiners) that its inputs at ``positions`` went into."""
        self.prepare(op, list(positions))
        found: Positions = {}
        for part, wanted in positions.items():
            column = self._column(op, part)
            if column is not None:
                inside = [k for k in wanted if 0 <= k < len(column)]
                found[part] = set(column.take(pa.array(inside, pa.int64())).to_pylist())
        return found

    def prepare(self, op: int, parts: list[int]) -> None:
        """Have the numbers of ``op`` on ``parts``: kept in the store by an earlier
        trace (``lineage/derived/``), else derived in one job and kept there. A trace
        asking while the numbers are derived ahead waits for them."""
        with self._deriving:
            missing = [p for p in sorted(parts) if (op, p) in self.derived
                       and (op, p) not in self._columns and not self._read_derived(op, p)]
            if missing and self.derive is not None:
                for part, numbers in self.derive(op, missing).items():
                    self._columns[(op, part)] = numbers
                    self._keep(op, part, numbers)

    def derive_every(self, stop: threading.Event) -> None:
        """Every map side's numbers on every partition (``prepare``), until ``stop``."""
        for op in sorted(self.operators):
            if stop.is_set():
                return
            self.prepare(op, sorted(p for o, p in self.derived if o == op))

    def _read_derived(self, op: int, part: int) -> bool:
        path = layout.derived_key_links_path(self.store_path, op, part)
        try:
            with pa.memory_map(path) as source:
                table = pa.ipc.open_file(source).read_all()
        except FileNotFoundError:
            return False
        self._columns[(op, part)] = table.column(KEY_NUMBER).combine_chunks()
        return True

    def _keep(self, op: int, part: int, numbers: pa.Array) -> None:
        """Write derived numbers to the store (a read-only store keeps them in memory)."""
        path = layout.derived_key_links_path(self.store_path, op, part)
        try:
            with layout.whole_file(path) as tmp, pa.OSFile(tmp, "wb") as sink, \
                    pa.ipc.new_file(sink, pa.schema([(KEY_NUMBER, numbers.type)])) as writer:
                writer.write_table(pa.table({KEY_NUMBER: numbers}))
        except OSError:
            pass

    def _column(self, op: int, part: int) -> pa.Array | None:
        if (op, part) not in self._columns and (op, part) in self.files:
            with pa.memory_map(self.files[(op, part)]) as source:
                table = pa.ipc.open_file(source).read_all()
            self._columns[(op, part)] = table.column(KEY_OUT).combine_chunks()
        return self._columns.get((op, part))


def connect(links: pa.Table) -> Any:
    """A DuckDB connection with the links registered as the view ``links``."""
    import duckdb

    con = duckdb.connect()
    con.register("links", links)
    return con
