"""Showing a replayed worker's state after each step without re-encoding all of it.

A step changes a few keys of a worker's dict-like state; encoding all of a 15,000-key
dict again for every step costs milliseconds and, through the garbage it leaves, full
collections. ``StateEncoder`` keeps each dict variable's encoded entries by key and
re-encodes only the keys whose value is a new object or of a mutable type (which can
change in place), and the variables that are not dicts.
"""
from __future__ import annotations

import datetime
import decimal
from typing import Any

from ..executor.state import MAX_ITEMS, Summary, encode, encode_state

_IMMUTABLE = (int, float, str, bytes, bool, type(None), complex, decimal.Decimal,
              datetime.date, datetime.datetime, datetime.time, frozenset)


class StateEncoder:
    """The tagged-JSON view of one worker's state (``executor.state.encode_state``),
    updated incrementally; ``encode(state, version)`` returns the previous view
    unchanged while ``version`` (records processed, ended) is the same."""

    def __init__(self) -> None:
        self.version: Any = None
        self.view: dict[str, Any] | None = None
        self.dicts: dict[str, _EncodedDict] = {}

    def encode(self, state: dict[str, Any], version: Any = None) -> dict[str, Any]:
        if version is not None and version == self.version and self.view is not None:
            return self.view
        view, dicts = {}, {}
        for name, value in state.items():
            if _incremental(value):
                dicts[name] = self.dicts.get(name) or _EncodedDict()
                view[name] = dicts[name].update(value)
            else:
                view[name] = encode_state({name: value})[name]
        self.dicts, self.version, self.view = dicts, version, view
        return view


class _EncodedDict:
    """One dict variable: a copy of the raw dict, and each key's encoded entry."""

    def __init__(self) -> None:
        self.raw: dict = {}
        self.pairs: dict[Any, list] = {}  # key -> [encoded key, encoded value]
        self.plain: dict[str, Any] = {}  # str key -> encoded value
        self.tagged: set = set()  # keys that make the dict a tagged "$t": "dict"

    def update(self, value: dict) -> Any:
        raw = self.raw
        for key in raw.keys() - value.keys():
            del self.pairs[key]
            self.plain.pop(key, None)
            self.tagged.discard(key)
        for key, item in value.items():
            if key in raw and raw[key] is item and isinstance(item, _IMMUTABLE):
                continue
            encoded = encode(item, 1)
            if isinstance(key, str) and not key.startswith("$"):
                self.pairs[key] = [key, encoded]
                self.plain[key] = encoded
            else:
                self.pairs[key] = [encode(key, 1), encoded]
                self.tagged.add(key)
        self.raw = dict(value)
        if not self.tagged:
            return dict(self.plain)
        return {"$t": "dict", "items": list(self.pairs.values())}


def _incremental(value: Any) -> bool:
    return type(value) is dict and 0 < len(value) <= MAX_ITEMS and not isinstance(value, Summary)
