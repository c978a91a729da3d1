"""Warnings for operators whose replay may differ from the run: unseeded randomness,
wall-clock reads, UDFs marked non-deterministic (IcedTea §5.4)."""
from __future__ import annotations

import dis
import types
from collections.abc import Iterator
from typing import Any

_RANDOM = "unseeded randomness"
_CLOCK = "the wall clock"
# (module-like name, attribute) read as `module.attribute`
_ATTRIBUTES = {
    "random": _RANDOM, "randint": _RANDOM, "uniform": _RANDOM, "shuffle": _RANDOM,
    "choice": _RANDOM, "gauss": _RANDOM, "rand": _RANDOM, "randn": _RANDOM,
    "uuid4": "random UUIDs", "urandom": "random bytes", "token_hex": "random tokens",
    "time": _CLOCK, "time_ns": _CLOCK, "now": _CLOCK, "today": _CLOCK, "utcnow": _CLOCK,
}
_MODULES = {"random", "time", "datetime", "uuid", "secrets", "os", "np", "numpy", "date"}
# names imported on their own (`from random import randint`)
_BARE = {"randint": _RANDOM, "uniform": _RANDOM, "shuffle": _RANDOM, "choice": _RANDOM,
         "gauss": _RANDOM, "uuid4": "random UUIDs", "urandom": "random bytes"}


def _code_objects(f: Any) -> Iterator[types.CodeType]:
    target = f
    process = getattr(type(f), "process", None)  # an Operator: look at its methods
    if process is not None and not isinstance(f, types.FunctionType):
        for name in ("open", "process", "close"):
            method = getattr(type(f), name, None)
            if isinstance(method, types.FunctionType):
                yield from _nested(method.__code__)
        return
    code = getattr(target, "__code__", None)
    if code is None:  # a callable object: its __call__ method's code
        call = getattr(target, "__call__", None)  # noqa: B004 - the method, not a callable test
        code = getattr(call, "__code__", None)
    if code is not None:
        yield from _nested(code)


def _nested(code: types.CodeType) -> Iterator[types.CodeType]:
    yield code
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            yield from _nested(const)


def _suspect_calls(code: types.CodeType) -> Iterator[tuple[str, str]]:
    previous = None
    for instruction in dis.get_instructions(code):
        name = instruction.argval
        if instruction.opname in ("LOAD_ATTR", "LOAD_METHOD") and name in _ATTRIBUTES \
                and previous is not None and previous.argval in _MODULES:
            yield f"{previous.argval}.{name}", _ATTRIBUTES[name]
        elif instruction.opname in ("LOAD_GLOBAL", "LOAD_NAME") and name in _BARE:
            yield name, _BARE[name]
        previous = instruction


def nondeterminism_warnings(operator: str, f: Any) -> list[str]:
    """One warning per kind of non-deterministic call found in ``f``'s code."""
    if f is None:
        return []
    if getattr(f, "deterministic", True) is False:
        return [f"operator {operator!r} is marked non-deterministic: a replay may differ "
                "from the run; wrap such calls in icedtea_jupyter.log_result"]
    found: dict[str, str] = {}
    for code in _code_objects(f):
        if "log_result" in code.co_names:
            continue
        for call, why in _suspect_calls(code):
            found.setdefault(why, call)
    return [f"operator {operator!r} calls {call} ({why}): a replay may differ from the run; "
            f"wrap the call in icedtea_jupyter.log_result(fn, ...)"
            for why, call in sorted(found.items())]
