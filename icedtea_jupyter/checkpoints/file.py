"""Checkpoint files of G(θ)'s workers: the restorable state of one worker at one interaction.

Written by θ's host during the run (``--checkpoint all|online``: at the interactions the
coordinator marks, and by each worker when its partition ends) or by the kernel's
checkpointing phase (``offline``). One pickle per worker and interaction (named in
``store/layout.py``); dict values hold only the keys changed since the same worker's
previous checkpoint (IcedTea §5.5), which ``read_checkpoint``
applies back. ``CheckpointStore`` lists, reads and writes a run's checkpoints and keeps
its plan. These files hold the user's objects: load them only from run stores you
trust, as any pickle.
"""
from __future__ import annotations

import json
import os
import pickle
import zlib
from collections.abc import Callable
from typing import Any

from ..executor.attributes import instance_attributes
from ..executor.state import _closure_variables, _is_plain_function
from ..store import layout


def saved_state(host: Any) -> dict[str, Any]:
    """A host's restorable state, flat: ``attr:x``, ``cell:x`` or ``combiners``."""
    if host.state_source is not None:
        return {"combiners": host.state_source.data}
    function = host.user_function
    if _is_plain_function(function):
        return {f"cell:{k}": v for k, v in _closure_variables(function).items()}
    return {f"attr:{k}": v for k, v in instance_attributes(function).items()}


class CheckpointWriter:
    """Writes one worker's checkpoints in order, dicts incrementally."""

    def __init__(self) -> None:
        self.previous: int | None = None
        self.crcs: dict[str, dict] = {}

    def write(self, index: int, state: dict, extra: dict,
              put: Callable[[bytes], bool]) -> int:
        """Encode one checkpoint and ``put`` its bytes where they go (a file, or a
        worker's delivery: ``executor/artifacts.py``); a checkpoint ``put`` refuses is
        no base for the next one. Returns its size (0: refused)."""
        entries: dict[str, tuple] = {}  # name -> ("keys", changed, removed) | ("full", value)
        crcs: dict[str, dict] = {}
        for name, value in state.items():
            if isinstance(value, dict):
                crcs[name] = {k: _crc(v) for k, v in value.items()}
                if self.previous is not None and name in self.crcs:
                    old = self.crcs[name]
                    entries[name] = ("keys", {k: v for k, v in value.items()
                                              if old.get(k) != crcs[name][k]},
                                     [k for k in old if k not in value])
                    continue
            entries[name] = ("full", value)
        data = pickle.dumps({"base": self.previous, "entries": entries, "extra": extra}, 5)
        if not put(data):
            return 0
        self.previous, self.crcs = index, crcs
        return len(data)


def write_bytes(path: str, data: bytes) -> bool:
    """``data`` as the file ``path``, whole or not at all."""
    with layout.whole_file(path) as tmp, open(tmp, "wb") as out:
        out.write(data)
    return True


def read_checkpoint(store_path: str, index: int, partition: int, key: str) -> tuple[dict, dict]:
    """The state and extra fields of a checkpoint, its incremental chain applied."""
    with open(layout.checkpoint_path(store_path, index, partition, key), "rb") as f:
        saved = pickle.load(f)
    base: dict = {}
    if saved["base"] is not None:
        base, _ = read_checkpoint(store_path, saved["base"], partition, key)
    state = {}
    for name, entry in saved["entries"].items():
        if entry[0] == "full":
            state[name] = entry[1]
        else:
            value = dict(base.get(name, {}))
            for key_ in entry[2]:
                value.pop(key_, None)
            value.update(entry[1])
            state[name] = value
    return state, saved["extra"]


def _crc(value: Any) -> int:
    try:
        return zlib.crc32(pickle.dumps(value, 5))
    except Exception:  # unpicklable: no checksum (-1); writing the value itself will say why
        return -1


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
        path = layout.checkpoint_path(self.store_path, index, partition, key)
        return writer.write(index, state, extra, lambda data: write_bytes(path, data))

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

