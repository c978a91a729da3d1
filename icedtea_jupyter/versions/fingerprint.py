"""Fingerprints of what a pipeline is made of: values, functions, operators, sources.

A fingerprint is a hex digest. Equal fingerprints mean equal behaviour as far as this
module can see: a function's bytecode, constants, closure values, defaults and the
globals it reads; an ``Operator``'s class source and attributes; a source's content
(a parallelized collection) or its files' paths, sizes and modification times. What
cannot be fingerprinted gets a fresh random digest (never equal to another), with the
reason in ``Unknown.reasons``, so nothing built on it is ever reused.
"""
from __future__ import annotations

import hashlib
import inspect
import os
import pickle
import secrets
import types
from array import array
from collections.abc import Iterable
from typing import Any

_PLAIN = (type(None), bool, int, float, complex, str, bytes)
_BULK = 256  # a longer list or tuple of plain rows is hashed as one pickle


class Unknown:
    """Collects why parts of a fingerprint could not be computed."""

    def __init__(self) -> None:
        self.reasons: list[str] = []

    def token(self, reason: str) -> str:
        self.reasons.append(reason)
        return "unknown:" + secrets.token_hex(8)


def digest(*parts: Any) -> str:
    """A digest of strings (and other digests), in order."""
    h = hashlib.sha256()
    for part in parts:
        data = part if isinstance(part, bytes) else str(part).encode("utf-8", "surrogatepass")
        h.update(len(data).to_bytes(8, "little"))
        h.update(data)
    return h.hexdigest()


def value_fingerprint(value: Any, unknown: Unknown | None = None) -> str:
    """A value's fingerprint: plain data by content, functions by their code, objects
    by their class's source and their attributes."""
    return _Walker(unknown or Unknown()).value(value)


def function_parts(f: Any, unknown: Unknown | None = None) -> dict[str, str]:
    """A Python operator's fingerprint by part: ``code`` (bytecode and constants),
    ``closure`` (closure cells and defaults), ``globals`` (the globals its code reads),
    or, for a callable object such as an ``Operator``, ``class`` and ``attributes``."""
    walker = _Walker(unknown or Unknown())
    if isinstance(f, (types.FunctionType, types.MethodType)):
        return walker.function_parts(f)
    if f is None:
        return {}
    return {"class": walker.klass(type(f)), "attributes": walker.attributes(f)}


class _Walker:
    def __init__(self, unknown: Unknown) -> None:
        self.unknown = unknown
        self._active: set[int] = set()  # recursion guard (self-referencing functions)

    def value(self, v: Any) -> str:
        if isinstance(v, _PLAIN):
            return digest(type(v).__name__, repr(v))
        if id(v) in self._active:
            return digest("cycle")
        self._active.add(id(v))
        try:
            return self._value(v)
        finally:
            self._active.discard(id(v))

    def _value(self, v: Any) -> str:
        if isinstance(v, (list, tuple)):
            return self.sequence(v)
        if isinstance(v, dict):
            return digest("dict", *sorted(self.value(k) + self.value(x) for k, x in v.items()))
        if isinstance(v, (set, frozenset)):
            return digest("set", *sorted(self.value(x) for x in v))
        if isinstance(v, (types.FunctionType, types.MethodType)):
            return digest("function", *sorted(self.function_parts(v).items()))
        if isinstance(v, types.BuiltinFunctionType):
            return digest("builtin", getattr(v, "__module__", ""), v.__qualname__)
        if isinstance(v, types.ModuleType):
            return digest("module", v.__name__)
        if isinstance(v, type):
            return self.klass(v)
        frame = _frame_digest(v)
        if frame is not None:
            return frame
        if hasattr(v, "__dict__") and not _is_spark_object(v):
            return digest("object", self.klass(type(v)), self.attributes(v))
        return self.pickled(v)

    def sequence(self, v: list | tuple) -> str:
        kind = type(v).__name__
        fields = getattr(v, "__fields__", None)  # pyspark Row
        head = [kind, repr(fields)] if fields else [kind]
        if len(v) > _BULK:
            bulk = _bulk(v)
            if bulk is not None:
                return digest(*head, "bulk", *bulk)
        return digest(*head, *(self.value(x) for x in v))

    def pickled(self, v: Any) -> str:
        try:
            return digest("pickle", type(v).__qualname__, pickle.dumps(v, protocol=5))
        except Exception as exc:  # noqa: BLE001 - any failure makes it unknown
            return self.unknown.token(f"{type(v).__name__} value cannot be fingerprinted "
                                      f"({type(exc).__name__})")

    def function_parts(self, f: Any) -> dict[str, str]:
        if isinstance(f, types.MethodType):
            parts = self.function_parts(f.__func__)
            parts["self"] = self.value(f.__self__)
            return parts
        code = f.__code__
        cells = []
        for name, cell in zip(code.co_freevars, f.__closure__ or ()):
            try:
                cells.append(digest(name, self.value(cell.cell_contents)))
            except ValueError:  # an empty cell
                cells.append(digest(name, "empty"))
        defaults = self.value((f.__defaults__, f.__kwdefaults__))
        return {"code": code_fingerprint(code), "closure": digest(*cells, defaults),
                "globals": self.globals_read(f, code)}

    def globals_read(self, f: Any, code: types.CodeType) -> str:
        """The globals the code reads; of a user's module (not installed, not the
        standard library), the attributes the code names too (``mylib.clean``)."""
        names = sorted(_names_read(code))
        scope = f.__globals__
        parts = []
        for name in names:
            if name not in scope:
                continue
            value = scope[name]
            parts.append(digest(name, self.value(value)))
            if isinstance(value, types.ModuleType) and _users_module(value):
                parts.extend(digest(name, n, self.value(getattr(value, n)))
                             for n in names if hasattr(value, n))
        return digest(*parts)

    def klass(self, cls: type) -> str:
        if cls.__module__ == "builtins" or _is_library(cls):
            return digest("class", cls.__module__, cls.__qualname__)
        try:
            source = inspect.getsource(cls)
        except (OSError, TypeError):  # defined where inspect cannot read: its methods' code
            source = "".join(code_fingerprint(m.__code__) for _, m in sorted(vars(cls).items())
                             if isinstance(m, types.FunctionType))
        bases = [self.klass(b) for b in cls.__bases__ if b is not object]
        helpers = [self.globals_read(m, m.__code__) for _, m in sorted(vars(cls).items())
                   if isinstance(m, types.FunctionType)]  # what its methods call
        return digest("class", cls.__qualname__, source, *bases, *helpers)

    def attributes(self, obj: Any) -> str:
        state = getattr(obj, "__dict__", None)
        if state is None:
            return self.pickled(obj)
        return self.value(dict(state))


def code_fingerprint(code: types.CodeType) -> str:
    """Bytecode, names and constants of a code object and the code objects inside it."""
    consts = [code_fingerprint(c) if isinstance(c, types.CodeType) else
              digest(type(c).__name__, repr(c)) for c in code.co_consts]
    return digest("code", code.co_code, ",".join(code.co_names), ",".join(code.co_varnames),
                  code.co_argcount, code.co_flags & 0xFF, *consts)


def _names_read(code: types.CodeType) -> set[str]:
    names = set(code.co_names)
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            names |= _names_read(const)
    return names


def _pickled(v: Any) -> bytes | None:
    try:
        return pickle.dumps(v, protocol=5)
    except Exception:  # noqa: BLE001 - None: the caller walks the elements
        return None


def _bulk(v: list | tuple) -> list[Any] | None:
    """A long sequence of plain rows as the bytes to hash: strings (the lines of a text,
    the usual parallelized list) by their lengths and their joined text, twice as fast
    as pickling them; other plain rows pickled; None if they are not plain."""
    if not _plain_rows(v):
        return None
    if type(v[0]) is str and set(map(type, v)) == {str}:
        return ["str", array("q", map(len, v)).tobytes(),
                "".join(v).encode("utf-8", "surrogatepass")]
    bulk = _pickled(v)
    return None if bulk is None else [bulk]


def _plain_rows(v: list | tuple) -> bool:
    first = v[0]
    return isinstance(first, _PLAIN) or (isinstance(first, tuple) and
                                         all(isinstance(x, _PLAIN) for x in first))


def _frame_digest(v: Any) -> str | None:
    """pandas frames and series, numpy arrays: by their content."""
    module = type(v).__module__
    if module.startswith("pandas"):
        import pandas as pd

        if isinstance(v, (pd.DataFrame, pd.Series)):
            hashed = pd.util.hash_pandas_object(v, index=True).to_numpy().tobytes()
            if isinstance(v, pd.DataFrame):
                names, types_ = repr(list(v.columns)), repr(list(map(str, v.dtypes)))
            else:
                names, types_ = repr(v.name), str(v.dtype)
            return digest("pandas", type(v).__name__, names, types_, hashed)
    if module == "numpy":
        import numpy as np

        if isinstance(v, np.ndarray) and v.dtype != object:
            return digest("ndarray", str(v.dtype), repr(v.shape), v.tobytes())
    return None


def _users_module(module: types.ModuleType) -> bool:
    """A module of the user's (a file outside the interpreter's installation)."""
    import sys
    import sysconfig

    path = getattr(module, "__file__", None)
    if not path:
        return False
    installed = {sys.prefix, sys.base_prefix, sysconfig.get_paths()["purelib"]}
    return not any(os.path.abspath(path).startswith(os.path.abspath(p)) for p in installed)


def _is_library(cls: type) -> bool:
    module = cls.__module__.split(".")[0]
    return module in ("pyspark", "pandas", "numpy", "pyarrow", "collections", "datetime",
                      "decimal", "functools", "operator", "icedtea_jupyter")


def _is_spark_object(v: Any) -> bool:
    return type(v).__module__.startswith("pyspark")


def files_fingerprint(paths: Iterable[str], unknown: Unknown) -> str:
    """The files a source reads, by path, size and modification time (a folder: every
    file under it). A path that is not local (or does not exist) is unknown."""
    parts = []
    for path in paths:
        local = path[len("file:"):] if path.startswith("file:") else path
        local = local[2:] if local.startswith("//") else local
        if "://" in local or not os.path.exists(local):
            parts.append(unknown.token(f"cannot see the files of {path!r}"))
            continue
        for name in _walk(local):
            stat = os.stat(name)
            parts.append(digest(os.path.abspath(name), stat.st_size, stat.st_mtime_ns))
    return digest("files", *parts)


def _walk(path: str) -> list[str]:
    if os.path.isfile(path):
        return [path]
    found: list[str] = []
    for folder, _, names in os.walk(path):
        found.extend(os.path.join(folder, n) for n in names)
    return sorted(found)
