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
            "outputs": encode(snapshot.outputs),
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
    """``decode``, except that Spark rows come back as ``pyspark.sql.Row``: records
    read as they did in the run (``record.amount``, ``Row(...)`` as their repr)."""
    return decode(value, row=_spark_row)


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
        return encode(rows)

