"""DataFrame lineage: ``run.trace_back(row)`` / ``trace_forward(record)`` on a cell whose
last operator is a DataFrame.

Each traced operator's output is written with hidden id columns (``frames.py``) as
Parquet in the run store, on a kernel thread when the run ends (``frames_ahead.py``) or
else at the first trace; a step is then a semi-join of two such
files on the hidden columns the child carries of its input (or, at an aggregation, on
its keys), in DuckDB or, for frames larger than ``it.config.lineage_spark_threshold_bytes``
or a cluster's session, in Spark SQL: the same queries over the same files
(``spark_engine.choose_engine``). The cell's own run is untouched: its result, schema and
``collect()`` are what Spark computed without lineage.
"""
from __future__ import annotations

import os
import threading
from typing import Any

from .frames import (
    PART,
    POS,
    FrameGraph,
    Untraced,
    coalesced_like_the_run,
    group_column,
    key_column,
)
from .records import Positions
from .trace import is_predicate

REDERIVED = ("DataFrame lineage makes the cell's DataFrame operators again with hidden id "
             "columns (when the run ends, or at the first trace): it assumes deterministic "
             "sources and functions")


_run_locks: dict[str, threading.Lock] = {}
_run_locks_guard = threading.Lock()


class Stopped(RuntimeError):
    """The frames' writing was stopped (``frames_ahead.stop_writing_ahead``)."""


def run_lock(path: str) -> threading.Lock:
    """The lock a run's frame writers take (one per run store folder)."""
    with _run_locks_guard:
        return _run_locks.setdefault(path, threading.Lock())


class DuckFrames:
    """Queries over the frames' Parquet files in an embedded DuckDB."""

    name, quote = "duckdb", '"'

    def __init__(self) -> None:
        import duckdb

        self.con = duckdb.connect()

    def table(self, path: str) -> str:
        return f"read_parquet('{path}/*.parquet')"

    def run(self, sql: str, wanted: Any = None) -> list[tuple]:
        """``sql``'s rows; ``wanted``: an Arrow table (p, x) it reads as ``wanted``."""
        if wanted is None:
            return self.con.execute(sql).fetchall()
        self.con.register("wanted", wanted)
        try:
            return self.con.execute(sql).fetchall()
        finally:
            self.con.unregister("wanted")


class SparkFrames:
    """The same queries in Spark SQL, reading the same files."""

    name, quote = "spark", "`"

    def __init__(self, spark: Any) -> None:
        self.spark = spark

    def table(self, path: str) -> str:
        return f"parquet.`{path}`"

    def run(self, sql: str, wanted: Any = None) -> list[tuple]:
        if wanted is None:
            return [tuple(r) for r in self.spark.sql(sql).collect()]
        view = f"icedtea_wanted_{id(self)}"
        self.spark.createDataFrame(wanted.to_pylist(), "p INT, x BIGINT") \
            .createOrReplaceTempView(view)
        try:
            query = sql.replace("JOIN wanted w", f"JOIN {view} w")
            return [tuple(r) for r in self.spark.sql(query).collect()]
        finally:
            self.spark.catalog.dropTempView(view)


class DataFrameLineage:
    """A DataFrame run's lineage: its operators' frames, written once, joined in DuckDB
    or Spark SQL (``spark_engine.choose_engine`` by their size, once written)."""

    def __init__(self, run: Any, graph: FrameGraph) -> None:
        self.run, self.graph = run, graph
        self.notes: list[str] = [REDERIVED]
        self._paths: dict[int, str] = {}
        self._failed: dict[int, str] = {}  # node -> why its frame cannot be made
        self._queries: Any = None
        dag = graph.dag
        read = {p for node in dag.operators for p in node.parents}
        last = max(node.id for node in dag.operators if node.id not in read)
        if last not in graph.how:
            op = dag.node(last)
            raise LookupError(f"the cell's last operator {op.name!r} (a {op.kind} {op.api}) "
                              "is not traced in DataFrame lineage yet")
        self.output = last

    @property
    def queries(self) -> Any:
        """The engine, chosen once every traced operator's frame is written."""
        self.write_frames()
        return self._queries

    def write_frames(self, stop: threading.Event | None = None) -> None:
        """Write every traced operator's frame not written yet, then choose the engine
        (``spark_engine.choose_engine`` by their size). One writer at a time per run: a
        trace waits for the frames a writer ahead of it (``frames_ahead.py``) is writing.
        ``stop`` set: Stopped before the next frame, and a frame whose job fails then is
        left for the next writer (not named untraced)."""
        if self._queries is not None:
            return
        lock = run_lock(self.run.path)
        while not lock.acquire(timeout=0.1):
            if stop is not None and stop.is_set():
                raise Stopped("the frames' writing was stopped")
        try:
            if self._queries is None:
                self._write_all(stop)
        finally:
            lock.release()

    def _write_all(self, stop: threading.Event | None) -> None:
        from .spark_engine import _active_session, choose_engine, links_bytes

        spark = _active_session()
        try:
            with coalesced_like_the_run(self.graph.outputs[self.output].sparkSession):
                for node in self.graph.how:
                    if stop is not None and stop.is_set():
                        raise Stopped("the frames' writing was stopped")
                    try:
                        self._path(node, stop)
                    except Untraced:  # said in the notes of the traces that reach it
                        continue
        finally:
            self.graph.release()
        files = {n: os.path.join(p, f) for n, p in self._paths.items()
                 for f in os.listdir(p)}
        chosen = choose_engine(links_bytes(files), spark)
        self._queries = SparkFrames(spark) if chosen == "spark" else DuckFrames()

    @property
    def engine_name(self) -> str:
        return str(self.queries.name)

    def _path(self, node: int, stop: threading.Event | None = None) -> str:
        """The folder of ``node``'s frame, written the first time; Untraced (the reason)
        if it cannot be made again."""
        if node in self._failed:
            raise Untraced(self._failed[node])
        if node not in self._paths:
            try:
                self._paths[node] = self.graph.write(node, self.run.path)
            except Untraced as exc:
                self._failed[node] = str(exc)
                raise
            except Exception as exc:  # Spark refused the call made again (AnalysisException)
                if stop is not None and stop.is_set():  # its job was cancelled
                    raise Stopped(f"the frames' writing was stopped: {exc}") from None
                name = self.graph.dag.node(node).name
                self._failed[node] = (f"{name!r} could not be made again with hidden id "
                                      f"columns ({type(exc).__name__}: {str(exc)[:300]})")
                raise Untraced(self._failed[node]) from None
        return self._paths[node]

    def children(self, node: int) -> list[int]:
        return [c for c, ps in self.graph.parents.items() if node in ps]

    def table(self, node: int) -> str:
        return str(self.queries.table(self._path(node)))

    def _quoted(self, name: str) -> str:
        return f"{self.queries.quote}{name}{self.queries.quote}"

    def user_columns(self, node: int) -> list[str]:
        return list(self.graph.outputs[node].columns)

    def records(self, node: int, positions: Positions | None) -> dict[tuple[int, int], Any]:
        """(partition, position) -> Row at ``node`` (every one if None)."""
        from pyspark.sql import Row

        names = self.user_columns(node)
        listed = ", ".join(f"s.{self._quoted(c)}" for c in names)
        query = f"SELECT s.{PART}, s.{POS}, {listed} FROM {self.table(node)} s"
        joined = f"{query} JOIN wanted w ON s.{PART} = w.p AND s.{POS} = w.x"
        rows = self._with_wanted(joined, positions) if positions is not None \
            else self.queries.run(query)
        return {(r[0], r[1]): Row(**dict(zip(names, r[2:]))) for r in rows}

    def matching(self, node: int, selector: Any) -> Positions:
        # a Row is callable (a Row class): it is a row to compare, not a predicate
        test = selector if is_predicate(selector) else (lambda row: row == selector)
        found: Positions = {}
        for (part, pos), row in self.records(node, None).items():
            if test(row):
                found.setdefault(part, set()).add(pos)
        return found

    def step(self, source: int, positions: Positions, target: int,
             pairs: list[tuple[str, str]]) -> Positions:
        """``target``'s rows whose columns (second of each pair) equal those of
        ``source``'s rows at ``positions`` (first of each pair)."""
        q = self._quoted
        on = " AND ".join(f"b.{q(t)} IS NOT DISTINCT FROM a.{q(s)}" for s, t in pairs) or "TRUE"
        some = " OR ".join(f"a.{q(s)} IS NOT NULL" for s, _ in pairs) or "TRUE"
        query = (f"SELECT DISTINCT b.{PART}, b.{POS} FROM {self.table(target)} b JOIN "
                 f"(SELECT s.* FROM {self.table(source)} s JOIN wanted w "
                 f"ON s.{PART} = w.p AND s.{POS} = w.x) a ON {on} WHERE {some}")
        found: Positions = {}
        for part, pos in self._with_wanted(query, positions):
            found.setdefault(part, set()).add(pos)
        return found

    def _with_wanted(self, query: str, positions: Positions) -> list[tuple]:
        import pyarrow as pa

        pairs = [(p, x) for p, ps in positions.items() for x in ps]
        if not pairs:
            return []
        wanted = pa.table({"p": pa.array([p for p, _ in pairs], pa.int32()),
                           "x": pa.array([x for _, x in pairs], pa.int64())})
        return list(self.queries.run(query, wanted))

    def links(self, child: int, parent: int) -> list[tuple[str, str]]:
        """(child column, parent column) pairs a child row and its input rows share."""
        if self.graph.how[child] == "key":
            n_keys = len(self.graph.groups[child][1])
            return [(key_column(child, i), group_column(child, i)) for i in range(n_keys)]
        return [(h, h) for h in self.graph.hidden(parent)]

    def back(self, start: dict[int, Positions]) -> dict[int, Positions]:
        """Every node's rows the ``start`` rows (node -> positions) come from."""
        reached = {node: dict(ps) for node, ps in start.items()}
        for node in sorted(self.graph.how, reverse=True):
            wanted = reached.get(node)
            if not wanted:
                continue
            for parent in self.graph.parents[node]:
                found = self.step(node, wanted, parent, self.links(node, parent))
                _add(reached, parent, found)
        return reached

    def forward(self, start: dict[int, Positions]) -> dict[int, Positions]:
        """Every node's rows the ``start`` rows (node -> positions) went into."""
        reached = {node: dict(ps) for node, ps in start.items()}
        for node in sorted(self.graph.how):
            wanted = reached.get(node)
            if not wanted:
                continue
            for child in self.children(node):
                found = self.step(node, wanted, child, [(p, c) for c, p in
                                                        self.links(child, node)])
                reached.setdefault(child, {})
                _add(reached, child, found)
        return reached


def _add(into: dict[int, Positions], node: int, positions: Positions) -> None:
    target = into.setdefault(node, {})
    for part, ps in positions.items():
        target.setdefault(part, set()).update(ps)


def dataframe_lineage(run: Any) -> DataFrameLineage | None:
    """The run's DataFrame lineage, or None when its last operator is not a DataFrame."""
    from ..instrument.frame_calls import calls_of

    recorder = getattr(run, "recorder", None)
    calls = calls_of(recorder)
    if not calls or recorder is None:
        return None
    read = {p for node in run.dag.operators for p in node.parents}
    last = max(node.id for node in run.dag.operators if node.id not in read)
    if not hasattr(recorder.outputs.get(last), "schema"):  # an RDD: ``trace.py`` traces it
        return None
    graph = FrameGraph(run.dag, calls, recorder.outputs, run.id)
    return DataFrameLineage(run, graph)
