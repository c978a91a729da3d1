"""The state restorer over the run's checkpoint files (``checkpoints/file.py``).

A generator operator's local variables cannot be set from outside, so a partition whose
chain has one is never restored: it replays from its start.
"""
from __future__ import annotations

import json
import os
from typing import Any

from .file import CheckpointWriter, read_checkpoint, saved_state
from ..store import layout

__all__ = ["CheckpointStore", "restore", "saved_state"]


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


class CheckpointStore:
    """The checkpoints of one run: what exists, reading, and writing (offline phase)."""

    def __init__(self, store_path: str) -> None:
        self.store_path = store_path
        self._writers: dict[tuple[str, int], CheckpointWriter] = {}

    def clear(self) -> None:
        """Remove every checkpoint (before a new plan is taken)."""
        self._writers = {}
        for _, path in list(layout.checkpoints(self.store_path)):
            os.remove(path)

    def available(self) -> dict[int, dict[int, set[str]]]:
        """``{partition: {index: {worker keys}}}`` of the checkpoints on disk."""
        found: dict[int, dict[int, set[str]]] = {}
        for name, _ in layout.checkpoints(self.store_path):
            found.setdefault(name.partition, {}).setdefault(name.index, set()).add(name.key)
        return found

    def write(self, index: int, partition: int, key: str, state: dict, extra: dict) -> int:
        writer = self._writers.setdefault((key, partition), CheckpointWriter())
        return writer.write(layout.checkpoint_path(self.store_path, index, partition, key),
                            index, state, extra)

    def read(self, index: int, partition: int, key: str) -> tuple[dict, dict]:
        return read_checkpoint(self.store_path, index, partition, key)

    def save_plan(self, plan: dict) -> None:
        with open(layout.with_parent(layout.checkpoint_plan_path(self.store_path)), "w",
                  encoding="utf-8") as out:
            json.dump(plan, out, indent=1)

    def load_plan(self) -> dict | None:
        try:
            with open(layout.checkpoint_plan_path(self.store_path), encoding="utf-8") as f:
                return json.load(f)
        except (OSError, ValueError):
            return None

