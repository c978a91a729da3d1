"""DataFrame lineage: ``run.trace_back(row)`` / ``trace_forward(record)`` on a cell whose
last operator is a DataFrame.

The first trace writes each traced operator's output with hidden id columns
(``frames.py``) as Parquet in the run store; a step is then a semi-join of two such
files on the hidden columns the child carries of its input (or, at an aggregation, on
its keys), in DuckDB or, for frames larger than ``it.config.lineage_spark_threshold_bytes``
or a cluster's session, in Spark SQL: the same queries over the same files
(``spark_engine.choose_engine``). The cell's own run is untouched: its result, schema and
``collect()`` are what Spark computed without lineage.
"""
from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

from .frames import PART, POS, FrameGraph, Untraced, group_column, key_column

if TYPE_CHECKING:
    import pandas as pd

from .records import Positions
from .trace import TracedRecord, is_predicate

COLUMNS = ["operator", "partition", "position", "record"]
REDERIVED = ("DataFrame lineage makes the cell's DataFrame operators again with hidden id "
             "columns (at the first trace): it assumes deterministic sources and functions")


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
        if self._queries is None:
            from .spark_engine import _active_session, choose_engine, links_bytes

            try:
                for node in self.graph.how:
                    try:
                        self._path(node)
                    except Untraced:  # said in the notes of the traces that reach it
                        continue
            finally:
                self.graph.release()
            spark = _active_session()
            files = {n: os.path.join(p, f) for n, p in self._paths.items()
                     for f in os.listdir(p)}
            chosen = choose_engine(links_bytes(files), spark)
            self._queries = SparkFrames(spark) if chosen == "spark" else DuckFrames()
        return self._queries

    @property
    def engine_name(self) -> str:
        return str(self.queries.name)

    def _path(self, node: int) -> str:
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

    def back(self, start: Positions) -> dict[int, Positions]:
        reached = {self.output: start}
        for node in sorted(self.graph.how, reverse=True):
            wanted = reached.get(node)
            if not wanted:
                continue
            for parent in self.graph.parents[node]:
                found = self.step(node, wanted, parent, self.links(node, parent))
                _add(reached, parent, found)
        return reached

    def forward(self, start: dict[int, Positions]) -> dict[int, Positions]:
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


class FrameTrace:
    """A DataFrame trace: its rows at every operator it reached (``at``), the rows it
    ends at (``to_pandas``), what stopped it (``notes``)."""

    def __init__(self, direction: str, lineage: DataFrameLineage,
                 reached: dict[int, Positions], ends: list[int], notes: list[str]) -> None:
        self.direction, self._lineage, self._reached, self._ends = direction, lineage, reached, ends
        self.engine = lineage.engine_name
        self.notes = notes
        self.call = ""
        self.log: Any = lambda call: None

    @property
    def operators(self) -> dict[str, int]:
        dag = self._lineage.graph.dag
        return {dag.node(n).name: sum(len(p) for p in ps.values())
                for n, ps in sorted(self._reached.items())}

    def __len__(self) -> int:
        return self.count()

    def at(self, operator: str) -> pd.DataFrame:
        """The rows on the trace at ``operator``'s output: operator, partition, position, record."""
        return self._frame([self._lineage.graph.dag.node(operator).id])

    def to_pandas(self) -> pd.DataFrame:
        """The rows the trace ends at: source rows (back), output rows (forward)."""
        return self._frame(self._ends)

    def rows(self, operator: str | None = None, start: int = 0,
             size: int | None = None) -> list[TracedRecord]:
        """The rows :meth:`to_pandas` lists (or :meth:`at` ``operator``), a page of them."""
        rows = self._rows(self._nodes(operator))
        return rows[start:] if size is None else rows[start:start + size]

    def count(self, operator: str | None = None) -> int:
        """How many rows :meth:`rows` lists."""
        return sum(len(p) for n in self._nodes(operator)
                   for p in self._reached.get(n, {}).values())

    def _nodes(self, operator: str | None) -> list[int]:
        return self._ends if operator is None else [self._lineage.graph.dag.node(operator).id]

    def theta_input(self, traced: Any) -> tuple[int, int]:
        raise LookupError("jump_to from a DataFrame trace is not built yet: jump to an "
                          "interaction (dbg.jump(i)) instead")

    def first(self) -> TracedRecord:
        rows = self._rows(self._ends)
        if not rows:
            raise LookupError(f"the {self.direction} trace ends at no row")
        return rows[0]

    def replay(self) -> list:
        raise LookupError("selective replay (t.replay()) re-runs RDD operators; DataFrame "
                          "traces do not replay yet")

    def _rows(self, nodes: list[int]) -> list[TracedRecord]:
        dag, rows = self._lineage.graph.dag, []
        for node in nodes:
            positions = self._reached.get(node, {})
            records = self._lineage.records(node, positions) if positions else {}
            rows += [TracedRecord(dag.node(node).name, p, x, records.get((p, x)),
                                  self)  # type: ignore[arg-type]
                     for p in sorted(positions) for x in sorted(positions[p])]
        return rows

    def _frame(self, nodes: list[int]) -> pd.DataFrame:
        import pandas as pd

        return pd.DataFrame(self._rows(nodes), columns=COLUMNS)

    def __repr__(self) -> str:
        return f"<Trace {self.direction} (DataFrame): {len(self)} rows; {self.operators}>"


def frame_trace_back(lineage: DataFrameLineage, selector: Any,
                     at: tuple[int, int] | None = None) -> FrameTrace:
    """The source rows the selected output rows of the cell's last DataFrame come from."""
    output = lineage.output
    start = {at[0]: {at[1]}} if at is not None else lineage.matching(output, selector)
    if not start:
        raise LookupError(f"no output row of {lineage.graph.dag.node(output).name!r} matches "
                          f"{'the predicate' if is_predicate(selector) else repr(selector)}")
    notes = list(lineage.notes)
    reached = _guarded(lambda: lineage.back(start), notes)
    ends = [n for n in reached if not lineage.graph.parents.get(n) and reached[n]]
    return FrameTrace("back", lineage, reached, sorted(ends), notes)


def frame_trace_forward(lineage: DataFrameLineage, selector: Any,
                        at: tuple[int, int] | None = None,
                        operator: str | None = None) -> FrameTrace:
    """The output rows of the cell's last DataFrame the selected source rows went into."""
    graph = lineage.graph
    sources = [graph.dag.node(operator).id] if operator else \
        [n for n, how in graph.how.items() if how == "source"]
    if at is not None:
        start = {sources[0]: {at[0]: {at[1]}}}
    else:
        start = {s: found for s in sources if (found := lineage.matching(s, selector))}
    if not start:
        raise LookupError(f"no source row matches {'the predicate' if is_predicate(selector) else repr(selector)}")
    notes = list(lineage.notes)
    reached = _guarded(lambda: lineage.forward(start), notes)
    reached.setdefault(lineage.output, {})
    return FrameTrace("forward", lineage, reached, [lineage.output], notes)


def _guarded(walk: Any, notes: list[str]) -> dict[int, Positions]:
    try:
        return walk()
    except Untraced as exc:
        notes.append(f"the trace stops: {exc}")
        return {}


def frame_outputs(lineage: DataFrameLineage) -> tuple[str, list[tuple[int, int, Any]]]:
    """The cell's last DataFrame operator and its rows: (partition, position, row)."""
    rows = lineage.records(lineage.output, None)
    return (lineage.graph.dag.node(lineage.output).name,
            [(part, pos, rows[(part, pos)]) for part, pos in sorted(rows)])
