"""θ's input batches regenerated from a DataFrame's plan (mapInPandas, mapInArrow, and
the groups of applyInPandas and the calls of a UDF, as θ).

A batch function's record is an Arrow batch, and Spark cuts a partition's rows into
batches by its SQL configuration (``spark.sql.execution.arrow.maxRecordsPerBatch``…),
plans its partitions with it (adaptive query execution coalesces shuffle partitions) and
converts the batches for pandas by it (the session time zone). So θ's input DataFrame is
kept with the ``spark.sql.*`` configuration the cell ran with; to regenerate partition p,
Spark runs the same plan with that configuration, in a session of its own, through a
capture function of the same API as θ (the batches are converted exactly as θ got them),
on partition p alone (``SparkContext.runJob``). Each batch travels back pickled, in order.
"""
from __future__ import annotations

import functools
import itertools
import pickle
from collections.abc import Iterator
from typing import Any

SQL_PREFIX = "spark.sql."


class KeepBatches:
    """The capture function: each input batch, pickled, as one row of a binary column."""

    def __init__(self, api: str) -> None:
        self.api = api

    def __call__(self, batches: Iterator) -> Iterator:
        import pyarrow as pa

        for batch in batches:
            data = pa.array([pickle.dumps(batch, protocol=5)], pa.binary())
            if self.api == "mapInArrow":
                yield pa.RecordBatch.from_arrays([data], ["b"])
            else:
                yield pa.table({"b": data}).to_pandas()


def _pickled_frame(value: Any) -> Any:
    import pandas as pd

    return pd.DataFrame({"b": [pickle.dumps(value, protocol=5)]})


def keep_group(frame: Any) -> Any:
    """The capture function of a grouped map whose function takes the group's frame
    (a function: PySpark counts its parameters)."""
    return _pickled_frame((frame,))


def keep_keyed_group(key: Any, frame: Any) -> Any:
    """The capture function of a grouped map whose function takes (key, frame)."""
    return _pickled_frame((key, frame))


def keep_cogroup(left: Any, right: Any) -> Any:
    """The capture function of a cogrouped map whose function takes (left, right)."""
    return _pickled_frame((left, right))


def keep_keyed_cogroup(key: Any, left: Any, right: Any) -> Any:
    """The capture function of a cogrouped map whose function takes (key, left, right)."""
    return _pickled_frame((key, left, right))


def _first_column(rows: Iterator) -> list:
    return [row[0] for row in rows]


class DataFrameUpstream:
    """θ's input DataFrame in this kernel, with the SQL configuration the run used."""

    def __init__(self, frame: Any, api: str) -> None:
        self.frame = frame
        self.api = api
        self.conf = sql_conf(frame.sparkSession)
        self._rdd: Any = None  # the capture's RDD, once planned

    def records(self, payloads: list) -> list:
        """The records the capture's rows hold, in order (empty rows hold none)."""
        return [pickle.loads(b) for b in payloads if b]

    def capture(self) -> Any:
        """θ's input through the capture function, a row per batch."""
        return getattr(self.frame, self.api)(KeepBatches(self.api), "b binary")

    def batches(self, partition: int) -> tuple[list, int, dict[str, tuple]]:
        """Partition ``partition`` of θ's input as the list of records θ would take
        (batches, or groups); the number of partitions the plan has now; the confs
        set to the run's values (``{key: (now, run)}``)."""
        differs = differences(self.frame.sparkSession, self.conf)
        if self._rdd is None:  # planned once: the shuffles before θ run once
            self._rdd = in_the_runs_session(self.capture(), self.conf).rdd
        rdd = self._rdd
        partitions = rdd.getNumPartitions()
        if partition >= partitions:
            return [], partitions, differs
        data = rdd.context.runJob(rdd, _first_column, [partition])
        return self.records(data), partitions, differs


def every_partition(upstream: DataFrameUpstream) -> tuple[dict[int, list], dict[str, tuple]]:
    """Every partition of ``upstream``'s records, by partition (``{q: records}``), and
    the confs pinned to the run's values, from one query: a DataFrame operator's inputs
    when Python operators run before it. Spark runs them with the session's SQL settings
    only within a query (a ``runJob`` of the plan's RDD gives them Spark's defaults:
    θ's batches would be cut by 10,000 rows), and plans its partitions as the run's
    action did (adaptive query execution coalesces them the same way)."""
    from pyspark.sql.functions import spark_partition_id

    differs = differences(upstream.frame.sparkSession, upstream.conf)
    frame = in_the_runs_session(upstream.capture(), upstream.conf)
    rows = frame.select(spark_partition_id().alias("q"), "b").collect()
    payloads: dict[int, list] = {}
    for q, data in rows:
        payloads.setdefault(q, []).append(data)
    return {q: upstream.records(p) for q, p in payloads.items()}, differs


def sql_conf(session: Any) -> dict[str, str]:
    """The session's ``spark.sql.*`` settings that differ from Spark's defaults."""
    try:
        everything = session.conf.getAll
    except Exception:  # a session without getAll: nothing to pin
        return {}
    return {k: v for k, v in dict(everything).items() if k.startswith(SQL_PREFIX)}


def differences(session: Any, run: dict[str, str]) -> dict[str, tuple]:
    """The SQL settings where ``session`` differs from the run: ``{key: (now, run)}``."""
    now = sql_conf(session)
    return {key: (now.get(key), run.get(key)) for key in sorted(set(now) | set(run))
            if now.get(key) != run.get(key)}


def in_the_runs_session(frame: Any, run: dict[str, str]) -> Any:
    """``frame`` planned in a session of its own that has the run's SQL configuration:
    the user's session stays as the user set it, whatever cell runs meanwhile (replay
    regenerates in a background thread). A session shares the SparkContext and the
    cache; the plan is the frame's, analyzed. Spark Connect has no such sessions:
    its frames stay in theirs (``pin`` and ``restore`` around the query)."""
    session = frame.sparkSession
    jsession = getattr(session, "_jsparkSession", None)
    if jsession is None or not hasattr(frame, "_jdf"):
        return frame
    own = session.newSession()
    pin(own, run)
    plan = frame._jdf.queryExecution().analyzed()
    return type(frame)(_datasets(frame).ofRows(own._jsparkSession, plan), own)


def _datasets(frame: Any) -> Any:
    """Spark's Dataset class of ``frame`` (``sql.classic`` since Spark 4)."""
    return functools.reduce(getattr, frame._jdf.getClass().getName().split("."),
                            frame.sparkSession._jvm)


def pin(session: Any, run: dict[str, str]) -> dict[str, tuple]:
    """Set the session's SQL configuration to the run's; returns what was changed as
    ``{key: (value now or None, the run's or None)}``."""
    changed = {key: values for key, values in differences(session, run).items()
               if session.conf.isModifiable(key)}
    for key, (_, value) in changed.items():
        if value is None:
            session.conf.unset(key)
        else:
            session.conf.set(key, value)
    return changed


def restore(session: Any, changed: dict[str, tuple]) -> None:
    """Undo ``pin``: each key pinned goes back to its value before, unless someone set
    it meanwhile (replay regenerates in a background thread while the user's next cell
    may set its own configuration: theirs stays)."""
    for key, (now, pinned) in changed.items():
        if session.conf.get(key, None) != pinned:
            continue
        if now is None:
            session.conf.unset(key)
        else:
            session.conf.set(key, now)


class GroupedUpstream(DataFrameUpstream):
    """A grouped map's input: the ``GroupedData`` (its keys and partitioning), whose
    records are groups, as ``(frame,)`` or ``(key, frame)`` by the function's arity."""

    def __init__(self, grouped: Any, arity: int) -> None:
        super().__init__(grouped._df, "applyInPandas")
        self.grouped = grouped
        self.arity = arity

    def capture(self) -> Any:
        keep = keep_keyed_group if self.arity == 2 else keep_group
        return self.grouped.applyInPandas(keep, "b binary")


class CogroupedUpstream(DataFrameUpstream):
    """A cogrouped map's input: the ``PandasCogroupedOps`` (both sides' keys and
    partitioning), whose records are groups, ``(left, right)`` or ``(key, left, right)``
    frames by the function's arity."""

    def __init__(self, cogrouped: Any, arity: int) -> None:
        super().__init__(cogrouped._gd1._df, "applyInPandas")
        self.cogrouped = cogrouped
        self.arity = arity

    def capture(self) -> Any:
        keep = keep_keyed_cogroup if self.arity == 3 else keep_cogroup
        return self.cogrouped.applyInPandas(keep, "b binary")


def keep_row(*values: Any) -> bytes:
    """The capture function of a row UDF: the row's arguments, pickled."""
    return pickle.dumps(values, protocol=5)


def keep_series(*series: Any) -> Any:
    """The capture function of a scalar pandas UDF: the batch's Series, pickled, in the
    batch's first row (the others empty)."""
    import pandas as pd

    rows = len(series[0]) if series else 1
    return pd.Series([pickle.dumps(series, protocol=5)] + [b""] * (rows - 1))


def keep_arrays(*arrays: Any) -> Any:
    """The capture function of a scalar Arrow UDF: the batch's Arrow arrays, pickled, in
    the batch's first row (the others empty)."""
    import pyarrow as pa

    rows = len(arrays[0]) if arrays else 1
    return pa.array([pickle.dumps(arrays, protocol=5)] + [b""] * (rows - 1), pa.binary())


def keep_series_batches(batches: Any) -> Any:
    """The capture function of an iterator pandas UDF: each batch as the function takes
    it (a Series, or a tuple of them), pickled, in the batch's first row."""
    import pandas as pd

    for batch in batches:
        yield pd.Series(_in_first_row(batch))


def keep_array_batches(batches: Any) -> Any:
    """The capture function of an iterator Arrow UDF: each batch as the function takes
    it (an Arrow array, or a tuple of them), pickled, in the batch's first row."""
    import pyarrow as pa

    for batch in batches:
        yield pa.array(_in_first_row(batch), pa.binary())


def _in_first_row(batch: Any) -> list[bytes]:
    rows = len(batch[0] if isinstance(batch, tuple) else batch)
    return [pickle.dumps(batch, protocol=5)] + [b""] * (max(rows, 1) - 1)


_CALLS = itertools.count()


def keep_window_call(*series: Any) -> bytes:
    """The capture function of a window UDF: the call's Series, pickled with a number of
    its own. Spark calls it once a window partition (an unbounded frame: every row of the
    partition gets the same value) or once a row (a bounded frame), so a run of equal
    values in a row is one call (``UdfUpstream.records``)."""
    return pickle.dumps((next(_CALLS), series), protocol=5)


def keep_group_series(*series: Any) -> bytes:
    """The capture function of a grouped-aggregate pandas or Arrow UDF: the group's Series
    (or Arrow arrays), pickled (one value per group, as the UDF returns)."""
    return pickle.dumps(series, protocol=5)


# the UDFs replay regenerates the calls of (PythonEvalType), and their capture functions:
# row at a time (pickled or Arrow-batched), scalar pandas, scalar Arrow; iterator pandas
# and Arrow UDFs (their records are batches, replayed as a mapInPandas: ITERATOR_UDFS);
# grouped-aggregate pandas and Arrow UDFs in ``groupBy().agg`` (a record a group:
# AGGREGATE_UDFS)
KEEPERS: dict[int, Any] = {100: keep_row, 101: keep_row, 200: keep_series, 250: keep_arrays,
                           204: keep_series_batches, 251: keep_array_batches,
                           202: keep_group_series, 252: keep_group_series}
REPLAYED_UDFS = tuple(KEEPERS)
ITERATOR_UDFS = (204, 251)
AGGREGATE_UDFS = (202, 252)


class UdfUpstream(DataFrameUpstream):
    """The DataFrame a UDF's column is computed on, and its arguments: its records are
    the calls' arguments (a row's values, a batch's Series, or, for an aggregate UDF in
    ``grouped.agg``, a group's Series)."""

    def __init__(self, frame: Any, eval_type: int, args: tuple, grouped: Any = None,
                 window: Any = None) -> None:
        super().__init__(frame, "udf")
        self.eval_type = eval_type
        self.args = args
        self.grouped = grouped  # an aggregate UDF's GroupedData: the run's grouping
        self.window = window  # an aggregate UDF's WindowSpec (``.over(window)``)

    def keeper(self) -> Any:
        """The capture function of this UDF's calls."""
        return keep_window_call if self.window is not None else KEEPERS[self.eval_type]

    def records(self, payloads: list) -> list:
        """A window UDF's calls: one a run of equal values (see ``keep_window_call``)."""
        if self.window is None:
            return super().records(payloads)
        calls = [b for i, b in enumerate(payloads) if b and (i == 0 or b != payloads[i - 1])]
        return [pickle.loads(b)[1] for b in calls]

    def capture(self) -> Any:
        from pyspark.sql.types import BinaryType
        from pyspark.sql.udf import UserDefinedFunction

        udf = UserDefinedFunction(self.keeper(), BinaryType(), "icedtea_keep",
                                  self.eval_type)
        return self.computed(udf(*self.args))

    def computed(self, column: Any) -> Any:
        """``column`` (the capture UDF's) computed as θ was: on each row or batch of the
        frame, or on each group of the run's grouping (same shuffle, same sort: the groups
        come in the run's order)."""
        from pyspark.sql.functions import col

        if self.window is not None:  # the same window: the same calls, in the same order
            return self.frame.select(column.over(self.window).alias("b"))
        if self.grouped is None:
            return self.frame.select(column.alias("b"))
        # the filter (the capture never returns null) keeps a projection above from being
        # folded into Spark's Python aggregate, where spark_partition_id() reads 0 on
        # every partition (``every_partition`` would put every group on partition 0)
        return self.grouped.agg(column.alias("b")).where(col("b").isNotNull()).select("b")
