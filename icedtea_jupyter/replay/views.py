"""What crosses between the active replay process and the kernel: moves and their views.

``EngineViews`` answers the kernel's requests in the active process with the engine
(``Debugger``, unthreaded); ``view_message`` and ``apply_view`` turn a ``DebugSnapshot``
into a frame and back. A jump sends every worker; a step only those it moved.
"""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..executor.state import decode, encode
from ..snapshots.debug_snapshot import DebugSnapshot


def view_message(snapshot: DebugSnapshot, moved: list[tuple[str, int]]) -> dict:
    """The frame for a move: the moved workers' counts and encoded states."""
    return {"index": snapshot.index, "step": snapshot.step, "partition": snapshot.partition,
            "operator": snapshot.operator, "notes": snapshot.notes,
            "failure": snapshot.failure,
            "outputs": encode(with_batches(snapshot.outputs)),
            "workers": [[op, p, snapshot._counts[(op, p)], snapshot._encoded[(op, p)]]
                        for op, p in moved]}


def apply_view(message: dict, previous: DebugSnapshot | None, jump: bool) -> DebugSnapshot:
    """The kernel's ``DebugSnapshot`` after a move: a jump's view is whole, a step's
    updates ``previous`` with the workers it moved."""
    encoded = {} if jump or previous is None else dict(previous._encoded)
    counts = {} if jump or previous is None else dict(previous._counts)
    for op, p, count, state in message["workers"]:
        encoded[(op, p)] = state
        counts[(op, p)] = count
    snapshot = DebugSnapshot(encoded, counts, previous, message["index"], message["step"],
                             decode_records(message["outputs"]), message["notes"])
    snapshot.partition, snapshot.operator = message["partition"], message["operator"]
    snapshot.failure = message.get("failure")
    return snapshot


def decode_records(value: Any) -> Any:
    """``decode``, except that Spark rows come back as ``pyspark.sql.Row``, and batches
    (``with_batches``) as pandas frames or Arrow batches: records read as they did in
    the run (``record.amount``, ``Row(...)`` as their repr, ``batch.v.sum()``)."""
    return _batches_back(decode(value, row=_spark_row))


BATCH_TAG = "$batch"  # a batch as Arrow IPC, between the replay process and the kernel


def with_batches(value: Any) -> Any:
    """``value`` (records: a list of them, or the pending dict) with each pandas frame,
    Series or Arrow batch — a record, or a part of a record tuple (a group, a UDF's
    arguments) — as Arrow IPC in base64: they travel whole, not as their repr."""
    if isinstance(value, dict):
        return {k: with_batches(v) for k, v in value.items()}
    if isinstance(value, list):
        return [with_batches(v) for v in value]
    if isinstance(value, tuple) and not hasattr(value, "_fields") and \
            not hasattr(value, "__fields__"):
        return tuple(_batch_wire(v) for v in value)
    return _batch_wire(value)


def _batch_wire(value: Any) -> Any:
    import base64

    import pyarrow as pa

    if isinstance(value, pa.RecordBatch):
        kind, batch = "arrow", value
    elif type(value).__module__.startswith("pandas.") and hasattr(value, "to_frame"):
        kind, batch = "series", pa.RecordBatch.from_pandas(value.to_frame())
    elif type(value).__module__.startswith("pandas.") and hasattr(value, "columns"):
        kind, batch = "pandas", pa.RecordBatch.from_pandas(value)
    else:
        return value
    sink = pa.BufferOutputStream()
    with pa.ipc.new_stream(sink, batch.schema) as writer:
        writer.write_batch(batch)
    return {BATCH_TAG: kind, "ipc": base64.b64encode(sink.getvalue().to_pybytes()).decode()}


def _batches_back(value: Any) -> Any:
    if isinstance(value, dict) and BATCH_TAG in value:
        return _batch_back(value)
    if isinstance(value, dict):
        return {k: _batches_back(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_batches_back(v) for v in value]
    if type(value) is tuple:
        return tuple(_batches_back(v) for v in value)
    return value


def _batch_back(wire: dict) -> Any:
    import base64

    import pyarrow as pa

    batch = pa.ipc.open_stream(base64.b64decode(wire["ipc"])).read_next_batch()
    if wire[BATCH_TAG] == "arrow":
        return batch
    frame = batch.to_pandas()
    return frame.iloc[:, 0] if wire[BATCH_TAG] == "series" else frame


def _spark_row(fields: dict) -> Any:
    from pyspark.sql import Row

    return Row(**fields)


class EngineViews:
    """The active process's requests, each one call of the engine."""

    def __init__(self, engine: Any, base: int) -> None:
        self.engine = engine
        self.base = base

    def handlers(self) -> dict[str, Callable[[dict], Any]]:
        return {"jump": self.jump, "jump_to_failure": self.to_failure, "step_over": self.step, "step_into": self.step,
                "step_out": self.step, "pending": self.pending,
                "step_options": lambda _: encode(self.engine.step_options()),
                "ended": lambda request: self.engine.ended(int(request["partition"]))}

    def jump(self, request: dict) -> dict:
        index = int(request["index"])
        if index < self.base:
            raise ValueError(f"a process parked at I{self.base} cannot go back to I{index}")
        snapshot = self.engine.forward(index)
        return view_message(snapshot, self.engine.moved)

    def to_failure(self, request: dict) -> dict:
        """From this process's fork (at or before the interaction before the failure)."""
        engine = self.engine
        before = engine.recorded_failure().before
        if before < self.base:
            raise ValueError(f"a process parked at I{self.base} cannot go back to I{before}")
        engine.forward(before, show=False)
        return view_message(engine.approach_failure(), engine.moved)

    def step(self, request: dict) -> dict:
        engine, partition = self.engine, int(request["partition"])
        op = request["op"]
        if op == "step_over":
            snapshot = engine.step_over(partition)
        elif op == "step_into":
            snapshot = engine.step_into(partition, request["operator"])
        else:
            snapshot = engine.step_out(partition)
        return view_message(snapshot, engine.moved)

    def pending(self, request: dict) -> Any:
        rows = self.engine.pending(request.get("partition"), int(request.get("limit", 20)))
        return encode(with_batches(rows))

