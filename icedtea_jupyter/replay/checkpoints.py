"""The state restorer and its checkpoints (IcedTea §5.5, §6).

A checkpoint of a worker is its restorable state, pickled: an ``Operator``'s or callable
object's attributes, a closure's variables, a key-based aggregation's combiners. Dict
values are stored incrementally — only the keys changed since the worker's previous
checkpoint. A generator operator's local variables cannot be set from outside, so a
partition whose chain has one is never restored: it replays from its start.

Files: ``checkpoints/i{index}-p{partition}-{operator}.pkl`` and ``checkpoints/plan.json``.
"""
from __future__ import annotations

import json
import os
import pickle
import zlib
from typing import Any

from ..executor.state import _closure_variables, _is_plain_function

CHECKPOINTS_DIR = "checkpoints"


def saved_state(worker: Any) -> dict[str, Any]:
    """The worker's restorable state, flat: ``attr:x``, ``cell:x`` or ``combiners``."""
    host = worker.host
    if host.state_source is not None:
        return {"combiners": host.state_source.data}
    function = host.user_function
    if _is_plain_function(function):
        return {f"cell:{k}": v for k, v in _closure_variables(function).items()}
    return {f"attr:{k}": v for k, v in vars(function).items()} if hasattr(function, "__dict__") \
        else {}


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
    """Checkpoint files of one run, written in interaction order per worker."""

    def __init__(self, store_path: str) -> None:
        self.directory = os.path.join(store_path, CHECKPOINTS_DIR)
        self._written: dict[tuple[str, int], tuple[int, dict]] = {}  # last index, key crcs

    def clear(self) -> None:
        """Remove every checkpoint (before a new plan is taken)."""
        self._written = {}
        if os.path.isdir(self.directory):
            for name in os.listdir(self.directory):
                if name.endswith(".pkl"):
                    os.remove(os.path.join(self.directory, name))

    def path(self, index: int, partition: int, operator: str) -> str:
        return os.path.join(self.directory, f"i{index}-p{partition}-{operator}.pkl")

    def write(self, index: int, partition: int, operator: str, state: dict,
              extra: dict) -> int:
        """Write one worker's checkpoint; dicts hold only changed keys. Returns bytes."""
        previous, crcs = self._written.get((operator, partition), (None, {}))
        entries, new_crcs = {}, {}
        for name, value in state.items():
            if isinstance(value, dict) and previous is not None:
                entries[name] = _dict_delta(value, crcs.get(name, {}))
            else:
                entries[name] = ("full", value)
            if isinstance(value, dict):
                new_crcs[name] = {k: _crc(v) for k, v in value.items()}
        data = pickle.dumps({"base": previous, "entries": entries, "extra": extra}, 5)
        os.makedirs(self.directory, exist_ok=True)
        with open(self.path(index, partition, operator), "wb") as out:
            out.write(data)
        self._written[(operator, partition)] = (index, new_crcs)
        return len(data)

    def read(self, index: int, partition: int, operator: str) -> tuple[dict, dict]:
        """The state and extra fields of a checkpoint, its incremental chain applied."""
        with open(self.path(index, partition, operator), "rb") as f:
            saved = pickle.load(f)
        base: dict = {}
        if saved["base"] is not None:
            base, _ = self.read(saved["base"], partition, operator)
        state = {}
        for name, entry in saved["entries"].items():
            if entry[0] == "full":
                state[name] = entry[1]
            else:
                _, changed, removed = entry
                value = dict(base.get(name, {}))
                for key in removed:
                    value.pop(key, None)
                value.update(changed)
                state[name] = value
        return state, saved["extra"]

    def save_plan(self, plan: dict) -> None:
        os.makedirs(self.directory, exist_ok=True)
        with open(os.path.join(self.directory, "plan.json"), "w", encoding="utf-8") as out:
            json.dump(plan, out, indent=1)

    def load_plan(self) -> dict | None:
        try:
            with open(os.path.join(self.directory, "plan.json"), encoding="utf-8") as f:
                return json.load(f)
        except (OSError, ValueError):
            return None


def _dict_delta(value: dict, crcs: dict) -> tuple:
    changed = {k: v for k, v in value.items() if crcs.get(k) != _crc(v)}
    removed = [k for k in crcs if k not in value]
    return ("keys", changed, removed)


def _crc(value: Any) -> int:
    try:
        return zlib.crc32(pickle.dumps(value, 5))
    except Exception:
        return -1
