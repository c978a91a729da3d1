"""A worker's state encoded again and again, re-encoding only what changed.

Between two snapshots (or two debugger steps) a worker changes a few keys of its
dict-like state. Encoding the whole state and then comparing it with the previous
encoding costs time in proportion to the state, on every interaction. ``IncrementalState``
keeps each dict variable's encoded entries by key and re-encodes only the keys whose
value is a new object, or of a mutable type (which can change in place); the other
variables are encoded again and compared. ``update`` returns the encoded state, equal to
``encode_state``, and the change since the previous update in ``delta``'s format.
"""
from __future__ import annotations

import datetime
import decimal
from collections.abc import Iterable
from itertools import compress, repeat
from operator import is_not, not_
from typing import Any

from .state import LONG, MAX_ITEMS, encode, encode_state, encodes_as_itself, same

_IMMUTABLE = (int, float, str, bytes, bool, type(None), complex, decimal.Decimal,
              datetime.date, datetime.datetime, datetime.time)
_SCALARS = frozenset(_IMMUTABLE)  # values compared by equality, in C, when a dict holds only these


class IncrementalState:
    """``update(state) -> (encoded, change)``; the first change is ``{"full": ...}``."""

    def __init__(self) -> None:
        self.view: dict[str, Any] | None = None
        self.dicts: dict[str, _EncodedDict] = {}
        self.raw: dict[str, Any] = {}  # the non-dict variables as last encoded

    def update(self, state: dict[str, Any], final: bool = False) -> tuple[dict[str, Any], dict]:
        """``final``: no update follows (a worker's last snapshot), so a dict first seen
        now that encodes as itself (a combine's counts) is sent as it is, with no tables
        kept for the next change: the reduce side of an aggregation of 20,000 keys spent
        most of its final snapshot building them."""
        previous = self.view
        view: dict[str, Any] = {}
        change: dict[str, Any] = {"set": {}, "keys": {}, "del": []}
        dicts, raw = {}, {}
        for name, value in state.items():
            if _incremental(value):
                if final and name not in self.dicts and _as_itself(value):
                    view[name] = change["set"][name] = value
                    continue
                encoded = dicts[name] = self.dicts.get(name) or _EncodedDict()
                view[name], keyed = encoded.update(value)
                if keyed is None:
                    change["set"][name] = view[name]
                elif keyed["set"] or keyed["del"]:
                    change["keys"][name] = keyed
                continue
            raw[name] = value
            if previous is not None and name in previous and name in self.raw and \
                    self.raw[name] is value and isinstance(value, _IMMUTABLE):
                view[name] = previous[name]
                continue
            view[name] = encode_state({name: value})[name]
            if previous is None or not same(previous.get(name, _MISSING), view[name]):
                change["set"][name] = view[name]
        if previous is not None:
            change["del"] = [name for name in previous if name not in view]
        self.view, self.dicts, self.raw = view, dicts, raw
        return view, ({"full": view} if previous is None else change)


class _EncodedDict:
    """One dict variable: a copy of the raw dict, and each key's encoded entry."""

    def __init__(self) -> None:
        self.raw: dict = {}
        self.pairs: dict[Any, list] = {}  # key -> [encoded key, encoded value]
        self.plain: dict[str, Any] = {}  # str key -> encoded value
        self.tagged: set = set()  # keys that make the dict a tagged "$t": "dict"
        self.fresh = True

    def update(self, value: dict) -> tuple[Any, dict | None]:
        """The encoded dict, and its keyed change (None: send it whole)."""
        pairs = self.pairs
        raw = self.raw
        was_tagged = bool(self.tagged)
        removed = raw.keys() - value.keys()
        gone = [pairs.pop(key)[0] for key in removed]
        for key in removed:
            self.plain.pop(key, None)
            self.tagged.discard(key)
        candidates = list(self._candidates(value))
        items = list(map(value.__getitem__, candidates)) if len(candidates) >= LONG else None
        if items is not None and _plain_scalars(candidates, items):
            changed = self._update_plain_scalars(candidates, items)
        else:
            changed = self._update_entries(candidates, value)
        self.raw = dict(value)
        tagged = bool(self.tagged)
        view = {"$t": "dict", "items": list(pairs.values())} if tagged else dict(self.plain)
        if self.fresh or tagged != was_tagged:
            self.fresh = False
            return view, None
        if tagged:
            return view, {"tagged": True, "set": [list(e) for e in changed], "del": gone}
        return view, {"set": {k: v for k, v in changed}, "del": gone}

    def _update_entries(self, keys: list, value: dict) -> list[list]:
        """Encode each of ``keys``' values; the entries that changed."""
        pairs = self.pairs
        changed = []
        for key in keys:
            item = value[key]
            entry = pairs.get(key)
            encoded = encode(item, 1)
            if entry is not None and same(entry[1], encoded):
                continue
            pairs[key] = entry = [entry[0] if entry else encode(key, 1), encoded]
            if isinstance(key, str) and not key.startswith("$"):
                self.plain[key] = encoded
            else:
                self.tagged.add(key)
            changed.append(entry)
        return changed

    def _update_plain_scalars(self, keys: list, items: list) -> list[list]:
        """``_update_entries`` for string keys whose values encode as themselves (a
        map-side combine's counts, say): no encoding; keys new to the dict are added by
        C loops, known ones compared one by one."""
        pairs, plain = self.pairs, self.plain
        known = list(map(plain.__contains__, keys))
        changed = []
        if any(known):
            for key, item in zip(compress(keys, known), compress(items, known)):
                old = plain[key]
                if type(old) is type(item) and old == item:
                    continue
                plain[key] = item
                pairs[key] = entry = [key, item]
                changed.append(entry)
        fresh = list(map(not_, known))
        new_keys, new_items = list(compress(keys, fresh)), list(compress(items, fresh))
        plain.update(zip(new_keys, new_items))
        entries = list(map(list, zip(new_keys, new_items)))
        pairs.update(zip(new_keys, entries))
        return changed + entries

    def _candidates(self, value: dict) -> Iterable:
        """Keys that may have changed since the last update: those whose value is a new
        object, found in C when every value is an immutable scalar; else also every key
        whose value is of a type that can change in place."""
        raw = self.raw
        if set(map(type, value.values())) <= _SCALARS:
            return compress(value, map(is_not, value.values(),
                                       map(raw.get, value, repeat(_MISSING))))
        return [key for key, item in value.items()
                if key not in raw or raw[key] is not item or not isinstance(item, _IMMUTABLE)]


_MISSING = object()


def _plain_scalars(keys: list, items: list) -> bool:
    """Whether every key is a string that does not tag the dict and every item encodes
    as itself: checked by C loops."""
    return set(map(type, keys)) == {str} and not any(map(str.startswith, keys, repeat("$"))) \
        and encodes_as_itself(items)


def _as_itself(value: dict) -> bool:
    """Whether a dict's JSON encoding is the dict itself (``_plain_scalars``)."""
    keys = list(value)
    return len(keys) >= LONG and _plain_scalars(keys, list(value.values()))


def _incremental(value: Any) -> bool:
    return type(value) is dict and 0 < len(value) <= MAX_ITEMS
