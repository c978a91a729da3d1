"""Reading checkpoints back for a jump: which one to start from, and restoring it into
the replayed workers of θ's tree (``checkpoints/file.py`` holds the files).

A generator operator's local variables cannot be set from outside, so a partition whose
chain has one is never restored: it replays from its start.
"""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..executor.timetravel import FINAL
from .file import CheckpointStore


def restore(worker: Any, state: dict[str, Any]) -> None:
    """Put a saved state into a fresh worker of the same operator."""
    host = worker.host
    for name, value in state.items():
        kind, _, key = name.partition(":")
        if kind == "combiners":
            host.state_source.data = value
        elif kind == "attr":
            setattr(host.user_function, key, value)
        elif kind == "cell":
            function = host.user_function
            cell = function.__closure__[function.__code__.co_freevars.index(key)]
            cell.cell_contents = value


def base_checkpoint(found: dict[int, set[str]], keys: set[str], index: int,
                    finished: Callable[[], bool]) -> int | None:
    """The checkpoint to restore before replaying to ``index``: the latest one at or
    before it that holds every worker (``keys``) of θ's tree, or the partition's final
    one when θ had ended there on every path (``finished()``). ``found`` maps
    interactions to the worker keys checkpointed there, on one partition."""
    usable = [i for i, have in found.items() if keys <= have]
    if FINAL in usable and finished():
        return FINAL
    return max((i for i in usable if 0 < i <= index), default=None)


def restore_paths(cursor: Any, store: CheckpointStore, index: int,
                  key: Callable[[str, int], str]) -> None:
    """Restore each path of a fresh ``PartitionPaths`` from the checkpoints at ``index``:
    its workers' states, counts and logged results read, its position and end.
    ``key(name, path)`` names a worker's checkpoints; raises ``FileNotFoundError`` when
    one is missing."""
    for i, path in enumerate(cursor.paths):
        saved = [store.read(index, cursor.partition, key(name, i)) for name in path.names]
        for worker, (state, extra) in zip(path.workers, saved):
            restore(worker, state)
            worker.processed = extra["processed"]
            worker.results.position = extra["results"]
        path.position, path.ended = saved[0][1]["position"], saved[0][1]["ended"]
