"""A worker's state: what it is, how it travels (safe JSON, never pickle), what changed.

``capture`` collects the state variables of a worker by name: an ``Operator``'s
instance attributes, the local variables of a suspended generator, the running
combiners of a key-based aggregation, a callable object's attributes.
``encode`` turns values into tagged JSON that ``decode`` (in the kernel) rebuilds
without executing anything; values too large to ship are summarised, with a note.
This module is the one tagged-JSON codec of the Python side (``encode_described`` tags a
record a worker described); ``tests/vectors/tagged_json.json`` pins its output for both
languages. ``same`` compares encoded values; what changed between two snapshots of a
worker is in ``executor/incremental.py`` (on the worker) and ``snapshots/deltas.py``
(in the kernel).
"""
from __future__ import annotations

import base64
import datetime
import decimal
import json
import math
import re
from collections.abc import Callable
from itertools import islice
from typing import Any

from .attributes import instance_attributes

MAX_ITEMS = 20_000   # containers larger than this are summarised
MAX_REPORTED_VALUES = 200_000  # a variable holding more, nested, is reported in summary
MAX_DEPTH = 12
SAMPLE = 20


def capture(function: Any, generator: Any = None, merger: Any = None,
            final_locals: dict | None = None) -> dict[str, Any]:
    """The state variables of a worker, by name (live objects, not copies).

    ``function`` is the user's callable: an ``Operator`` or callable object contributes
    its attributes, a closure the variables it closes over (except functions and
    modules); ``generator`` a suspended generator's locals (``final_locals``, taken
    when its input ran out, once its frame has closed); ``merger`` the combiners.
    """
    state: dict[str, Any] = {}
    if function is not None:
        if _is_plain_function(function):
            state.update(_closure_variables(function))
        else:
            attributes = instance_attributes(function)
            state.update({k: v for k, v in attributes.items() if not k.startswith("_")})
    frame = getattr(generator, "gi_frame", None)
    local_vars = frame.f_locals if frame is not None else final_locals
    if generator is not None and local_vars is not None:
        state.update({k: v for k, v in local_vars.items()
                      if not k.startswith(".") and not _is_iterator(v)})
    if merger is not None:
        state["combiners"] = getattr(merger, "data", {})
        if getattr(merger, "spills", 0):
            state["spilled_to_disk"] = merger.spills
    return state


def _is_iterator(obj: Any) -> bool:
    """The generator's input and other iterators: plumbing, not state."""
    return hasattr(obj, "__next__") and hasattr(obj, "__iter__")


def _is_plain_function(obj: Any) -> bool:
    return type(obj).__name__ in ("function", "builtin_function_or_method", "method")


def _closure_variables(function: Any) -> dict[str, Any]:
    code = getattr(function, "__code__", None)
    cells = getattr(function, "__closure__", None) or ()
    variables = {}
    for name, cell in zip(getattr(code, "co_freevars", ()), cells):
        try:
            value = cell.cell_contents
        except ValueError:  # an empty cell
            continue
        if not callable(value) and type(value).__name__ != "module":
            variables[name] = value
    return variables


# --- encoding ---------------------------------------------------------------------------
def encode(value: Any, depth: int = 0) -> Any:
    """Tagged JSON for ``value``; containers of other kinds than JSON's carry ``$t``."""
    if value is None or isinstance(value, (bool, str)):
        return value
    if isinstance(value, int):
        return value if -(2 ** 53) < value < 2 ** 53 else {"$t": "int", "v": str(value)}
    if isinstance(value, float):  # whole ones tagged: JSON would make 5000.0 read 5000
        return value if math.isfinite(value) and not value.is_integer() else \
            {"$t": "float", "v": repr(value)}
    if depth >= MAX_DEPTH:
        return _summary(value, "nested too deeply to show")
    if isinstance(value, dict):
        if isinstance(value, (Summary, ObjectView)):  # decoded already: tagged again
            return _reencode(value, depth)
        if len(value) > MAX_ITEMS:
            return _summary(value, f"more than {MAX_ITEMS:,} entries")
        if all(isinstance(k, str) and not k.startswith("$") for k in value):
            return {k: encode(v, depth + 1) for k, v in value.items()}
        return {"$t": "dict", "items": [[encode(k, depth + 1), encode(v, depth + 1)]
                                        for k, v in value.items()]}
    if isinstance(value, (list, tuple, set, frozenset)) and not _is_row(value):
        if len(value) > MAX_ITEMS:
            return _summary(value, f"more than {MAX_ITEMS:,} items")
        items = list(value) if encodes_as_itself(value) else \
            [encode(v, depth + 1) for v in value]
        if isinstance(value, list):
            return items
        tag = "tuple" if isinstance(value, tuple) else "set"
        return {"$t": tag, "v": items}
    return _encode_other(value, depth)


_AS_THEMSELVES = frozenset({str, bool, type(None)})  # JSON values whose encoding is themselves
LONG = 16  # containers this long are checked in C first: scalars of one kind pass whole
_SAFE_INT = 2 ** 53


def encodes_as_itself(items: Any) -> bool:
    """Whether every item of a long container encodes as itself (strings, booleans and
    None; or ints within JSON's exact range), found by C loops over the items."""
    if len(items) < LONG:
        return False
    kinds = set(map(type, items))
    return kinds <= _AS_THEMSELVES or (kinds == {int} and -_SAFE_INT < min(items)
                                      and max(items) < _SAFE_INT)


def _is_row(value: Any) -> bool:
    """A pyspark ``Row`` (a tuple with field names): tagged ``row``, not ``tuple``."""
    return (type(value) is not tuple and isinstance(value, tuple) and hasattr(value, "asDict")
            and hasattr(value, "__fields__"))


def _encode_other(value: Any, depth: int) -> Any:
    if isinstance(value, (bytes, bytearray)):
        if len(value) > MAX_ITEMS * 8:
            return _summary(value, "too many bytes")
        return {"$t": "bytes", "v": base64.b64encode(bytes(value)).decode()}
    if isinstance(value, (datetime.datetime, datetime.date, datetime.time)):
        return {"$t": type(value).__name__, "v": value.isoformat()}
    if isinstance(value, decimal.Decimal):
        return {"$t": "decimal", "v": str(value)}
    as_dict = getattr(value, "asDict", None)  # pyspark Row
    if callable(as_dict):
        try:
            return _row(encode(as_dict(), depth + 1))
        except Exception:  # noqa: S110 - asDict raised: shown as an object below
            pass
    tolist = getattr(value, "tolist", None)  # numpy arrays and scalars
    if callable(tolist) and type(value).__module__.startswith("numpy"):
        size = getattr(value, "size", 1)
        if size > MAX_ITEMS:
            return _summary(value, f"more than {MAX_ITEMS:,} elements")
        return encode(tolist(), depth + 1)
    if type(value).__module__.startswith("pandas."):  # a frame or series: its table,
        return _object(_type_name(value), _repr(value, 2000))  # not pandas' internals
    attributes = instance_attributes(value)
    encoded = _object(_type_name(value), _repr(value))
    if attributes:
        encoded["attrs"] = encode({str(k): v for k, v in attributes.items()}, depth + 1)
    return encoded


def encode_described(described: dict | None) -> Any:
    """Tagged JSON for a record known by its description (``records.describe_record``:
    its JSON-able value, type name and repr), as the worker sends a condition's record:
    scalars and Rows as ``encode`` gives them, others as objects known by type and repr."""
    if not described:
        return None
    value, kind = described.get("value"), described.get("type")
    if kind in ("int", "float", "str", "bool"):
        return encode(value)
    if kind == "Row" and isinstance(value, dict):
        return _row(encode(value, 1))
    return _object(kind or "object", described.get("repr", ""))


def _row(fields: Any) -> dict:
    return {"$t": "row", "v": fields}


def _object(type_name: str, text: str) -> dict:
    return {"$t": "object", "type": type_name, "repr": text}


def _reencode(value: dict, depth: int) -> dict:
    """``encode(decode(x)) == x`` for summaries and objects the kernel decoded."""
    encoded = {k: v for k, v in value.items() if k != "attrs"}
    if isinstance(value, ObjectView) and value.get("attrs"):
        encoded["attrs"] = encode(dict(value["attrs"]), depth + 1)
    return encoded


def _summary(value: Any, why: str) -> dict:
    summary: dict[str, Any] = {"$t": "summary", "type": _type_name(value), "note": why}
    try:
        summary["len"] = len(value)
    except TypeError:
        pass
    if isinstance(value, dict):
        summary["sample"] = [_repr(k) for k in list(value)[:SAMPLE]]
    elif isinstance(value, (list, tuple)):
        summary["sample"] = [_repr(v) for v in value[:SAMPLE]]
    elif isinstance(value, (set, frozenset)):  # a few members: never the repr of them all
        summary["sample"] = [_repr(v) for v in islice(value, SAMPLE)]
    else:
        summary["repr"] = _repr(value)
    return summary


def _type_name(value: Any) -> str:
    kind = type(value)
    return kind.__name__ if kind.__module__ == "builtins" else f"{kind.__module__}.{kind.__name__}"


def _repr(value: Any, limit: int = 300) -> str:
    """``repr(value)``, cut at ``limit``, without memory addresses (``<… object at
    0x…>``: a pyarrow array's, a plain object's), which differ between the run's worker
    and replay for the same state."""
    try:
        text = _ADDRESS.sub("", repr(value))
    except Exception as exc:
        text = f"<unrepresentable: {exc}>"
    return text if len(text) <= limit else text[:limit] + "…"


_ADDRESS = re.compile(r" at 0x[0-9a-fA-F]+")


def encode_state(state: dict[str, Any]) -> dict[str, Any]:
    encoded = {}
    for name, value in state.items():
        try:
            encoded[name] = encode(value)
        except Exception as exc:  # a property that raises, a broken __repr__...
            encoded[name] = {"$t": "summary", "type": _type_name(value),
                             "note": f"cannot be shown: {type(exc).__name__}: {exc}"}
    return encoded


def approximate_values(value: Any, depth: int = 0) -> int:
    """About how many values ``value`` holds, nested containers included: each container's
    length times what its first element holds (a few steps, never a walk of the values)."""
    if depth >= 4 or not isinstance(value, (dict, list, tuple, set, frozenset)) \
            or _is_row(value) or not value:
        return 1
    first = next(iter(value.values() if isinstance(value, dict) else value))
    return len(value) * (1 + approximate_values(first, depth + 1))


def bounded_state(state: dict[str, Any], limit: int = MAX_REPORTED_VALUES) -> dict[str, Any]:
    """The state with each variable too large to encode at every interaction (a join's
    values per key, say) replaced by its summary; the debugger shows it whole."""
    bounded = {}
    for name, value in state.items():
        size = approximate_values(value)
        bounded[name] = value if size <= limit else Summary(_summary(
            value, f"about {size:,} values, too many to send at every interaction: jump to "
                   "it with run.debugger() to see it whole"))
    return bounded


# --- comparing encoded values ----------------------------------------------------------
def same(a: Any, b: Any) -> bool:
    """Equal as JSON: 1, 1.0 and True differ."""
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    if isinstance(a, list):
        if len(a) != len(b):
            return False
        if len(a) >= LONG:  # one kind of scalar on both sides: equal as JSON if ==
            kinds = set(map(type, a)) | set(map(type, b))
            if kinds <= _AS_THEMSELVES or kinds == {int} or kinds == {float}:
                return a == b
        return all(map(same, a, b))
    return a == b


# --- decoding (kernel side) ----------------------------------------------------------------
class Summary(dict):
    """A value too large (or too strange) to ship, shown by its size and a sample."""

    def __repr__(self) -> str:
        return f"<{self.get('type')} summarised: {self.get('note')}; len={self.get('len', '?')}>"


class ObjectView(dict):
    """An object of a class the kernel need not have: its type, repr and attributes."""

    def __repr__(self) -> str:
        return self.get("repr", "<object>")


def decode(value: Any, row: Callable[[dict], Any] | None = None) -> Any:
    """Rebuild a value from ``encode``'s output; builds only plain data, runs no code.
    ``row`` makes a Spark row of its fields (default: the fields, as a dict)."""
    if isinstance(value, list):
        return [decode(v, row) for v in value]
    if not isinstance(value, dict):
        return value
    tag = value.get("$t")
    if tag is None:
        return {k: decode(v, row) for k, v in value.items()}
    decoder = _DECODERS.get(tag)
    if decoder is None:
        return ObjectView(value)
    try:
        return decoder(value, row)
    except (KeyError, TypeError, ValueError, ArithmeticError, AttributeError) as exc:
        return Summary({"$t": "summary", "type": str(tag),
                        "note": f"a malformed {str(tag)[:40]!r} value: "
                                f"{type(exc).__name__}: {str(exc)[:200]}",
                        "repr": _repr(value)})


def _decode_dict(value: dict, row: Any) -> dict:
    result = {}
    for k, v in value["items"]:
        key = decode(k, row)
        try:
            hash(key)
        except TypeError:
            key = json.dumps(k, sort_keys=True)
        result[key] = decode(v, row)
    return result


def _decode_set(value: dict, row: Any) -> Any:
    items = [decode(v, row) for v in value["v"]]
    try:
        return set(items)
    except TypeError:
        return items


def _decode_row(value: dict, row: Any) -> Any:
    fields = decode(value["v"], row)
    return fields if row is None else row(fields)


_DECODERS: dict[str, Callable[[dict, Any], Any]] = {
    "dict": _decode_dict,
    "tuple": lambda v, row: tuple(decode(x, row) for x in v["v"]),
    "set": _decode_set,
    "int": lambda v, row: int(v["v"]),
    "float": lambda v, row: float(v["v"]),
    "bytes": lambda v, row: base64.b64decode(v["v"]),
    "datetime": lambda v, row: datetime.datetime.fromisoformat(v["v"]),
    "date": lambda v, row: datetime.date.fromisoformat(v["v"]),
    "time": lambda v, row: datetime.time.fromisoformat(v["v"]),
    "decimal": lambda v, row: decimal.Decimal(v["v"]),
    "row": _decode_row,
    "summary": lambda v, row: Summary(v),
    "object": lambda v, row: ObjectView({**v, "attrs": decode(v.get("attrs", {}), row)}),
}
