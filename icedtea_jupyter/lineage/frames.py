"""A DataFrame cell's operators made again with hidden id columns, each one's output
written once as a Parquet file of the run store (``lineage/frames/<node>/``).

Each source gets ``_it_s<node>``, its rows' ids (``monotonically_increasing_id``: the
partition in the high bits, the position in the low 33). Row-by-row operators
(``select``, ``filter``, ``withColumn``... and the ``@udf``/``@pandas_udf`` columns they
compute) carry their input's hidden columns; a ``join`` both sides'; ``mapInPandas``
carries them by its output's pandas index (see ``_traced_map``). An aggregation
(``groupBy(...).agg``/``count``/``sum``...) links by key (Titian): its output keeps a copy
of its keys (``_it_k<node>_<i>``), its input the same keys computed on each row
(``_it_g<node>_<i>``). Every file also has ``_it_part`` and ``_it_pos``: the row's id
at that operator. What cannot be made again is ``Untraced``, with the reason.
"""
from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from ..dag import Dag
from ..instrument.frame_calls import FrameCall
from ..store import layout

ROW_APIS = frozenset({"select", "selectExpr", "filter", "where", "withColumn", "withColumns",
                      "withColumnRenamed", "drop"})
AGGREGATES = frozenset({"agg", "count", "sum", "avg", "mean", "max", "min"})
SOURCES = frozenset({"createDataFrame", "range", "sql", "table", "load", "parquet", "csv",
                     "json", "text", "orc", "source"})
PART, POS = "_it_part", "_it_pos"
POSITION_BITS = (1 << 33) - 1  # monotonically_increasing_id's position within a partition
CACHED_PARTITIONING = "spark.sql.optimizer.canChangeCachedPlanOutputPartitioning"


class Untraced(LookupError):
    """An operator DataFrame lineage does not make again (the reason is the message)."""


def source_column(node: int) -> str:
    return f"_it_s{node}"


def key_column(node: int, index: int) -> str:
    return f"_it_k{node}_{index}"


def group_column(node: int, index: int) -> str:
    return f"_it_g{node}_{index}"


class FrameGraph:
    """The cell's DataFrame operators: each one's inputs (``parents``), how it links to
    them (``how``: source, rows, key) and its frame with hidden columns (``frame``)."""

    def __init__(self, dag: Dag, calls: dict[int, FrameCall], outputs: dict[int, Any],
                 run_id: str) -> None:
        self.dag, self.calls, self.outputs, self.run_id = dag, calls, outputs, run_id
        self.parents: dict[int, list[int]] = {}
        self.how: dict[int, str] = {}
        self.groups: dict[int, tuple[int, list[Any]]] = {}  # aggregation -> (input, keys)
        for node in dag.operators:
            self._add(node.id)
        self._frames: dict[int, tuple[Any, list[str]]] = {}
        self._hidden: dict[int, list[str]] = {}  # kept after ``release``

    def _add(self, node: int) -> None:
        op, call = self.dag.node(node), self.calls.get(node)
        if call is None:
            if op.kind == "jvm" and not op.parents and op.api in SOURCES:
                self.parents[node], self.how[node] = [], "source"
            return
        if call.api in ROW_APIS or call.api == "mapInPandas":
            self.parents[node], self.how[node] = [self._node_of(call.receiver)], "rows"
        elif call.api == "join":
            self.parents[node] = [self._node_of(call.receiver), self._node_of(call.args[0])]
            self.how[node] = "rows"
        elif (call.api in AGGREGATES or call.api == "applyInPandas") and \
                call.receiver.__class__.__name__ == "GroupedData":
            grouped = self.calls.get(self._node_of(call.receiver))
            if grouped is None or grouped.api not in ("groupBy", "groupby"):
                return
            keys = [k for arg in grouped.args for k in (arg if isinstance(arg, (list, tuple))
                                                        else [arg])]
            source = self._node_of(grouped.receiver)
            self.parents[node], self.how[node] = [source], "key"
            self.groups[node] = (source, keys)

    def _node_of(self, obj: Any) -> int:
        from ..instrument.patching import node_of

        node = node_of(obj, self.run_id)
        if node is None:
            raise Untraced(f"a DataFrame of the cell came from outside it: {type(obj).__name__}")
        return node

    def traced(self, node: int) -> bool:
        return node in self.how

    def hidden(self, node: int) -> list[str]:
        """The hidden id columns ``node``'s frame carries (its sources', its aggregations' keys)."""
        if node not in self._hidden:
            self._hidden[node] = self.frame(node)[1]
        return self._hidden[node]

    def frame(self, node: int) -> tuple[Any, list[str]]:
        """``node``'s output with its hidden columns, and their names (kept by Spark
        until ``release``: the frames after it are made from it)."""
        if node not in self._frames:
            from pyspark import StorageLevel

            df, hidden = self._made(node)
            self._frames[node] = (df.persist(StorageLevel.MEMORY_AND_DISK), hidden)
        return self._frames[node]

    def release(self) -> None:
        """Spark no longer keeps the frames (once written, or their writing stopped: a
        frame asked for again is made and kept again)."""
        for node, (df, hidden) in self._frames.items():
            df.unpersist()
            self._hidden.setdefault(node, hidden)
        self._frames.clear()

    def _made(self, node: int) -> tuple[Any, list[str]]:
        from pyspark.sql import functions as F

        how = self.how.get(node)
        if how is None:
            op = self.dag.node(node)
            raise Untraced(f"{op.name!r} (a {op.kind} {op.api}) is not traced in DataFrame "
                           "lineage yet")
        if how == "source":
            column = source_column(node)
            return self.outputs[node].withColumn(column, F.monotonically_increasing_id()), [column]
        call = self.calls[node]
        if how == "key":
            source, keys = self.groups[node]
            n_keys = len(keys)
            hidden = [key_column(node, i) for i in range(n_keys)]
            if call.api == "applyInPandas":
                return self._grouped_apply(node, call, hidden), hidden
            # grouped from its input's kept frame: not the cell's pipeline computed again
            grouped = self.frame(source)[0].groupBy(*keys)
            out = getattr(grouped, call.api)(*call.args, **call.kwargs)
            return out.select("*", *[F.col(f"`{c}`").alias(h)
                                     for c, h in zip(out.columns[:n_keys], hidden)]), hidden
        parent, hidden = self.frame(self.parents[node][0])
        if call.api == "join":
            other, other_hidden = self.frame(self.parents[node][1])
            return parent.join(other, *call.args[1:], **call.kwargs), hidden + other_hidden
        if call.api == "mapInPandas":
            return _traced_map(parent, hidden, call, self.outputs[node].schema), hidden
        if call.api == "select":
            return parent.select(*call.args, *hidden), hidden
        if call.api == "selectExpr":
            return parent.selectExpr(*call.args, *hidden), hidden
        return getattr(parent, call.api)(*call.args, **call.kwargs), hidden

    def _grouped_apply(self, node: int, call: FrameCall, hidden: list[str]) -> Any:
        """An ``applyInPandas`` made again over its input's groups (by the key columns
        ``with_groups`` computes): each output row carries its group's keys."""
        source = self.groups[node][0]
        grouped = self.with_groups(source)
        keys = [group_column(node, i) for i in range(len(hidden))]
        return grouped.groupBy(*keys).applyInPandas(
            _keyed(call.function, list(self.outputs[source].columns), keys, hidden),
            _with_fields(self.outputs[node].schema, grouped.schema, dict(zip(keys, hidden))))

    def with_groups(self, node: int) -> Any:
        """``node``'s frame with the keys of each aggregation reading it, row by row."""
        df, _ = self.frame(node)
        extra = [(agg, keys) for agg, (source, keys) in self.groups.items() if source == node]
        columns = [_column(key).alias(group_column(agg, i))
                   for agg, keys in extra for i, key in enumerate(keys)]
        return df.select("*", *columns) if columns else df

    def write(self, node: int, store_path: str) -> str:
        """``node``'s frame with its ids, written once: the folder of its Parquet files."""
        from pyspark.sql import functions as F

        path = frames_path(store_path, node)
        if os.path.exists(os.path.join(path, "_SUCCESS")):
            return path
        shutil.rmtree(path, ignore_errors=True)
        df = self.with_groups(node).select(
            "*", F.spark_partition_id().alias(PART),
            F.monotonically_increasing_id().bitwiseAND(POSITION_BITS).alias(POS))
        df.write.parquet(path)
        return path


@contextmanager
def coalesced_like_the_run(spark: Any) -> Iterator[None]:
    """While frames are kept and written, AQE may coalesce their shuffles' partitions as
    it did the run's: Spark otherwise keeps a cached plan's ``shuffle.partitions`` (200
    tasks a frame after an aggregation, most of a first trace's time)."""
    before = spark.conf.get(CACHED_PARTITIONING, None)
    spark.conf.set(CACHED_PARTITIONING, "true")
    try:
        yield
    finally:
        if spark.conf.get(CACHED_PARTITIONING, None) != "true":
            pass  # set meanwhile by the user's next cell: theirs stays
        elif before is None:
            spark.conf.unset(CACHED_PARTITIONING)
        else:
            spark.conf.set(CACHED_PARTITIONING, before)


def frames_path(store_path: str, node: int) -> str:
    return os.path.join(store_path, layout.LINEAGE, "frames", str(node))


def _column(key: Any) -> Any:
    from pyspark.sql import functions as F

    return F.col(key) if isinstance(key, str) else key


def _traced_map(parent: Any, hidden: list[str], call: FrameCall, schema: Any) -> Any:
    """A ``mapInPandas`` made again on ``parent`` with its hidden columns: the user's
    function sees its columns only, one batch at a time; an output row carries the
    hidden ids of the input row its pandas index names (rows it kept or changed), or
    of the same position (as many outputs as inputs, a fresh index); other rows (a new
    index of another length) carry none (nulls)."""
    from pyspark.sql.types import StructType

    function, user = call.function, [c for c in parent.columns if c not in hidden]
    fields = StructType(list(schema.fields) + [f for f in parent.schema.fields
                                               if f.name in hidden])

    def traced(batches: Any) -> Any:
        import pandas as pd

        for batch in batches:
            ids = batch[hidden]
            for out in function(iter([batch[user]])):
                fresh = isinstance(out.index, pd.RangeIndex)
                if fresh and len(out) == len(batch):
                    linked = ids.reset_index(drop=True)
                elif not fresh and out.index.isin(ids.index).all():
                    linked = ids.loc[out.index].reset_index(drop=True)
                else:
                    linked = pd.DataFrame({h: pd.Series([None] * len(out), dtype=object)
                                           for h in hidden})
                yield pd.concat([out.reset_index(drop=True), linked], axis=1)
    return parent.mapInPandas(traced, fields, *call.args[1:], **call.kwargs)


def _with_fields(schema: Any, source: Any, renamed: dict[str, str]) -> Any:
    """``schema`` and the fields of ``source`` named in ``renamed``, under their new names."""
    from pyspark.sql.types import StructField, StructType

    extra = [StructField(renamed[f.name], f.dataType, True) for f in source.fields
             if f.name in renamed]
    return StructType(list(schema.fields) + extra)


def _keyed(function: Any, user: list[str], keys: list[str], hidden: list[str]) -> Any:
    """A grouped map's function on the user's columns of a group, its outputs with the
    group's keys (``keys`` of the group, as ``hidden``)."""
    import inspect

    with_key = len(inspect.signature(function).parameters) == 2

    def keyed(group: Any) -> Any:
        values = tuple(group[k].iloc[0] for k in keys) if len(group) else ()
        own = group[user]
        out = function(values, own) if with_key else function(own)
        out = out.reset_index(drop=True)
        for value, name in zip(values, hidden):
            out[name] = value
        return out
    return keyed
