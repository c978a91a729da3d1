"""The lineage links of a run, one table in DuckDB (``lineage/*.arrow`` in the run store).

Each successful worker wrote its links (``executor/lineage.py``); a partition computed
by several successful attempts (a speculative copy, a second job) counts once: the
attempt that went through its whole input, else the one that read most, else the
first. The files are memory-mapped and handed to DuckDB as Arrow, read in place; a map
side's one column (``key_out``) is read only when a trace crosses it (``KeyLinks``).
"""
from __future__ import annotations

from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from ..executor.lineage import KEY_OUT, link_types
from ..store import layout
from ..store.run_store import RunStore
from .records import Positions


class NoLineage(LookupError):
    """The run was recorded without ``--lineage``."""


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
        raise NoLineage(f"run {store.path!r} has no lineage: it was recorded without --lineage "
                        "(or no Python operator finished); run the cell again with "
                        "%%icedtea --lineage")
    tables, keys = [], KeyLinks()
    for (op, part), path in sorted(files.items()):
        with pa.memory_map(path) as source:
            reader = pa.ipc.open_file(source)
            if KEY_OUT in reader.schema.names:
                keys.files[(op, part)] = path
                continue
            table = reader.read_all()
        n = len(table)
        tables.append(table.add_column(0, "op", pa.repeat(pa.scalar(op, pa.int32()), n))
                      .add_column(1, "part", pa.repeat(pa.scalar(part, pa.int32()), n)))
    schema = pa.schema([("op", pa.int32()), ("part", pa.int32())] + link_types(pa))
    return pa.concat_tables(tables) if tables else schema.empty_table(), keys


class KeyLinks:
    """The map sides' links: on each partition, input k to output ``key_out[k]`` (the
    combiner of its key). Each file is read the first time a trace crosses it; a step
    is a C scan of its column (no join)."""

    def __init__(self) -> None:
        self.files: dict[tuple[int, int], str] = {}
        self._columns: dict[tuple[int, int], pa.Array] = {}

    @property
    def operators(self) -> set[int]:
        return {op for op, _ in self.files}

    def back(self, op: int, positions: Positions) -> Positions:
        """The inputs of ``op`` whose combiners are at ``positions`` of its output."""
        found: Positions = {}
        for part, wanted in positions.items():
            column = self._column(op, part)
            if column is not None and wanted:
                hits = pc.indices_nonzero(pc.is_in(column, pa.array(sorted(wanted), column.type)))
                found[part] = set(hits.to_pylist())
        return found

    def forward(self, op: int, positions: Positions) -> Positions:
        """The outputs of ``op`` (combiners) that its inputs at ``positions`` went into."""
        found: Positions = {}
        for part, wanted in positions.items():
            column = self._column(op, part)
            if column is not None:
                inside = [k for k in wanted if 0 <= k < len(column)]
                found[part] = set(column.take(pa.array(inside, pa.int64())).to_pylist())
        return found

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
