"""The fields of a record, as the samples and summaries agents see them.

A Spark ``Row`` or a dict has named fields; a tuple has ``_1``, ``_2``... (as Spark
names a tuple's columns); anything else is one field, ``value``. A field's value is
kept when it is None, a bool, a number or a string, else replaced by its ``repr``
(cut to ``REPR_LIMIT`` characters), so that samples and summaries are plain JSON.
"""
from __future__ import annotations

from typing import Any

REPR_LIMIT = 200
PLAIN = (bool, int, float, str, type(None))


def field_names(record: Any) -> list[str]:
    """The names of ``record``'s fields."""
    if isinstance(record, dict):
        return [str(k) for k in record]
    if isinstance(record, tuple):
        named = getattr(record, "__fields__", None) or getattr(record, "_fields", None)
        return list(named) if named else [f"_{i + 1}" for i in range(len(record))]
    return ["value"]


def field_values(record: Any) -> list:
    """``record``'s field values, in the order of ``field_names``."""
    if isinstance(record, dict):
        return list(record.values())
    if isinstance(record, tuple):
        return list(record)
    return [record]


def plain(value: Any) -> Any:
    """``value`` if JSON keeps it as it is, else its repr (cut)."""
    if isinstance(value, PLAIN) and not (isinstance(value, int) and abs(value) >= 2 ** 63):
        return value
    return repr(value)[:REPR_LIMIT]


def plain_fields(record: Any) -> dict[str, Any]:
    """``record`` as a dict of plain field values."""
    return {name: plain(value) for name, value in zip(field_names(record),
                                                          field_values(record))}
