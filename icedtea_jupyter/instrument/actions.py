"""Patches of the cell's actions (collect, count, take, toPandas, and writes): the
recorder's ``on_action`` (versions: results stored once, answered from an equivalent
earlier run; a write noted by its path) runs each one; without it, or outside a cell,
they run as PySpark's own."""
from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from pyspark.core.rdd import RDD
from pyspark.sql.classic.dataframe import DataFrame
from pyspark.sql.readwriter import DataFrameWriter

from .patching import active, register


@dataclass
class ActionCall:
    """One action of the cell: on ``target`` (an RDD or DataFrame), ``name``'s
    ``args``; ``run()`` computes it with Spark; ``kind`` is how its result is stored."""

    name: str
    target: Any
    kind: str
    run: Callable[[], Any]
    args: list = field(default_factory=list)
    path: str | None = None  # a write: where it wrote


# api -> how the result is stored (versions/results.py)
_RDD_ACTIONS = {"collect": "values", "count": "count", "take": "values"}
_DATAFRAME_ACTIONS = {"collect": "rows", "count": "count", "take": "rows", "toPandas": "pandas"}


def _action(name: str, kind: str) -> Callable:
    def make(original: Callable) -> Callable:
        @functools.wraps(original)
        def patched(self: Any, *args: Any, **kwargs: Any) -> Any:
            recorder = active()
            hook = getattr(recorder, "on_action", None)
            if recorder is not None:  # its RDD's command may be built already (setName)
                recorder.check_interesting()
            if hook is None or kwargs:
                return original(self, *args, **kwargs)
            if isinstance(self, DataFrame):  # its plan tells what Spark ran (replay)
                recorder.action_frames.append(self)
            with recorder.inside():
                return hook(ActionCall(name, self, kind, lambda: original(self, *args),
                                       list(args)))
        return patched
    return make


for _api, _kind in _RDD_ACTIONS.items():
    register(RDD, _api)(_action(_api, _kind))
for _api, _kind in _DATAFRAME_ACTIONS.items():
    register(DataFrame, _api)(_action(_api, _kind))


def _write(name: str) -> Callable:
    """A write runs as always; its path is noted (``kind`` "write": never reused)."""
    def make(original: Callable) -> Callable:
        @functools.wraps(original)
        def patched(self: Any, *args: Any, **kwargs: Any) -> Any:
            recorder = active()
            hook = getattr(recorder, "on_action", None)
            if hook is None:
                return original(self, *args, **kwargs)
            path = kwargs.get("path", args[0] if args else None)
            with recorder.inside():
                return hook(ActionCall(name, self, "write",
                                       lambda: original(self, *args, **kwargs),
                                       [path] if path is not None else [],
                                       None if path is None else str(path)))
        return patched
    return make


for _api in ("save", "parquet", "csv", "json", "orc", "text", "saveAsTable", "insertInto"):
    register(DataFrameWriter, _api)(_write(_api))
register(RDD, "saveAsTextFile")(_write("saveAsTextFile"))
