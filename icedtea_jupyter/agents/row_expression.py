"""Python expressions over ``row``, as the flags write them (``"op: expression"``)."""
from __future__ import annotations

from collections.abc import Callable
from typing import Any


def split_flag(flag: str, text: str, example: str) -> tuple[str, str]:
    """``"operator: rest"`` -> (operator, rest); ValueError naming ``flag`` if not."""
    operator, colon, rest = text.partition(":")
    if not colon or not operator.strip() or not rest.strip():
        raise ValueError(f"{flag} {text!r}: write it as \"operator: ...\", e.g. {example}")
    return operator.strip(), rest.strip()


def row_predicate(expression: str, what: str) -> Callable[[Any], Any]:
    """``lambda row: (expression)`` with the builtins; SyntaxError if it does not parse."""
    return eval(compile(f"lambda row: ({expression})", f"<{what}>", "eval"), {})


def field_getter(field: str) -> Callable[[Any], Any]:
    """A record's ``field``: an index for a number (tuples, ``(key, value)`` pairs),
    else the attribute (Rows, objects) or the item (dicts)."""
    if field.lstrip("-").isdigit():
        index = int(field)
        return lambda record: record[index]

    def get(record: Any) -> Any:
        if isinstance(record, dict):
            return record[field]
        return getattr(record, field)
    return get
