"""Patches of the DataFrame API: pandas/Arrow maps, grouped maps and UDFs are hosted;
the other DataFrame transformations become opaque JVM nodes of the DAG."""
from __future__ import annotations

import functools
import inspect
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from pyspark.sql.classic.column import Column as ClassicColumn
from pyspark.sql.classic.dataframe import DataFrame
from pyspark.sql.column import Column
from pyspark.sql.dataframe import DataFrame as AnyDataFrame
from pyspark.sql.group import GroupedData
from pyspark.sql.pandas.group_ops import PandasCogroupedOps
from pyspark.sql.readwriter import DataFrameReader
from pyspark.sql.session import SparkSession
from pyspark.sql.udf import UserDefinedFunction
from pyspark.util import PythonEvalType

from ..executor import calls
from ..executor import wrappers as w
from ..replay.dataframe_inputs import (
    AGGREGATE_UDFS,
    ITERATOR_UDFS,
    REPLAYED_UDFS,
    CogroupedUpstream,
    DataFrameUpstream,
    GroupedUpstream,
    UdfUpstream,
)
from .frame_calls import FrameCall, column_text, remember
from .patching import active, node_of, own, register

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
_SESSION_SOURCES = ("createDataFrame", "range", "sql", "table")
_READER_SOURCES = ("load", "parquet", "csv", "json", "text", "orc", "table")


@dataclass(frozen=True)
class DataFrameApi:
    """One flavour of PySpark's DataFrame API (classic, or the Spark Connect client's):
    the classes wrapped, and the upstreams that regenerate θ's inputs with it."""

    dataframe: type
    grouped: type
    session: type
    reader: type
    udf: type
    upstream: type = DataFrameUpstream
    grouped_upstream: type = GroupedUpstream
    udf_upstream: type = UdfUpstream


def _udf_parents(recorder: Any, df: Any, values: tuple, api: DataFrameApi,
                 grouped: Any = None) -> list[int]:
    """UDF nodes used by the Column expressions among ``values``; ``df`` feeds them
    (``grouped``: the GroupedData whose ``agg`` they are in).

    Each call of a UDF is a node of its own (``_udf_call``): the same UDF used before θ
    and after it is two operators, one in G(θ). Columns are matched by the call's
    expression text (aliases and casts make new Column objects); a call not yet applied
    is attached to ``df``, once per occurrence of its text (the earliest call first).
    """
    if not recorder.udfs:
        return []
    texts = [str(column) for value in values
             for column in (value if isinstance(value, (list, tuple)) else [value])
             if isinstance(column, Column)]
    parents: list[int] = []
    for expression, node_ids in _calls_bycolumn_text(recorder).items():
        used = sum(len(re.findall(rf"(?<![\w.]){re.escape(expression)}", text))
                   for text in texts)
        fresh = [n for n in node_ids if not recorder.dag.node(n).parents]
        if used and df is not None and fresh:
            for node_id in fresh[:used]:
                recorder.attach(node_id, recorder.node_for(df))
                _keep_udf(recorder, node_id, df, api, grouped)
            parents.extend(fresh[:used])
        elif used:  # a Column object used again: its call is the node it already is
            parents.extend(node_ids)
            if df is not None:
                _warn_if_reused_after_theta(recorder, node_ids, recorder.node_for(df))
    return parents


def _warn_if_reused_after_theta(recorder: Any, node_ids: list[int], frame: int) -> None:
    """A UDF's Column made once, used before θ and again on a DataFrame of G(θ): one
    operator outside G(θ) (its function was pickled into the column), said in the run's
    warnings with what makes the use after θ an operator of G(θ)."""
    if not recorder.dag.node(frame).in_g:
        return
    for node_id in node_ids:
        node = recorder.dag.node(node_id)
        if not node.in_g:
            recorder.notes.append(
                f"the column of UDF {node.name!r} was made once and used both before θ "
                "and after it: PySpark pickled the function into that one column, so it "
                "is one operator, outside G(θ), and jumps do not replay its calls after θ. "
                "Make a new column for the use after θ (call the UDF again there: each "
                "call is an operator of its own, and one on θ's output is in G(θ))")


def _calls_bycolumn_text(recorder: Any) -> dict[str, list[int]]:
    """The UDF calls' nodes by their column's expression text, in creation order."""
    found: dict[str, list[int]] = {}
    for node_id, expression in recorder.udfs.items():
        found.setdefault(expression, []).append(node_id)
    return found


def _keep_udf(recorder: Any, node_id: int, df: Any, api: DataFrameApi,
              grouped: Any = None) -> None:
    """A UDF of a kind replay knows (row, scalar or iterator pandas and Arrow, a grouped
    aggregate in ``grouped.agg``), called on ``df``: kept with its arguments (and its
    grouping, or its window), to regenerate its calls. An aggregate UDF whose window was
    not seen (a ``.over`` outside the recording cell) is not kept."""
    recorder.udf_frames[node_id] = df  # replay/pushdown.py: filters run before it
    call = recorder.udf_calls.get(node_id)
    if call is None or call[0].evalType not in REPLAYED_UDFS:
        return
    aggregate = call[0].evalType in AGGREGATE_UDFS
    window = recorder.windows.get(recorder.udfs.get(node_id)) if aggregate else None
    if aggregate and grouped is None and window is None:  # its .over was not seen
        return
    udf, args = call
    spec = recorder.specs[node_id]
    kept = w.BatchFunction(spec, udf.func) if udf.evalType in ITERATOR_UDFS else \
        calls.UdfFunction(spec, udf.func)  # an iterator UDF replays as a mapInPandas
    recorder.keep_for_replay(node_id, kept, api.udf_upstream(
        df, udf.evalType, args, grouped if aggregate else None,
        window if grouped is None else None))


def remember_window(original: Callable) -> Callable:
    """``Column.over``: the window a UDF's column is computed over, by the UDF call's
    expression text (a window UDF after θ replays over the same window)."""
    @functools.wraps(original)
    def patched(self: Any, window: Any) -> Any:
        recorder = active()
        if recorder is not None:
            recorder.windows[column_text(self)] = window
        return original(self, window)
    return patched


def _structural(api: str, flavour: DataFrameApi) -> Callable:
    def make(original: Callable) -> Callable:
        @functools.wraps(original)
        def patched(self: Any, *args: Any, **kwargs: Any) -> Any:
            recorder = active()
            if recorder is None:
                return original(self, *args, **kwargs)
            with recorder.inside():
                result = original(self, *args, **kwargs)
            grouped_of = own(self, "_df")  # GroupedData keeps its DataFrame
            source = self if grouped_of is None else grouped_of
            values = (*args, *kwargs.values())
            inputs = [self] + [a for a in values if isinstance(a, AnyDataFrame)]
            udfs = _udf_parents(recorder, source, values, flavour,
                                None if grouped_of is None else self)
            parents = recorder.parents(*inputs) + udfs
            node = recorder.jvm(api, parents)
            recorder.details[node.id] = {"args": [_shown(a) for a in args],
                                         "kwargs": {k: _shown(v) for k, v in kwargs.items()}}
            remember(recorder, node.id, FrameCall(api, self, args, kwargs))
            return recorder.produced(result, node)
        return patched
    return make


def _shown(value: Any) -> Any:
    """An argument as the DAG's fingerprints see it: a Column by its expression, a
    DataFrame by its position among the node's inputs (versions/operators.py)."""
    if isinstance(value, (list, tuple)):
        return [_shown(v) for v in value]
    if isinstance(value, Column):
        return f"Column {value}"
    if isinstance(value, AnyDataFrame):
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
            if not any(_is_dataset(v) for v in values):  # made of sampled sources already
                result = recorder.sampled(result)
            return recorder.produced(result, node)
        return patched
    return make


def _is_dataset(value: Any) -> bool:
    from pyspark.core.rdd import RDD

    return isinstance(value, (RDD, AnyDataFrame))


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


def _hosting(api: str, input_of: Callable[[Any], Any], host: Callable) -> Callable:
    """The patch of a method whose first argument is a Python function: a hosted node.
    ``host(self, spec, func)`` gives what Spark runs, what replay keeps, and θ's upstream."""
    def make(original: Callable) -> Callable:
        @functools.wraps(original)
        def patched(self: Any, func: Callable, *args: Any, **kwargs: Any) -> Any:
            recorder = active()
            if recorder is None:
                return original(self, func, *args, **kwargs)
            inputs = input_of(self)  # a DataFrame, or a cogroup's two
            node, spec = recorder.python(api, func, recorder.parents(
                *(inputs if isinstance(inputs, tuple) else (inputs,))))
            shipped, kept, upstream = host(self, spec, func)
            recorder.keep_for_replay(node.id, kept, upstream)
            remember(recorder, node.id, FrameCall(api, self, args, kwargs, func))
            with recorder.inside():
                result = original(self, shipped, *args, **kwargs)
            recorder.check_interesting()  # the DataFrame's Python operators so far are known
            return recorder.produced(result, node)
        return patched
    return make


def _map_in(api: str, flavour: DataFrameApi) -> Callable:
    def host(df: Any, spec: Any, func: Callable) -> tuple:
        function = w.BatchFunction(spec, func)
        return function, function, flavour.upstream(df, api)
    return _hosting(api, lambda df: df, host)


def _apply_in_pandas(flavour: DataFrameApi) -> Callable:
    def host(grouped: Any, spec: Any, func: Callable) -> tuple:
        arity = len(inspect.signature(func).parameters)  # applyInPandas counts them
        return (calls.group_function(spec, func, arity), calls.GroupFunction(spec, func),
                flavour.grouped_upstream(grouped, arity))
    return _hosting("applyInPandas", lambda grouped: grouped._df, host)


def cogroup_apply_in_pandas(upstream: type = CogroupedUpstream) -> Callable:
    """The patch of ``cogroup().applyInPandas`` (``upstream``: classic's, or Connect's)."""
    def host(cogrouped: Any, spec: Any, func: Callable) -> tuple:
        arity = len(inspect.signature(func).parameters)  # (left, right) or (key, ...)
        return (calls.cogroup_function(spec, func, arity), calls.GroupFunction(spec, func),
                upstream(cogrouped, arity))
    return _hosting("applyInPandas", lambda cogrouped: (cogrouped._gd1._df,
                                                       cogrouped._gd2._df), host)


def _udf_call(original: Callable) -> Callable:
    @functools.wraps(original)
    def patched(self: Any, *args: Any, **kwargs: Any) -> Any:
        recorder = active(from_pyspark=True)  # the udf decorator's wrapper calls us
        mode = _UDF_MODES.get(self.evalType)
        if recorder is None or mode is None:
            return original(self, *args, **kwargs)
        node, spec = recorder.python("udf", self.func, [], name=self._name)
        function = (w.BatchFunction(spec, self.func) if mode == "iter"
                    else calls.CallFunction(spec, self.func, mode))
        functools.update_wrapper(function, self.func, updated=())
        wrapped = type(self)(function, self._returnType, self._name, self.evalType,
                             self.deterministic)  # classic or Spark Connect's
        recorder.udf_calls[node.id] = (self, args)
        with recorder.inside():
            column = original(wrapped, *args, **kwargs)
        recorder.udfs[node.id] = column_text(column)
        recorder.check_interesting()
        return recorder.produced(column, node.id)
    return patched


def register_api(api: DataFrameApi) -> None:
    """Wrap ``api``'s classes while a cell records: the same patches for every flavour."""
    for name in _STRUCTURAL:
        register(api.dataframe, name)(_structural(name, api))
    for name in _GROUPED:
        register(api.grouped, name)(_structural(name, api))
    for owner, names in ((api.session, _SESSION_SOURCES), (api.reader, _READER_SOURCES)):
        for name in names:
            register(owner, name)(_source(name))
    for name in ("mapInPandas", "mapInArrow"):
        register(api.dataframe, name)(_map_in(name, api))
    register(api.grouped, "applyInPandas")(_apply_in_pandas(api))
    register(api.udf, "__call__")(_udf_call)


register_api(DataFrameApi(DataFrame, GroupedData, SparkSession, DataFrameReader,
                          UserDefinedFunction))
register(PandasCogroupedOps, "applyInPandas")(cogroup_apply_in_pandas())
register(DataFrame, "rdd")(_rdd)
register(ClassicColumn, "over")(remember_window)  # Connect's: instrument/connect.py
for _api in ("format", "option", "options", "schema"):
    register(DataFrameReader, _api)(_reader_setting(_api))
