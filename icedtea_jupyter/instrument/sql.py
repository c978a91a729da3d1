"""Python functions registered for SQL (``spark.udf.register``) hosted when a recording
cell's ``spark.sql`` query calls them.

``%load_ext`` starts observing ``UDFRegistration.register``: each registration is
remembered by name (lower case, as SQL resolves it) and otherwise left as PySpark made
it, so functions registered in earlier cells are known. While a cell records, a query
that names a remembered function gets it re-registered, for this query, as the hosted
wrapper a ``@udf`` column gets (its node named by the registered name, under the query's
node in the DAG); the original registration is put back when the cell ends.
"""
from __future__ import annotations

import functools
import re
from collections.abc import Callable
from typing import Any

from pyspark.sql import SparkSession
from pyspark.sql.udf import UDFRegistration

from ..executor import calls
from ..executor import wrappers as w
from .dataframe import _UDF_MODES  # noqa: F401 - also: its patches first, so ours wraps them
from .patching import active, register

_REGISTERED: dict[str, Any] = {}  # name (lower case) -> the UserDefinedFunction registered
_observing: list[Callable] = []  # the original register, once observed


def observe_registrations() -> None:
    """Remember every ``spark.udf.register`` from now on (idempotent; call-through)."""
    if _observing:
        return
    original = UDFRegistration.register
    _observing.append(original)

    @functools.wraps(original)
    def observed(self: Any, name: str, f: Any, returnType: Any = None) -> Any:
        made = original(self, name, f, returnType)
        _REGISTERED[name.lower()] = getattr(made, "_unwrapped", made)
        return made

    UDFRegistration.register = observed  # type: ignore[method-assign]


def registered_in(query: str) -> list[tuple[str, Any]]:
    """The remembered functions a SQL text calls (``name(``), in order of registration."""
    return [(name, udf) for name, udf in _REGISTERED.items()
            if re.search(rf"(?<![\w.`]){re.escape(name)}\s*\(", query, re.IGNORECASE)]


@register(SparkSession, "sql")
def _sql(original: Callable) -> Callable:
    @functools.wraps(original)
    def patched(self: SparkSession, sqlQuery: str, *args: Any, **kwargs: Any) -> Any:
        recorder = active()
        if recorder is None or not isinstance(sqlQuery, str):
            return original(self, sqlQuery, *args, **kwargs)
        hosted = [_host(recorder, self, name, udf) for name, udf in registered_in(sqlQuery)]
        result = original(self, sqlQuery, *args, **kwargs)
        query = recorder.node_for(result)
        for node_id in (n for n in hosted if n is not None):
            recorder.attach(node_id, query)
            recorder.unreplayable.setdefault(
                node_id, "a function registered for SQL: its calls are not regenerated "
                         "for a jump yet (use it as a @udf column for time travel)")
        recorder.check_interesting()
        return result
    return patched


def _host(recorder: Any, spark: SparkSession, name: str, udf: Any) -> int | None:
    """Register ``udf`` hosted under ``name`` until the cell ends; its node."""
    mode = _UDF_MODES.get(udf.evalType)
    if mode is None:
        return None
    node, spec = recorder.python("udf", udf.func, [], name=name)
    function = (w.BatchFunction(spec, udf.func) if mode == "iter"
                else calls.CallFunction(spec, udf.func, mode))
    functools.update_wrapper(function, udf.func, updated=())
    hosted = type(udf)(function, udf.returnType, name, udf.evalType, udf.deterministic)
    registry = spark._jsparkSession.udf()
    with recorder.inside():
        registry.registerPython(name, hosted._judf)
    recorder.on_close.append(lambda: registry.registerPython(name, udf._judf))
    return node.id
