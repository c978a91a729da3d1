"""Fingerprints of what a pipeline is made of: values, functions, operators, sources.

A fingerprint is a hex digest. Equal fingerprints mean equal behaviour as far as this
module can see: a function's bytecode, constants, argument names, closure values,
defaults and the globals it reads (a module by its name and version); a class by every
member of its namespace (methods by their code, class attributes by their values) and
its user-defined bases, so ``Gap.GAP = 3`` changes it; an object by its class and its
instance attributes (``__dict__`` and ``__slots__``); a source's content (a
parallelized collection) or its files' paths, sizes and modification times. Comments
and the names of local variables are not part of it. What cannot be fingerprinted gets
a fresh random digest (never equal to another), with the reason in
``Unknown.reasons``, so nothing built on it is ever reused.
"""
from __future__ import annotations

import builtins
import functools
import hashlib
import inspect
import os
import pickle
import secrets
import sys
import types
from array import array
from collections.abc import Iterable
from typing import Any

_PLAIN = (type(None), bool, int, float, complex, str, bytes)
_BULK = 256  # a longer list or tuple of plain rows is hashed as one pickle
# entries of a class's namespace that are not behaviour (its name and module are named)
CLASS_NOISE = frozenset({"__module__", "__qualname__", "__dict__", "__weakref__", "__doc__",
                          "__firstlineno__", "__static_attributes__"})


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
        self._classes: dict[type, str] = {}  # each class walked once

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
            module = getattr(v, "__module__", None) or ""
            return digest("builtin", module, v.__qualname__, module_version(module))
        if isinstance(v, types.ModuleType):
            return digest("module", v.__name__, module_version(v.__name__))
        if isinstance(v, type):
            return self.klass(v)
        frame = _frame_digest(v)
        if frame is not None:
            return frame
        if _is_spark_object(v):
            return _spark_digest(v) or self.pickled(v)
        if hasattr(v, "__dict__") or (hasattr(type(v), "__slots__") and
                                      not is_library(type(v))):
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
            return digest("pickle", type(v).__module__, type(v).__qualname__,
                          module_version(type(v).__module__), pickle.dumps(v, protocol=5))
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
        names = sorted(names_read(code))
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
        """A class by its namespace: every method by its code (and what it reads),
        every class attribute by its value, its user-defined bases the same way; a
        library's class by its name and its package's version."""
        if getattr(builtins, cls.__qualname__, None) is cls or is_library(cls):
            return digest("class", cls.__module__, cls.__qualname__,
                          module_version(cls.__module__))
        known = self._classes.get(cls)
        if known is not None:
            return known
        if id(cls) in self._active:
            return digest("cycle", cls.__qualname__)
        self._active.add(id(cls))
        try:
            members = [digest(name, self.member(member))
                       for name, member in sorted(vars(cls).items(), key=lambda kv: kv[0])
                       if name not in CLASS_NOISE]
            bases = [self.klass(b) for b in cls.__bases__ if b is not object]
            meta = [] if type(cls) is type else [self.klass(type(cls))]
        finally:
            self._active.discard(id(cls))
        self._classes[cls] = found = digest("class", cls.__qualname__, *bases, *meta, *members)
        return found

    def member(self, member: Any) -> str:
        """One entry of a class's namespace."""
        if isinstance(member, (staticmethod, classmethod)):
            return digest(type(member).__name__, self.member(member.__func__))
        if isinstance(member, property):
            return digest("property", *(self.member(f) for f in
                                        (member.fget, member.fset, member.fdel)))
        if isinstance(member, types.FunctionType):
            return digest("function", *sorted(self.function_parts(member).items()))
        return self.value(member)

    def attributes(self, obj: Any) -> str:
        state = instance_attributes(obj)
        if state is None:
            return self.pickled(obj)
        return self.value(state)


def instance_attributes(obj: Any) -> dict[str, Any] | None:
    """An object's own attributes: its ``__dict__`` and the ``__slots__`` of its classes
    that are set (None: it has neither)."""
    state = getattr(obj, "__dict__", None)
    slots = {}
    for cls in type(obj).__mro__:
        names = getattr(cls, "__slots__", ())
        for name in (names,) if isinstance(names, str) else names:
            if name not in ("__dict__", "__weakref__") and hasattr(obj, name):
                slots[name] = getattr(obj, name)
    if state is None and not slots:
        return None
    return {**slots, **(state or {})}


@functools.cache
def module_version(module: str) -> str:
    """The version of the package a module belongs to: its ``__version__`` or, without
    one, its file's size and modification time (an upgrade changes either); the
    standard library's: Python's; empty for a module that is not loaded or has no file
    (the user's own code is fingerprinted by its code)."""
    top = module.split(".")[0]
    if top in sys.stdlib_module_names or top == "builtins":
        return "python " + sys.version.split()[0]
    loaded = sys.modules.get(top)
    version = getattr(loaded, "__version__", None)
    if isinstance(version, str):
        return f"{top} {version}"
    path = getattr(loaded, "__file__", None)
    if not path:
        return ""
    try:
        stat = os.stat(path)
    except OSError:
        return ""
    return f"{top} file {stat.st_size} {stat.st_mtime_ns}"


def code_fingerprint(code: types.CodeType) -> str:
    """Bytecode, names and constants of a code object and the code objects inside it."""
    consts = [code_fingerprint(c) if isinstance(c, types.CodeType) else
              digest(type(c).__name__, repr(c)) for c in code.co_consts]
    arguments = code.co_argcount + code.co_kwonlyargcount + \
        bool(code.co_flags & inspect.CO_VARARGS) + bool(code.co_flags & inspect.CO_VARKEYWORDS)
    return digest("code", code.co_code, ",".join(code.co_names),
                  ",".join(code.co_varnames[:arguments]),  # a local's name is not behaviour
                  code.co_argcount, code.co_flags & 0xFF, *consts)


def names_read(code: types.CodeType) -> set[str]:
    names = set(code.co_names)
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            names |= names_read(const)
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
    import sysconfig

    path = getattr(module, "__file__", None)
    if not path:
        return False
    installed = {sys.prefix, sys.base_prefix, sysconfig.get_paths()["purelib"]}
    return not any(os.path.abspath(path).startswith(os.path.abspath(p)) for p in installed)


def is_library(cls: type) -> bool:
    module = cls.__module__.split(".")[0]
    return module in ("pyspark", "pandas", "numpy", "pyarrow", "collections", "datetime",
                      "decimal", "functools", "operator", "icedtea_jupyter")


def _is_spark_object(v: Any) -> bool:
    return type(v).__module__.startswith("pyspark")


def _spark_digest(v: Any) -> str | None:
    """A PySpark Column by its expression's text; a DataFrame by its analyzed plan's
    tree, expression ids renumbered (the same in every session); None: pickle it."""
    kind = type(v).__name__
    if kind == "Column":
        return digest("column", str(v))
    if kind == "DataFrame" and hasattr(v, "_jdf"):
        from .quick import renumbered

        return digest("dataframe", renumbered(v._jdf.queryExecution().analyzed().treeString()))
    return None


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
