"""Checkpoint files of G(θ)'s workers: the restorable state of one worker at one interaction.

Written by θ's host during the run (``--checkpoint all|online``: at the interactions the
coordinator marks, and by each worker when its partition ends) or by the kernel's
checkpointing phase (``offline``). One pickle per worker and interaction (named in
``store/layout.py``); dict values hold only the keys changed
since the same worker's previous checkpoint (IcedTea §5.5), which ``read_checkpoint``
applies back. These files hold the user's objects: load them only from run stores you
trust, as any pickle.
"""
from __future__ import annotations

import os
import pickle
import zlib
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

    def write(self, path: str, index: int, state: dict, extra: dict) -> int:
        entries, crcs = {}, {}
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
        tmp = layout.temp_path(layout.with_parent(path))
        with open(tmp, "wb") as out:
            out.write(data)
        os.replace(tmp, path)
        self.previous, self.crcs = index, crcs
        return len(data)


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
    except Exception:
        return -1
