"""The ``icedtea`` comm's schema, ``protocol.json``: every request's params and result and
every event's data, with their types. ``messages.py`` takes its lists and param types from
it, the tests check the kernel's replies and events against it, and the frontend's jest
suite checks ``labextension/src/comm/protocol.ts`` against it (docs/protocol.md).

A type is ``str``, ``int``, ``float``, ``bool``, ``null``, ``any``, the name of one of the
schema's ``types``, ``["list", T]``, ``["map", T]`` (an object with any keys),
``["tuple", T, ...]``, ``["or", T, ...]``, ``["enum", "a", ...]`` (strings), or an object
``{field: T, "field?": T (may be absent), "*": T (the type of any other key)}``.
"""
from __future__ import annotations

import json
import pathlib
from typing import Any

Type = Any  # a type of the schema, as loaded from JSON

SCHEMA: dict[str, Any] = json.loads(
    (pathlib.Path(__file__).with_name("protocol.json")).read_text(encoding="utf-8"))

FORMS = ("list", "map", "tuple", "or", "enum")


def fields(obj: dict[str, Type]) -> dict[str, tuple[Type, bool]]:
    """An object type's fields: name -> (type, required); ``*`` is not a field."""
    return {name.rstrip("?"): (kind, not name.endswith("?"))
            for name, kind in obj.items() if name != "*"}


def python_type(kind: Type) -> type:
    """The Python type a request parameter of ``kind`` must have (params are scalars)."""
    known = {"str": str, "int": int, "float": float, "bool": bool}
    if kind not in known:
        raise ValueError(f"a request parameter must be str, int, float or bool, not {kind!r}")
    return known[kind]


def enum_values(name: str) -> tuple[str, ...]:
    """The strings of a named ``["enum", ...]`` type."""
    kind = SCHEMA["types"][name]
    if not (isinstance(kind, list) and kind[0] == "enum"):
        raise ValueError(f"{name} is not an enum")
    return tuple(kind[1:])


def check(value: Any, kind: Type, where: str = "") -> list[str]:
    """Where ``value`` (as JSON gives it) does not have type ``kind``; empty if it does."""
    where = where or "value"
    if isinstance(kind, str):
        return _check_name(value, kind, where)
    if isinstance(kind, dict):
        return _check_object(value, kind, where)
    form, args = kind[0], kind[1:]
    if form == "or":
        problems = [check(value, option, where) for option in args]
        if all(problems):
            return [f"{where}: {_short(value)} is none of {args}"]
        return []
    if form == "enum":
        return [] if value in args else [f"{where}: {_short(value)} is not one of {args}"]
    if form == "list":
        if not isinstance(value, list):
            return [f"{where}: {_short(value)} is not a list"]
        return [p for i, item in enumerate(value) for p in check(item, args[0], f"{where}[{i}]")]
    if form == "tuple":
        if not isinstance(value, list) or len(value) != len(args):
            return [f"{where}: {_short(value)} is not a list of {len(args)}"]
        return [p for i, (item, k) in enumerate(zip(value, args))
                for p in check(item, k, f"{where}[{i}]")]
    if form == "map":
        if not isinstance(value, dict):
            return [f"{where}: {_short(value)} is not an object"]
        return [p for key, item in value.items() for p in check(item, args[0], f"{where}.{key}")]
    raise ValueError(f"unknown type form {form!r} in the schema")


def _check_name(value: Any, name: str, where: str) -> list[str]:
    if name in SCHEMA["types"]:
        return check(value, SCHEMA["types"][name], where)
    if name not in _IS:
        raise ValueError(f"unknown type {name!r} in the schema")
    return [] if _IS[name](value) else [f"{where}: {_short(value)} is not {name}"]


_IS: dict[str, Any] = {  # scalar type -> whether a JSON value has it (JSON true is no int)
    "str": lambda v: isinstance(v, str),
    "int": lambda v: isinstance(v, int) and not isinstance(v, bool),
    "float": lambda v: isinstance(v, (int, float)) and not isinstance(v, bool),
    "bool": lambda v: isinstance(v, bool),
    "null": lambda v: v is None,
    "any": lambda v: True}


def _check_object(value: Any, obj: dict, where: str) -> list[str]:
    if not isinstance(value, dict):
        return [f"{where}: {_short(value)} is not an object"]
    problems = []
    known = fields(obj)
    for name, (kind, required) in known.items():
        if name in value:
            problems += check(value[name], kind, f"{where}.{name}")
        elif required:
            problems.append(f"{where}: no field {name!r}")
    for name in value.keys() - known.keys():
        if "*" in obj:
            problems += check(value[name], obj["*"], f"{where}.{name}")
        else:
            problems.append(f"{where}: field {name!r} is not in the schema")
    return problems


def _short(value: Any) -> str:
    text = json.dumps(value, default=repr)
    return text if len(text) <= 80 else text[:80] + "…"


def check_result(method: str, result: Any) -> list[str]:
    """Where a reply's result does not have the type the schema gives ``method``."""
    return check(result, SCHEMA["requests"][method]["result"], f"{method} result")


def check_event(name: str, data: Any) -> list[str]:
    """Where an event's data does not have the type the schema gives event ``name``."""
    return check(data, SCHEMA["events"][name], f"{name} data")


def names(kind: Type) -> set[str]:
    """The type names ``kind`` uses (to check that the schema defines each one)."""
    if isinstance(kind, str):
        return set() if kind in _IS else {kind}
    if isinstance(kind, dict):
        return {n for k in kind.values() for n in names(k)}
    if kind[0] not in FORMS:
        raise ValueError(f"unknown type form {kind[0]!r} in the schema")
    return set() if kind[0] == "enum" else {n for k in kind[1:] for n in names(k)}
