"""Default operator names: the function's or class's name, else the API's."""
from __future__ import annotations

import functools
from typing import Any


def default_name(f: Any, api: str) -> str:
    while isinstance(f, functools.partial):
        f = f.func
    name = getattr(f, "__name__", None)
    if name is None:
        name = type(f).__name__
    if not name or name.startswith("<") or name in ("wrapper", "func", "f"):
        return api
    return name
