"""``dbg.jump_to(record)``: the debugger at the moment θ received one input record.

The target is θ's input number ``position`` on ``partition`` (a lineage trace's record
names it: ``TracedRecord.theta_input()``; a DataFrame trace names θ's input row, and a
batch θ's record is the batch that holds it, an ``applyInPandas`` θ's the group). The
debugger jumps to the latest interaction at which θ had processed at most that many
records there, then steps over θ's records one by one until the target is θ's next
input: θ and its chain stand exactly before processing it.
"""
from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from ..snapshots.debug_snapshot import DebugSnapshot
from .logs import Logs

MAX_STEPS = 10_000  # step-overs from the nearest interaction, at most


def input_target(target: Any) -> tuple[int, int]:
    """(partition, position) of θ's input from a traced record, or the pair itself."""
    theta_input = getattr(target, "theta_input", None)
    if callable(theta_input):
        return theta_input()
    if isinstance(target, tuple) and len(target) == 2 and all(isinstance(v, int) for v in target):
        return target
    raise TypeError(f"jump_to takes a record of a lineage trace (t.first()) or θ's input as "
                    f"(partition, position), not {target!r}")


def jump_to_input(dbg: Any, logs: Logs, target: Any) -> DebugSnapshot:
    """Move ``dbg`` to just before θ processes its input ``target`` (see the module)."""
    partition, position = input_target(target)
    theta = logs.chain[0]
    group = getattr(getattr(target, "trace", None), "theta_group", None)
    values = group(target) if callable(group) else None
    if values is not None:  # an applyInPandas θ: its record is the group holding the row
        partition, position = group_position(values, logs.partitions, dbg.inputs.records)
    elif getattr(getattr(target, "trace", None), "counts_rows", False):
        in_batches = getattr(logs, "in_records", None)  # a batch θ's records are batches
        position = in_batches(theta, partition, 0, position) if in_batches else position
    if partition not in logs.partitions:
        raise LookupError(f"θ ({theta!r}) has no partition {partition} in this run "
                          f"(partitions: {logs.partitions})")
    start = max((i for i in range(logs.interactions)
                 if logs.target(i, partition).count <= position), default=0)
    snapshot = dbg.jump(start)
    done = snapshot.count(theta, partition)
    if position - done > MAX_STEPS:
        raise ValueError(f"θ's input #{position} on partition {partition} is {position - done} "
                         f"records after the nearest interaction (I{start}); jump_to steps over "
                         f"at most {MAX_STEPS}: record with --interact-every to have closer ones")
    while done < position:
        snapshot = dbg.step_over(partition)
        now = snapshot.count(theta, partition)
        if now <= done:
            raise LookupError(f"θ's input on partition {partition} ended at {done} records, "
                              f"before #{position}")
        done = now
    return snapshot


def group_position(values: dict[str, Any], partitions: Iterable[int],
                   records: Callable[[int], list]) -> tuple[int, int]:
    """(partition, number) of θ's input group whose grouping columns equal ``values``:
    ``records(partition)``, θ's inputs there in order (a pandas DataFrame a group)."""
    for partition in partitions:
        for number, group in enumerate(records(partition)):
            if all(_first(group, key) == value for key, value in values.items()):
                return partition, number
    raise LookupError(f"θ received no group with {values!r} (its grouping columns)")


def _first(group: Any, column: str) -> Any:
    """``column``'s first value in a group (pandas DataFrames, as θ's call takes them)."""
    for frame in group if isinstance(group, (tuple, list)) else (group,):
        if column in getattr(frame, "columns", ()) and len(frame):
            value = frame[column].iloc[0]
            return value.item() if hasattr(value, "item") else value
    return None
