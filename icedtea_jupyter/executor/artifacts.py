"""One delivery path for everything a worker produces for the run store (an *artifact*:
lineage links, a join input's keys, a skew sketch, θ's recorded inputs, a checkpoint).

``deliver(run, kind, where, payload)``: a worker process that has shown it shares the
store (``store_check``) writes the file itself, atomically, where ``layout.artifact_path``
says; any other (an executor on another host) sends its bytes over the control channel
in frames of at most ``protocol.ARTIFACT_FRAME_BYTES`` (``ControlChannel.deliver_artifact``)
and waits for the coordinator's ``artifact_ack``: the coordinator appends the frames to a
temp file and renames it into place (``coordinator/artifacts.py``). A worker that cannot
deliver says so: an alert to the run naming its host, the artifact and the fix, and a
line on its stderr. Artifacts are made at a task's end or at an interaction, never per
record.
"""
from __future__ import annotations

import json
import sys
from collections.abc import Mapping
from typing import Any

from ..store import layout
from .store_check import host_name, store_view

ACK_TIMEOUT = 60.0  # seconds a worker waits for the coordinator to say it wrote one
NAMES = {"lineage": "lineage links", "derived_keys": "join input's keys",
         "skew": "skew sketch", "inputs": "recorded inputs (--record-inputs)",
         "checkpoint": "checkpoint"}


def deliver(run: Any, kind: str, where: Mapping, payload: Any) -> bool:
    """Put one artifact into ``run``'s store: ``payload`` is bytes, a ``pyarrow.Table``
    (an Arrow IPC file, zstd) or a JSON-able dict. True once it is there; False if the
    run has ended (nothing is recorded then) or it could not be delivered (said). A
    failed write into a shared store raises, as a direct write did."""
    path = layout.artifact_path(run.store_path, kind, where)
    if store_view(run).shared:
        _write(path, payload)
        return True
    from .channel import NullChannel, channel_for

    channel = channel_for(run)
    if isinstance(channel, NullChannel):
        return False
    send = getattr(channel, "deliver_artifact", None)
    if send is None:  # no coordinator: the local channel says why, once
        getattr(channel, "writable", bool)()
        return False
    failed = send(kind, dict(where), encoded(payload), ACK_TIMEOUT)
    if failed is None:
        return True
    cannot(run, channel, kind, where, *failed)
    return False


def encoded(payload: Any) -> bytes:
    """An artifact's bytes as its file holds them."""
    if isinstance(payload, (bytes, bytearray, memoryview)):
        return bytes(payload)
    if isinstance(payload, Mapping):
        return json.dumps(payload).encode()
    import pyarrow as pa

    sink = pa.BufferOutputStream()
    with pa.ipc.new_file(sink, payload.schema,
                         options=pa.ipc.IpcWriteOptions(compression="zstd")) as writer:
        writer.write_table(payload)
    return sink.getvalue().to_pybytes()


def _write(path: str, payload: Any) -> None:
    if not isinstance(payload, (bytes, bytearray, memoryview, Mapping)):
        from .worker_file import _write_atomically

        _write_atomically(payload, path)
        return
    with layout.whole_file(path) as tmp, open(tmp, "wb") as out:
        out.write(encoded(payload))


def cannot(run: Any, channel: Any, kind: str, where: Mapping, reason: str,
           refused: bool) -> None:
    """Say that an artifact did not reach the store: to the run (an alert with its
    ``host``, ``artifact``, ``reason`` and whether the coordinator ``refused`` it), and
    on stderr."""
    host, view = host_name(), store_view(run)
    address = f"{run.address[0]}:{run.address[1]}"
    operator = getattr(channel, "operator_names", {}).get(where.get("operator"))
    fix = ("Fix: make the run store writable by the kernel (free space, permissions) and "
           "run the cell again" if refused else
           f"Fix: keep executors connected to the coordinator at {address} (%%icedtea "
           "--bind), or give the run a store every executor can write (--store)")
    message = (f"{host}: the {NAMES.get(kind, kind)} of "
               f"{repr(operator) if operator else 'operator ' + str(where.get('operator'))} "
               f"partition {where.get('partition')} did not reach the run store: {reason}. "
               f"This executor does not share the store ({view.reason}), so its files travel "
               f"over the control channel to {address}. {fix}")
    print(f"icedtea: {message}", file=sys.stderr)
    worker = {name: where.get(name, -1) for name in ("operator", "partition", "stage",
                                                     "attempt", "task")}
    channel.send({"type": "alert", "worker": worker, "source": "artifacts", "level": "error",
                  "message": message, "artifact": kind, "host": host, "reason": reason,
                  "refused": refused})  # if the channel is gone: stderr has it
