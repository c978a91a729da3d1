"""The lineage links of a run, one table in DuckDB (``lineage/*.arrow`` in the run store).

Each successful worker wrote its links (``executor/lineage.py``); a partition computed
by several successful attempts (a speculative copy, a second job) counts once: the
attempt that went through its whole input, else the one that read most, else the
first. The files are memory-mapped and handed to DuckDB as Arrow, read in place.
"""
from __future__ import annotations

from typing import Any

import pyarrow as pa

from ..store import layout
from ..store.run_store import RunStore


class NoLineage(LookupError):
    """The run was recorded without ``--lineage``."""


def chosen_files(store: RunStore) -> dict[tuple[int, int], str]:
    """(operator, partition) -> the lineage file of the attempt that counts."""
    rows = {(row["task"], row["operator"]): row for row in store.worker_table().to_pylist()
            if row["status"] == "ok"}
    best: dict[tuple[int, int], tuple[tuple, str]] = {}
    for name, path in layout.lineage_files(store.path):
        row = rows.get((name.task, name.operator))
        if row is None:
            continue  # not an attempt the run counts
        rank = (not row["exhausted"], -(row["records_in"] or 0), name.task)
        key = (name.operator, name.partition)
        if key not in best or rank < best[key][0]:
            best[key] = (rank, path)
    return {key: path for key, (_, path) in best.items()}


def load_links(store: RunStore) -> pa.Table:
    """Every counted worker's links with its ``op`` and ``part``; NoLineage if none."""
    files = chosen_files(store)
    if not files:
        raise NoLineage(f"run {store.path!r} has no lineage: it was recorded without --lineage "
                        "(or no Python operator finished); run the cell again with "
                        "%%icedtea --lineage")
    tables = []
    for (op, part), path in sorted(files.items()):
        with pa.memory_map(path) as source:
            table = pa.ipc.open_file(source).read_all()
        tables.append(table.add_column(0, "op", pa.array([op] * len(table), pa.int32()))
                      .add_column(1, "part", pa.array([part] * len(table), pa.int32())))
    return pa.concat_tables(tables)


def connect(links: pa.Table) -> Any:
    """A DuckDB connection with the links registered as the view ``links``."""
    import duckdb

    con = duckdb.connect()
    con.register("links", links)
    return con
