"""A group as the record of an exception policy (``udf_errors.UdfErrors.group``).

``applyInPandas`` calls its function once per group (``f(frame)``, ``f(key, frame)``,
cogrouped ``f(left, right)`` or ``f(key, left, right)``); a grouped-aggregate
``@pandas_udf`` once per group's Series (``f(s)`` or ``f(s1, s2, ...)``). The record a
hit shows, the quarantine keeps and an edit stores is plain data:

- applyInPandas: ``{"key": key, "rows": [row dicts]}`` (cogrouped: ``"left"`` and
  ``"right"`` instead of ``"rows"``); ``"key"`` only when the function takes the key
  (else the grouping columns are in the rows).
- an aggregate: the group's values as a list (a tuple of lists for several arguments).

A replacement is given the same way, or as what the function takes: a pandas DataFrame
(or a list of row dicts; a pair of them cogrouped) for applyInPandas, a Series or list
(a tuple of them) for an aggregate. The key stays the group's. No pandas import here:
the workers' frames give their own types.
"""
from __future__ import annotations

from typing import Any

FRAME_NAMES = ("left", "right")


def group_rows(args: tuple, aggregate: bool) -> int:
    """The group's rows as the host counts them (its input count moves by this)."""
    if not args:
        return 0
    return len(args[0] if aggregate else args[-1])


def group_record(args: tuple, aggregate: bool) -> Any:
    """The group's call as plain data (see the module's docstring)."""
    if aggregate:
        values = [_plain_values(a) for a in args]
        return values[0] if len(values) == 1 else tuple(values)
    key, frames = _split(args)
    record: dict[str, Any] = {} if key is None else {"key": _plain_key(key)}
    names = ("rows",) if len(frames) == 1 else FRAME_NAMES
    for name, frame in zip(names, frames):
        record[name] = _rows(frame)
    return record


def skipped_group(args: tuple) -> Any:
    """A skipped group's result: an empty frame (no rows, no columns: Spark's schema
    check accepts it)."""
    _, frames = _split(args)
    return type(frames[-1])()


def replaced_group(args: tuple, replacement: Any, aggregate: bool) -> tuple:
    """The function's arguments for ``replacement`` instead of the group's, the key
    kept; a replacement of the wrong shape raises a TypeError saying what is taken."""
    if aggregate:
        given = (replacement,) if len(args) == 1 else replacement
        if not isinstance(given, (tuple, list)) or len(given) != len(args):
            raise TypeError(f"replace() on an aggregate UDF of {len(args)} arguments "
                            f"takes a tuple of {len(args)} lists, not {replacement!r}")
        return tuple(_series_like(a, v) for a, v in zip(args, given))
    key, frames = _split(args)
    given = _frames_given(replacement, len(frames))
    new = tuple(_frame_like(f, v) for f, v in zip(frames, given))
    return new if key is None else (key, *new)


def plain_record(record: Any) -> Any:
    """A replacement as plain data a worker can be sent: a pandas DataFrame as its row
    dicts, a Series or an array as its list, inside tuples and lists too."""
    if type(record) in (tuple, list):
        return type(record)(plain_record(r) for r in record)
    if type(record).__module__.split(".")[0] not in ("pandas", "numpy", "pyarrow"):
        return record
    if hasattr(record, "columns"):
        return _rows(record)
    if hasattr(record, "iloc") or hasattr(record, "to_pylist") or bool(getattr(record, "ndim", None)):
        return _plain_values(record)
    return plain(record)


def _split(args: tuple) -> tuple[Any, list]:
    """(the key or None, the frames) of an applyInPandas call."""
    if args and not hasattr(args[0], "columns"):
        return args[0], list(args[1:])
    return None, list(args)


def _frames_given(replacement: Any, count: int) -> list:
    names = ("rows",) if count == 1 else FRAME_NAMES
    if isinstance(replacement, dict) and all(n in replacement for n in names):
        return [replacement[n] for n in names]
    if count == 1 and _is_frame_data(replacement):
        return [replacement]
    if count > 1 and isinstance(replacement, (tuple, list)) and len(replacement) == count \
            and all(_is_frame_data(r) for r in replacement):
        return list(replacement)
    shape = "a DataFrame (or a list of row dicts)" if count == 1 else \
        f"a tuple of {count} DataFrames (or lists of row dicts)"
    raise TypeError(f"replace() on a group takes {shape}, or a dict with "
                    f"{' and '.join(map(repr, names))}, not {replacement!r}"[:600])


def _is_frame_data(value: Any) -> bool:
    return hasattr(value, "columns") or (
        isinstance(value, list) and all(isinstance(r, dict) for r in value))


def _frame_like(frame: Any, value: Any) -> Any:
    """``value`` (a frame or row dicts) as a frame of ``frame``'s type, its columns
    (those it has, in the group's order first) and, where they convert, its dtypes."""
    if hasattr(value, "columns"):
        return value
    extra = [c for row in value for c in row if c not in frame.columns]
    columns = list(frame.columns) + list(dict.fromkeys(extra))
    new = type(frame).from_records(value, columns=columns) if value else \
        type(frame)(columns=columns)
    for column in frame.columns:
        try:
            new[column] = new[column].astype(frame.dtypes[column])
        except (TypeError, ValueError):
            pass  # a value of another kind: kept as given
    return new


def _series_like(series: Any, values: Any) -> Any:
    """``values`` as an argument like ``series`` (a pandas Series, an Arrow array)."""
    if hasattr(values, "iloc") or hasattr(values, "to_pylist"):
        return values
    if hasattr(series, "to_pylist"):
        import pyarrow as pa

        return pa.array(list(values), type=series.type)
    try:
        return type(series)(list(values), name=series.name, dtype=series.dtype)
    except (TypeError, ValueError):
        return type(series)(list(values), name=series.name)


def _rows(frame: Any) -> list[dict]:
    return [{str(k): plain(v) for k, v in row.items()} for row in frame.to_dict("records")]


def _plain_values(values: Any) -> list:
    listed = values.tolist() if hasattr(values, "tolist") else values.to_pylist()
    return [plain(v) for v in listed]


def _plain_key(key: Any) -> Any:
    return tuple(plain(k) for k in key) if isinstance(key, tuple) else plain(key)


def plain(value: Any) -> Any:
    """A numpy scalar as Python's, other values as they are."""
    item = getattr(value, "item", None)
    return item() if callable(item) and type(value).__module__ == "numpy" else value
