"""Patches of the DataFrame API: pandas/Arrow maps, grouped maps and UDFs are hosted;
the other DataFrame transformations become opaque JVM nodes of the DAG."""
from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from typing import Any

from pyspark.sql.classic.dataframe import DataFrame
from pyspark.sql.column import Column
from pyspark.sql.group import GroupedData
from pyspark.sql.readwriter import DataFrameReader
from pyspark.sql.session import SparkSession
from pyspark.sql.udf import UserDefinedFunction
from pyspark.util import PythonEvalType

from ..executor import wrappers as w
from ..replay.dataframe_inputs import (
    REPLAYED_UDFS,
    DataFrameUpstream,
    GroupedUpstream,
    UdfUpstream,
)
from .patching import active, node_of, register

_UDF_MODES = {
    PythonEvalType.SQL_BATCHED_UDF: "row",
    PythonEvalType.SQL_ARROW_BATCHED_UDF: "row",
    PythonEvalType.SQL_SCALAR_PANDAS_UDF: "batch",
    PythonEvalType.SQL_SCALAR_ARROW_UDF: "batch",
    PythonEvalType.SQL_GROUPED_AGG_PANDAS_UDF: "agg",
    PythonEvalType.SQL_WINDOW_AGG_PANDAS_UDF: "agg",
    PythonEvalType.SQL_GROUPED_AGG_ARROW_UDF: "agg",
    PythonEvalType.SQL_WINDOW_AGG_ARROW_UDF: "agg",
    PythonEvalType.SQL_SCALAR_PANDAS_ITER_UDF: "iter",
    PythonEvalType.SQL_SCALAR_ARROW_ITER_UDF: "iter",
}
_STRUCTURAL = ("select", "selectExpr", "filter", "where", "withColumn", "withColumns",
               "withColumnRenamed", "drop", "join", "crossJoin", "union", "unionByName",
               "distinct", "dropDuplicates", "orderBy", "sort", "limit", "repartition",
               "coalesce", "sample", "groupBy", "groupby")
_GROUPED = ("agg", "count", "sum", "avg", "mean", "max", "min")
_SOURCES = ((SparkSession, "createDataFrame"), (SparkSession, "range"), (SparkSession, "sql"),
            (SparkSession, "table"), (DataFrameReader, "load"), (DataFrameReader, "parquet"),
            (DataFrameReader, "csv"), (DataFrameReader, "json"), (DataFrameReader, "text"),
            (DataFrameReader, "orc"), (DataFrameReader, "table"))


def _udf_parents(recorder: Any, df: Any, values: tuple) -> list[int]:
    """UDF nodes used by the Column expressions among ``values``; ``df`` feeds them.

    Columns are matched by the UDF's call in their expression text (``plus_one(id) AS a``)
    because aliases and casts make new Column objects.
    """
    if not recorder.udfs:
        return []
    texts = []
    for value in values:
        for column in value if isinstance(value, (list, tuple)) else [value]:
            if isinstance(column, Column):
                texts.append(str(column))
    parents = []
    for _, node_id, udf_name in recorder.udfs.values():
        node = recorder.dag.node(node_id)
        if any(f"{udf_name}(" in text for text in texts):
            if df is not None and not node.parents:
                node.parents.append(recorder.node_for(df))
                _keep_udf(recorder, node_id, df)
            parents.append(node_id)
    return parents


def _keep_udf(recorder: Any, node_id: int, df: Any) -> None:
    """A UDF of a kind replay knows (row, scalar pandas), called on ``df``: kept with
    its arguments, to regenerate its calls."""
    call = recorder.udf_calls.get(node_id)
    if call is not None and call[0].evalType in REPLAYED_UDFS:
        udf, args = call
        recorder.keep_for_replay(node_id, w.UdfFunction(recorder.specs[node_id], udf.func),
                                 UdfUpstream(df, udf.evalType, args))


def _structural(api: str) -> Callable:
    def make(original: Callable) -> Callable:
        @functools.wraps(original)
        def patched(self: Any, *args: Any, **kwargs: Any) -> Any:
            recorder = active()
            if recorder is None:
                return original(self, *args, **kwargs)
            with recorder.inside():
                result = original(self, *args, **kwargs)
            source = getattr(self, "_df", self)  # GroupedData keeps its DataFrame
            inputs = [self] + [a for a in (*args, *kwargs.values()) if isinstance(a, DataFrame)]
            udfs = _udf_parents(recorder, source, (*args, *kwargs.values()))
            parents = recorder.parents(*inputs) + udfs
            node = recorder.jvm(api, parents)
            recorder.details[node.id] = {"args": [_shown(a) for a in args],
                                         "kwargs": {k: _shown(v) for k, v in kwargs.items()}}
            return recorder.produced(result, node)
        return patched
    return make


for _api in _STRUCTURAL:
    register(DataFrame, _api)(_structural(_api))
for _api in _GROUPED:
    register(GroupedData, _api)(_structural(_api))


def _shown(value: Any) -> Any:
    """An argument as the DAG's fingerprints see it: a Column by its expression, a
    DataFrame by its position among the node's inputs (versions/operators.py)."""
    if isinstance(value, (list, tuple)):
        return [_shown(v) for v in value]
    if isinstance(value, Column):
        return f"Column {value}"
    if isinstance(value, DataFrame):
        return "DataFrame"
    return value


def _source(api: str) -> Callable:
    def make(original: Callable) -> Callable:
        @functools.wraps(original)
        def patched(self: Any, *args: Any, **kwargs: Any) -> Any:
            recorder = active()
            if recorder is None:
                return original(self, *args, **kwargs)
            with recorder.inside():
                result = original(self, *args, **kwargs)
            node = recorder.jvm(api, [])
            values = (*args, *kwargs.values())
            recorder.details[node.id] = {
                "source": api, "args": [a for a in args if not _is_dataset(a)],
                "kwargs": {k: v for k, v in kwargs.items() if not _is_dataset(v)},
                "options": dict(getattr(self, "_icedtea_options", {})),
                "datasets": [v for v in values if _is_dataset(v)]}
            return recorder.produced(result, node)
        return patched
    return make


def _is_dataset(value: Any) -> bool:
    from pyspark.core.rdd import RDD

    return isinstance(value, (RDD, DataFrame))


for _owner, _api in _SOURCES:
    register(_owner, _api)(_source(_api))


def _reader_setting(api: str) -> Callable:
    """``format``, ``option``, ``options`` and ``schema`` of a reader: kept on it, for
    the fingerprint of the source it reads (versions)."""
    def make(original: Callable) -> Callable:
        @functools.wraps(original)
        def patched(self: DataFrameReader, *args: Any, **kwargs: Any) -> Any:
            if active(from_pyspark=True) is not None:
                settings = dict(getattr(self, "_icedtea_options", {}))
                settings[f"{api}{len(settings)}"] = repr((args, sorted(kwargs.items())))
                self._icedtea_options = settings  # type: ignore[attr-defined]
            return original(self, *args, **kwargs)
        return patched
    return make


for _api in ("format", "option", "options", "schema"):
    register(DataFrameReader, _api)(_reader_setting(_api))


@register(DataFrame, "rdd")
def _rdd(original: Any) -> property:
    """``DataFrame.rdd`` (a cached property in PySpark 4): the RDD is a node once."""
    def get(self: DataFrame) -> Any:
        recorder = active()
        if recorder is None:
            return original.__get__(self, type(self))
        with recorder.inside():
            result = original.__get__(self, type(self))
        if node_of(result, recorder.run.run_id) is not None:
            return result
        return recorder.produced(result, recorder.jvm("rdd", recorder.parents(self)))
    return property(get, doc=original.__doc__)


def _map_in(api: str) -> Callable:
    def make(original: Callable) -> Callable:
        @functools.wraps(original)
        def patched(self: DataFrame, func: Callable, *args: Any, **kwargs: Any) -> Any:
            recorder = active()
            if recorder is None:
                return original(self, func, *args, **kwargs)
            node, spec = recorder.python(api, func, recorder.parents(self))
            function = w.BatchFunction(spec, func)
            recorder.keep_for_replay(node.id, function, DataFrameUpstream(self, api))
            with recorder.inside():
                result = original(self, function, *args, **kwargs)
            recorder.check_interesting()  # the DataFrame's Python operators so far are known
            return recorder.produced(result, node)
        return patched
    return make


register(DataFrame, "mapInPandas")(_map_in("mapInPandas"))
register(DataFrame, "mapInArrow")(_map_in("mapInArrow"))


@register(GroupedData, "applyInPandas")
def _apply_in_pandas(original: Callable) -> Callable:
    @functools.wraps(original)
    def patched(self: GroupedData, func: Callable, *args: Any, **kwargs: Any) -> Any:
        recorder = active()
        if recorder is None:
            return original(self, func, *args, **kwargs)
        node, spec = recorder.python("applyInPandas", func, recorder.parents(self._df))
        arity = len(inspect.signature(func).parameters)
        recorder.keep_for_replay(node.id, w.GroupFunction(spec, func),
                                 GroupedUpstream(self, arity))
        with recorder.inside():
            result = original(self, w.group_function(spec, func, arity), *args, **kwargs)
        recorder.check_interesting()
        return recorder.produced(result, node)
    return patched


@register(UserDefinedFunction, "__call__")
def _udf_call(original: Callable) -> Callable:
    @functools.wraps(original)
    def patched(self: UserDefinedFunction, *args: Any, **kwargs: Any) -> Any:
        recorder = active(from_pyspark=True)  # the udf decorator's wrapper calls us
        mode = _UDF_MODES.get(self.evalType)
        if recorder is None or mode is None:
            return original(self, *args, **kwargs)
        wrapped, node_id, _ = recorder.udfs.get(id(self), (None, None, None))
        if wrapped is None:
            node, spec = recorder.python("udf", self.func, [], name=self._name)
            function = (w.BatchFunction(spec, self.func) if mode == "iter"
                        else w.CallFunction(spec, self.func, mode))
            functools.update_wrapper(function, self.func, updated=())
            wrapped = UserDefinedFunction(function, self._returnType, self._name,
                                          self.evalType, self.deterministic)
            node_id = node.id
            recorder.udfs[id(self)] = (wrapped, node_id, self._name)
            recorder.udf_calls[node_id] = (self, args)
        with recorder.inside():
            column = original(wrapped, *args, **kwargs)
        recorder.check_interesting()
        return recorder.produced(column, node_id)
    return patched
