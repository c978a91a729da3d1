"""What changed between two encoded states of a worker, and changes applied back.

A worker's snapshot report carries a delta of its state since its previous report
(made on the worker by ``executor/incremental.py``): ``{"full": state}``, or
``{"set": {name: value}, "keys": {name: keyed}, "del": [names]}``, where ``keyed`` holds
the changed and removed keys of a dict-like variable (IcedTea §5.5): ``{"set": {k: v},
"del": [k]}`` for a plain JSON dict, ``{"tagged": True, "set": [[k, v]], "del": [k]}``
for a tagged one. ``apply_delta`` rebuilds the state; ``changes`` says what changed
as the user reads it.
"""
from __future__ import annotations

import json
import zlib
from typing import Any

from ..executor.state import decode, same


def _key(encoded: Any) -> Any:
    """A hashable identity for an encoded dict key (cheap for the usual scalar keys)."""
    if encoded is None or isinstance(encoded, (str, int, float, bool)):
        return (type(encoded).__name__, encoded)
    return ("json", json.dumps(encoded, sort_keys=True))


def delta(previous: dict | None, current: dict) -> dict:
    """What changed per variable: ``{"full": {...}}`` or ``{"set": ..., "keys": ..., "del": ...}``.

    For dict-like variables only the changed keys travel (IcedTea §5.5)."""
    if previous is None:
        return {"full": current}
    changes: dict[str, Any] = {"set": {}, "keys": {}, "del": []}
    for name, value in current.items():
        old = previous.get(name, _MISSING)
        if same(old, value):
            continue
        keyed = _keyed_change(old, value)
        if keyed is None:
            changes["set"][name] = value
        elif keyed["set"] or keyed["del"]:
            changes["keys"][name] = keyed
    changes["del"] = [name for name in previous if name not in current]
    return changes


def _keyed_change(old: Any, new: Any) -> dict | None:
    plain = isinstance(old, dict) and isinstance(new, dict) and "$t" not in old and "$t" not in new
    tagged = (isinstance(old, dict) and isinstance(new, dict) and old.get("$t") == "dict"
              and new.get("$t") == "dict")
    if not (plain or tagged):
        return None
    if plain:
        return {"set": {k: v for k, v in new.items() if not same(old.get(k, _MISSING), v)},
                "del": [k for k in old if k not in new]}
    old_items = {_key(k): (k, v) for k, v in old["items"]}
    new_items = {_key(k): (k, v) for k, v in new["items"]}
    return {"tagged": True,
            "set": [[k, v] for key, (k, v) in new_items.items()
                    if not same(old_items.get(key, (None, _MISSING))[1], v)],
            "del": [k for key, (k, _) in old_items.items() if key not in new_items]}


_MISSING = object()


def changes(previous: dict | None, current: dict) -> dict:
    """What changed between two encoded states, as the user reads it: variables set,
    variables removed, and the changed keys (decoded) of dict-like variables."""
    change = delta(previous or {}, current)
    return {"variables": sorted(change["set"]), "removed": sorted(change["del"]),
            "keys": {name: [decode(k) for k in (
                [kv[0] for kv in keyed["set"]] if keyed.get("tagged") else keyed["set"])]
                for name, keyed in change["keys"].items()}}


class PackedDelta:
    """A delta kept in the kernel's memory as compressed JSON, unpacked when applied: a
    long run's live history holds every worker report of every interaction."""

    __slots__ = ("_packed", "_in_line")

    def __init__(self, change: dict) -> None:
        self._packed = zlib.compress(json.dumps(change, separators=(",", ":")).encode(), 1)
        self._in_line = False

    @classmethod
    def of_line(cls, line: str) -> PackedDelta:
        """The ``delta`` of a snapshot report already encoded as a JSON line (the run
        store's): packed from that text, not encoded again."""
        packed = cls.__new__(cls)
        packed._packed = zlib.compress(line.encode(), 1)
        packed._in_line = True
        return packed

    def unpack(self) -> dict:
        data = json.loads(zlib.decompress(self._packed))
        return data["delta"] if self._in_line else data


def apply_delta(previous: dict | None, change: dict | PackedDelta) -> dict:
    """The encoded state after ``change`` (the inverse of ``delta``)."""
    if isinstance(change, PackedDelta):
        change = change.unpack()
    if "full" in change:
        return dict(change["full"])
    state = dict(previous or {})
    state.update(change.get("set", {}))
    for name, keyed in change.get("keys", {}).items():
        state[name] = _apply_keyed(state.get(name), keyed)
    for name in change.get("del", []):
        state.pop(name, None)
    return state


def _apply_keyed(old: Any, keyed: dict) -> Any:
    if not keyed.get("tagged"):
        value = dict(old or {})
        value.update(keyed["set"])
        for key in keyed["del"]:
            value.pop(key, None)
        return value
    items = {_key(k): [k, v] for k, v in (old or {"items": []})["items"]}
    for k, v in keyed["set"]:
        items[_key(k)] = [k, v]
    for k in keyed["del"]:
        items.pop(_key(k), None)
    return {"$t": "dict", "items": list(items.values())}
