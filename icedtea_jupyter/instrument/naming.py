"""Operator names: ``setName`` on the result, an explicit name, else the function's or
class's name, else the API's (for lambdas)."""
from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, TypeVar, cast

F = TypeVar("F", bound=Callable)
ATTRIBUTE = "__icedtea_name__"


def named(name: str, f: F) -> F:
    """Give ``f`` an explicit operator name: ``rdd.map(named("parse", lambda r: ...))``."""
    if not isinstance(name, str) or not name:
        raise ValueError("an operator name must be a non-empty string")
    try:
        setattr(f, ATTRIBUTE, name)
    except (AttributeError, TypeError):
        wrapped = functools.partial(f)  # a builtin or a bound method: a partial takes names
        setattr(wrapped, ATTRIBUTE, name)
        return cast(F, wrapped)  # called as f is
    return f


def default_name(f: Any, api: str) -> str:
    explicit = getattr(f, ATTRIBUTE, None) or _operator_name(f)
    if explicit:
        return explicit
    while isinstance(f, functools.partial):
        f = f.func
    name = getattr(f, "__name__", None)
    if name is None:
        name = type(f).__name__
    if not name or name.startswith("<") or name in ("wrapper", "func", "f"):
        return api
    return name


def _operator_name(f: Any) -> str | None:
    from ..executor.operator import Operator

    if isinstance(f, Operator):
        return getattr(f, "name", None)
    return None
