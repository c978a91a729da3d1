"""Action results stored once: Arrow files named by the digest of their bytes.

``encode`` turns what an action returned into an Arrow table (``decode`` gives the
same Python value back): a count, a pandas frame, a DataFrame's rows, an RDD's values
(one column of plain values, columns of tuples of plain values, else one pickled
value per row). ``ResultStore.put`` writes a table under ``<root>/.results/`` unless
an equal one is there; files are read with ``pandas.read_feather``.
"""
from __future__ import annotations

import hashlib
import json
import os
import pickle
from operator import itemgetter
from typing import Any

import pyarrow as pa
import pyarrow.feather as feather

from ..store import layout

_META = b"icedtea"
_SCALARS = (bool, int, float, str, bytes)


def encode(value: Any, kind: str) -> pa.Table:
    """``kind``: "count" (an int), "pandas" (a frame), "rows" (a list of pyspark Rows),
    "values" (a list of Python values, in order)."""
    if kind == "count":
        table, layout_ = pa.table({"count": [int(value)]}), "count"
    elif kind == "pandas":
        table, layout_ = pa.Table.from_pandas(value, preserve_index=True), "pandas"
    elif kind == "rows":
        fields = list(value[0].__fields__) if value else []
        try:
            table, layout_ = _columns([tuple(r) for r in value], fields), "rows"
        except (pa.ArrowInvalid, pa.ArrowTypeError, OverflowError, _NotPlain):
            table, layout_ = _pickled(list(value)), "pickled"  # mixed types in a column
    else:
        table, layout_ = _values(list(value))
    meta = dict(table.schema.metadata or {})
    meta[_META] = json.dumps({"kind": kind, "layout": layout_}).encode()
    return table.replace_schema_metadata(meta)


def _values(values: list) -> tuple[pa.Table, str]:
    if values and _plain(values):
        try:
            return pa.table({"value": pa.array(values)}), "value"
        except (pa.ArrowInvalid, pa.ArrowTypeError, OverflowError):
            pass
    if values and all(type(v) is tuple for v in values) and len({len(v) for v in values}) == 1:
        try:
            return _columns(values, [f"_{i}" for i in range(len(values[0]))]), "tuple"
        except (pa.ArrowInvalid, pa.ArrowTypeError, OverflowError, _NotPlain):
            pass
    return _pickled(values), "pickled"


def _pickled(values: list) -> pa.Table:
    return pa.table({"pickled": pa.array([pickle.dumps(v, protocol=5) for v in values],
                                         pa.binary())})


class _NotPlain(Exception):
    pass


def _plain(column: Any) -> bool:
    """One scalar type (and None) throughout: Arrow gives the same values back."""
    kinds = set(map(type, column)) - {type(None)}
    return not kinds or (len(kinds) == 1 and next(iter(kinds)) in _SCALARS)  # nulls only


def _columns(rows: list[tuple], names: list[str]) -> pa.Table:
    """Rows of one width as columns (``itemgetter`` a column: ``zip(*rows)`` took
    several times as long on 100,000 rows, in the cell's action)."""
    if not rows:
        return pa.table({n: pa.array([], pa.null()) for n in names})
    arrays = []
    for i in range(len(names)):
        column = list(map(itemgetter(i), rows))
        if not _plain(column):
            raise _NotPlain()
        arrays.append(pa.array(column))
    return pa.table(dict(zip(names, arrays)))


def decode(table: pa.Table) -> Any:
    meta = json.loads((table.schema.metadata or {})[_META])
    kind, how = meta["kind"], meta["layout"]
    if how == "count":
        return int(table.column("count")[0].as_py())
    if how == "pandas":
        return table.to_pandas()
    if how == "value":
        return _python(table.column("value"))
    if how == "pickled":
        return [pickle.loads(b) for b in table.column("pickled").to_pylist()]
    columns = [_python(table.column(i)) for i in range(table.num_columns)]
    rows = list(zip(*columns)) if columns else []
    if kind == "rows":
        from pyspark.sql import Row

        make = Row(*table.column_names)
        return [make(*r) for r in rows]
    return rows


def _python(column: pa.ChunkedArray) -> list:
    """A column's Python values: numbers without nulls through numpy (several times
    faster than Arrow's own conversion, the same ints, floats and bools)."""
    kind = column.type
    if column.null_count == 0 and (pa.types.is_integer(kind) or pa.types.is_floating(kind)
                                   or pa.types.is_boolean(kind)):
        return column.to_numpy().tolist()
    return column.to_pylist()


class ResultStore:
    """The content-addressed results under one store root."""

    def __init__(self, root: str) -> None:
        self.root = os.path.abspath(root)

    def put(self, value: Any, kind: str) -> dict:
        """Store ``value`` once; returns its entry: digest, bytes, rows, kind."""
        table = encode(value, kind)
        sink = pa.BufferOutputStream()
        with pa.ipc.new_file(sink, table.schema) as writer:
            writer.write_table(table)
        data = sink.getvalue()
        name = hashlib.sha256(data).hexdigest()
        path = layout.with_parent(layout.result_path(self.root, name))
        if not os.path.exists(path):
            tmp = layout.temp_path(path)
            with open(tmp, "wb") as out:
                out.write(data)
            os.replace(tmp, path)
        return {"digest": name, "bytes": len(data), "rows": table.num_rows, "kind": kind}

    def get(self, digest: str) -> Any:
        """The stored value; LookupError if its file is gone."""
        path = layout.result_path(self.root, digest)
        if not os.path.exists(path):
            raise LookupError(f"result {digest[:12]} is not in the store {self.root!r}")
        return decode(feather.read_table(path, memory_map=True))

    def exists(self, digest: str) -> bool:
        return os.path.exists(layout.result_path(self.root, digest))

    def size(self, digest: str) -> int:
        path = layout.result_path(self.root, digest)
        return os.path.getsize(path) if os.path.exists(path) else 0

    def collect_garbage(self, referenced: set[str]) -> list[str]:
        """Delete the results no run refers to; returns their digests."""
        removed = []
        for name in layout.result_digests(self.root):
            if name not in referenced:
                os.remove(layout.result_path(self.root, name))
                removed.append(name)
        return removed
