"""Spark Connect sessions: the Connect client's DataFrame API is wrapped like the classic
one (the same patches, ``dataframe.register_api``), and what needs a classic session
says so while a cell records.

The Connect client pickles a Python operator into the plan it sends to the server, so
the wrapper and its run spec reach the server's Python workers as they reach a classic
session's; the workers connect back to the coordinator the same way. The kernel has no
SparkContext: no RDDs, no ``runJob``. θ's inputs are regenerated with one query over
Connect that keeps each input batch's partition (``spark_partition_id``).
"""
from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any

from ..replay.dataframe_inputs import (
    CogroupedUpstream,
    DataFrameUpstream,
    GroupedUpstream,
    UdfUpstream,
    pin,
    restore,
)
from .patching import active, register

CONNECT_HOSTS = ("mapInPandas, mapInArrow, applyInPandas (grouped and cogrouped), and "
                 "@udf, @pandas_udf and @arrow_udf columns")
_REGISTERED: list[bool] = []


class NeedsClassicSession(NotImplementedError):
    """The cell, on a Spark Connect session, used what only a classic session has."""


def needs_classic(feature: str) -> str:
    """The message for ``feature`` used in a cell that runs on Spark Connect."""
    return (f"{feature} needs a classic SparkSession: this cell runs on Spark Connect, "
            f"where the kernel has no SparkContext and no RDD API. On Spark Connect, "
            f"%%icedtea hosts {CONNECT_HOSTS} (progress, interactions, snapshots and time "
            f"travel); for RDD operators, Operator subclasses and lineage, use a classic "
            f"session (SparkSession.builder.master(...).getOrCreate())")


def register_connect() -> None:
    """Register the patches of the Connect client's classes, once, when this kernel has
    imported them (a Spark Connect session exists only then)."""
    if _REGISTERED or "pyspark.sql.connect.session" not in sys.modules:
        return
    try:
        from pyspark.sql.connect.dataframe import DataFrame
        from pyspark.sql.connect.group import GroupedData, PandasCogroupedOps
        from pyspark.sql.connect.readwriter import DataFrameReader
        from pyspark.sql.connect.session import SparkSession
        from pyspark.sql.connect.udf import UserDefinedFunction
    except ImportError:  # the client's dependencies are missing: no Connect session either
        return
    from .dataframe import DataFrameApi, cogroup_apply_in_pandas, register_api

    register_api(DataFrameApi(DataFrame, GroupedData, SparkSession, DataFrameReader,
                              UserDefinedFunction, ConnectUpstream, ConnectGroupedUpstream,
                              ConnectUdfUpstream))
    register(PandasCogroupedOps, "applyInPandas")(
        cogroup_apply_in_pandas(ConnectCogroupedUpstream))
    from pyspark.sql.connect.column import Column

    from .dataframe import remember_window

    register(Column, "over")(remember_window)  # a window UDF replays over its window
    register(DataFrame, "rdd")(_refused("rdd", "DataFrame.rdd"))
    register(SparkSession, "sparkContext")(_refused("sparkContext", "spark.sparkContext"))
    _REGISTERED.append(True)


def _refused(name: str, feature: str) -> Callable[[Any], property]:
    """A property that, in a recording cell, raises ``NeedsClassicSession``; elsewhere
    it is PySpark's (an attribute the class serves from ``__getattr__`` stays so)."""
    def make(original: Any) -> property:
        def get(self: Any) -> Any:
            if active() is not None:
                raise NeedsClassicSession(needs_classic(feature))
            if original is None:
                return type(self).__getattr__(self, name)
            return original.__get__(self, type(self))
        return property(get, doc=getattr(original, "__doc__", None))
    return make


class _OverConnect:
    """Regeneration of θ's inputs over Spark Connect: the capture function runs on every
    partition in one query, and each partition's captured batches come back in order,
    tagged with the partition they were taken on. Kept for all partitions at once."""

    frame: Any
    conf: dict[str, str]
    capture: Callable[[], Any]
    records: Callable[[list], list]  # the records a partition's captured rows hold

    def batches(self, partition: int) -> tuple[list, Any, dict[str, tuple]]:
        """As ``DataFrameUpstream.batches``; the number of partitions Spark plans is not
        known without an RDD: ``None``."""
        by_partition, pinned = self._captured()
        return by_partition.get(partition, []), None, pinned

    def _captured(self) -> tuple[dict[int, list], dict[str, tuple]]:
        cached = getattr(self, "_by_partition", None)
        if cached is not None:
            return cached
        from pyspark.sql.connect import functions

        session = self.frame.sparkSession
        pinned = pin(session, self.conf)
        try:
            rows = (self.capture().toDF("b")
                    .select(functions.spark_partition_id().alias("p"), "b").collect())
        finally:
            restore(session, pinned)
        payloads: dict[int, list] = {}
        for row in rows:
            payloads.setdefault(row.p, []).append(row.b)
        by_partition = {p: self.records(data) for p, data in payloads.items()}
        self._by_partition = (by_partition, pinned)
        return self._by_partition


class ConnectUpstream(_OverConnect, DataFrameUpstream):
    """A ``mapInPandas``/``mapInArrow`` θ's input DataFrame on Spark Connect."""


class ConnectGroupedUpstream(_OverConnect, GroupedUpstream):
    """An ``applyInPandas`` θ's ``GroupedData`` on Spark Connect."""


class ConnectCogroupedUpstream(_OverConnect, CogroupedUpstream):
    """A ``cogroup().applyInPandas`` θ's two ``GroupedData`` on Spark Connect."""


class ConnectUdfUpstream(_OverConnect, UdfUpstream):
    """A UDF θ's DataFrame and arguments on Spark Connect (its capture is a Connect UDF)."""

    def capture(self) -> Any:
        from pyspark.sql.connect.udf import UserDefinedFunction
        from pyspark.sql.types import BinaryType

        return self.computed(UserDefinedFunction(
            self.keeper(), BinaryType(), "icedtea_keep", self.eval_type)(*self.args))
