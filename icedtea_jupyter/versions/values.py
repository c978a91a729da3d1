"""What a user names when an operator changed: its readable values, by name.

A fingerprint says *that* an operator changed; ``readable_values`` says what a person
would call the change: ``Gap.GAP`` (a class attribute, through the user's classes of
the operator's MRO), ``self.factor`` (an instance attribute), ``k`` (a closure
variable), ``LIMIT`` (a global the code reads), ``default x`` (a default argument),
each as a short ``repr``. ``changed_values`` compares two such maps:
``["Gap.GAP: 10 → 3"]``.
"""
from __future__ import annotations

import types
from typing import Any

from . import fingerprint as prints

_SHOWN = 60  # a longer repr is shown by its digest's first characters
_ITEMS = 16  # a larger container is shown by its length (its repr could take seconds)


def readable_values(f: Any) -> dict[str, str]:
    """The operator's values a user sets by name, each as a short text."""
    out: dict[str, str] = {}
    if isinstance(f, types.MethodType):
        out.update(_object_values(f.__self__))
        f = f.__func__
    if isinstance(f, types.FunctionType):
        out.update(_function_values(f))
    elif f is not None:
        out.update(_object_values(f))
    return out


def changed_values(before: dict[str, str], after: dict[str, str]) -> list[str]:
    """``"name: old → new"`` for every value that differs (``(none)``: absent)."""
    names = [n for n in after if before.get(n) != after[n]]
    names += [n for n in before if n not in after]
    return [f"{n}: {before.get(n, '(none)')} → {after.get(n, '(none)')}" for n in names]


def _function_values(f: types.FunctionType) -> dict[str, str]:
    out: dict[str, str] = {}
    code = f.__code__
    for name, cell in zip(code.co_freevars, f.__closure__ or ()):
        try:
            value = cell.cell_contents
        except ValueError:  # an empty cell
            continue
        if not callable(value) and not isinstance(value, types.ModuleType):
            out[name] = _short(value)
    for name, value in zip(reversed(code.co_varnames[:code.co_argcount]),
                           reversed(f.__defaults__ or ())):
        out[f"default {name}"] = _short(value)
    for name, value in (f.__kwdefaults__ or {}).items():
        out[f"default {name}"] = _short(value)
    scope = f.__globals__
    for name in sorted(prints.names_read(code)):
        value = scope.get(name)
        if name in scope and not callable(value) and not isinstance(value, types.ModuleType):
            out[name] = _short(value)
    return out


def _object_values(obj: Any) -> dict[str, str]:
    out: dict[str, str] = {}
    for cls in reversed(type(obj).__mro__):
        if cls is object or prints.is_library(cls):
            continue
        for name, value in vars(cls).items():
            if name in prints.CLASS_NOISE or callable(value) or \
                    isinstance(value, (staticmethod, classmethod, property)):
                continue
            out[f"{cls.__name__}.{name}"] = _short(value)
    for name, value in (prints.instance_attributes(obj) or {}).items():
        out[f"self.{name}"] = _short(value)
    return out


def _short(value: Any) -> str:
    if isinstance(value, (list, tuple, set, frozenset, dict)) and len(value) > _ITEMS:
        return f"<{type(value).__name__} of {len(value):,} items>"  # no repr of a big one
    if isinstance(value, (str, bytes)) and len(value) > _SHOWN:
        return f"<{type(value).__name__} of {len(value):,} {prints.digest(value)[:10]}>"
    try:
        text = "{" + ", ".join(sorted(map(repr, value))) + "}" \
            if isinstance(value, (set, frozenset)) else repr(value)
    except Exception:  # noqa: BLE001 - a repr that raises: its type is what shows
        return f"<{type(value).__name__}>"
    if len(text) <= _SHOWN and " at 0x" not in text:  # an address differs every run
        return text
    return f"<{type(value).__name__} {prints.value_fingerprint(value)[:10]}>"
