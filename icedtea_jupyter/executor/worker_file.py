"""The files of the run store written per task attempt: the worker's row, its replay
log, θ's recorded inputs, local events (where each goes: ``store/layout.py``).

Written by the coordinator when a worker reports its end, or by the worker itself
when it cannot reach the coordinator. ``pandas.read_feather`` opens the Arrow files.
"""
from __future__ import annotations

import json
from typing import Any

from ..store import layout
from .protocol import dumps

COLUMNS = (
    "operator", "partition", "stage", "attempt", "task", "status", "records_in",
    "records_out", "bytes_in", "seconds", "started", "ended", "exhausted", "local", "error",
)


def worker_row(message: dict, local: bool) -> dict:
    """Flatten a ``worker_end`` message into one row of the worker table."""
    row = dict(message["worker"])
    for name in ("status", "records_in", "records_out", "bytes_in", "seconds", "started",
                 "ended", "exhausted"):
        row[name] = message.get(name)
    row["local"] = local
    error = message.get("error")
    row["error"] = json.dumps(error) if error else None
    return {name: row.get(name) for name in COLUMNS}


def write_worker_file(store_path: str, message: dict, local: bool) -> str:
    """Write the row of one finished task attempt; atomic (temp file, then rename)."""
    import pyarrow as pa

    row = worker_row(message, local)
    table = pa.Table.from_pylist([row], schema=worker_schema())
    return _write_atomically(table, layout.worker_path(store_path, message["worker"]),
                             "uncompressed")


def _write_atomically(table: Any, path: str, compression: str = "zstd") -> str:
    """An Arrow IPC file (what ``pandas.read_feather`` opens) that readers see whole or
    not at all (temp file, then rename); written with ``pyarrow.ipc``, not
    ``pyarrow.feather``, which imports pandas in the worker (~0.3 s a Python worker)."""
    import pyarrow as pa

    options = pa.ipc.IpcWriteOptions(
        compression=None if compression == "uncompressed" else compression)
    with layout.whole_file(path) as tmp, pa.OSFile(tmp, "wb") as sink, \
            pa.ipc.new_file(sink, table.schema, options=options) as writer:
        writer.write_table(table)
    return path


def worker_schema() -> Any:
    import pyarrow as pa

    return pa.schema([
        ("operator", pa.int32()), ("partition", pa.int32()), ("stage", pa.int32()),
        ("attempt", pa.int32()), ("task", pa.int64()), ("status", pa.string()),
        ("records_in", pa.int64()), ("records_out", pa.int64()), ("bytes_in", pa.int64()),
        ("seconds", pa.float64()), ("started", pa.float64()), ("ended", pa.float64()),
        ("exhausted", pa.bool_()), ("local", pa.bool_()), ("error", pa.string()),
    ])


def append_local_event(store_path: str, worker: dict, message: dict) -> None:
    """Keep an agent message or alert of a worker that has no coordinator."""
    path = layout.with_parent(layout.local_events_path(store_path, worker))
    with open(path, "a", encoding="utf-8") as out:
        out.write(dumps(message) + "\n")


def write_replay_log(store_path: str, message: dict, body: bytes) -> str:
    """The replay log of a G(θ) worker, in its compact form (read it with
    ``icedtea_jupyter.store.replay_logs.read_replay_log``): the kind of log, the
    uint32 values the worker sent, the input count, and the ``log_result`` values."""
    import zlib

    import pyarrow as pa
    import pyarrow.compute as pc

    raw = zlib.decompress(body) if body else b""
    log = message.get("log") or {}
    kind = log.get("kind", "ones")
    values = pa.Array.from_buffers(pa.uint32(), len(raw) // 4, [None, pa.py_buffer(raw)])
    if kind in ("drops", "cumulative") and len(values) > 1:  # ascending: store the steps
        values = pa.concat_arrays([values[:1], pc.subtract(values[1:], values[:-1])])
    table = pa.table({"values": values}).replace_schema_metadata({
        "kind": kind, "results": json.dumps(log.get("results", [])), "steps": "1",
        "fingerprints": json.dumps(log.get("fingerprints", [])),
        "records_in": str(message.get("records_in") or 0),
        "records_out": str(message.get("records_out") or 0),
        "hash_probe": str(log.get("hash_probe", "")),
    })
    return _write_atomically(table, layout.replay_log_path(store_path, message["worker"]))


def inputs_table(pickled: list) -> Any:
    """θ's input records of one task attempt (``--record-inputs``), pickled, in order:
    the table of ``layout.recorded_inputs_path``."""
    import pyarrow as pa

    return pa.table({"record": pa.array(pickled, pa.binary())})
