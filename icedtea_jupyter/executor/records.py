"""Turning records into JSON-able descriptions for errors, samples and the UI."""
from __future__ import annotations

from typing import Any

MAX_REPR = 2000
NO_RECORD = object()  # "no record": a failure outside any record, a check without a sample


def to_jsonable(value: Any, depth: int = 4) -> Any:
    """A JSON-able copy of ``value`` (Rows become dicts), or None if it has none."""
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if depth <= 0:
        return None
    as_dict = getattr(value, "asDict", None)
    if callable(as_dict):
        try:
            return {str(k): to_jsonable(v, depth - 1) for k, v in as_dict().items()}
        except Exception:
            return None
    if isinstance(value, dict):
        return {str(k): to_jsonable(v, depth - 1) for k, v in list(value.items())[:100]}
    if isinstance(value, (list, tuple)):
        return [to_jsonable(v, depth - 1) for v in value[:100]]
    return None


def describe_record(record: Any) -> dict:
    """``{"repr": ..., "value": ..., "type": ...}`` for a culprit record or a sample."""
    try:
        text = repr(record)
    except Exception as exc:
        text = f"<unrepresentable {type(record).__name__}: {exc}>"
    if len(text) > MAX_REPR:
        text = text[:MAX_REPR] + "…"
    return {"repr": text, "value": to_jsonable(record), "type": type(record).__name__}
