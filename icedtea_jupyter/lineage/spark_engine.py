"""The same steps as ``engine.DuckEngine``, with Spark SQL: for lineage larger than one
kernel should hold, or a session on a cluster (``choose_engine``).

The run's links (``tables.load_links``) are written once as one Parquet file beside the
workers' Arrow files (``lineage/links.parquet``, partitioned by nothing: Spark prunes its
row groups by ``op`` and ``part``); a step joins it with the wanted positions, a small
DataFrame, on (partition, block of positions) as in DuckDB, and expands a ``cross``
link to its whole range (``sequence``).
"""
from __future__ import annotations

import os
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from ..config import config
from ..store import layout
from ..store.missing import executors_share
from .engine import _BACK as DUCK_BACK
from .engine import _FORWARD as DUCK_FORWARD
from .engine import BLOCK_BITS, DuckEngine
from .records import Positions

LINKS_PARQUET = "links.parquet"

_BACK = """
SELECT DISTINCT input, part, pos FROM (
  SELECT l.input AS input, l.in_part AS part,
         explode(CASE WHEN l.`cross` THEN sequence(l.in_start, l.in_start + l.in_count - 1)
                      ELSE array(l.in_start + s.pos - l.out_start) END) AS pos
  FROM {wanted} s JOIN (
    SELECT *, explode(sequence(shiftright(out_start, {bits}),
                               shiftright(out_start + out_count - 1, {bits}))) AS block
    FROM {links} WHERE op = {op}) l
    ON l.part = s.part AND l.block = shiftright(s.pos, {bits})
   AND s.pos >= l.out_start AND s.pos < l.out_start + l.out_count)
"""

_FORWARD = """
SELECT DISTINCT part, pos FROM (
  SELECT l.part AS part,
         explode(CASE WHEN l.`cross` THEN sequence(l.out_start, l.out_start + l.out_count - 1)
                      ELSE array(l.out_start + s.pos - l.in_start) END) AS pos
  FROM {wanted} s JOIN (
    SELECT *, explode(sequence(shiftright(in_start, {bits}),
                               shiftright(in_start + in_count - 1, {bits}))) AS block
    FROM {links} WHERE op = {op} AND input = {input}) l
    ON l.in_part = s.part AND l.block = shiftright(s.pos, {bits})
   AND s.pos >= l.in_start AND s.pos < l.in_start + l.in_count)
"""

_SPARK_SQL = {DUCK_BACK: _BACK, DUCK_FORWARD: _FORWARD}  # DuckEngine's query -> Spark's


class SparkEngine(DuckEngine):
    """Steps over a run's links with Spark SQL, reading ``lineage/links.parquet``: the
    same steps as ``DuckEngine`` (its ``back`` and ``forward``), each query in Spark's SQL."""

    name = "spark"

    def __init__(self, spark: Any, store_path: str, links: pa.Table,
                 shared: bool = True) -> None:
        """``shared`` False: the executors cannot read the run store (they run on other
        hosts: ``store/missing.executors_share``), so the links travel from the kernel."""
        self.spark = spark
        path = os.path.join(store_path, layout.LINEAGE, LINKS_PARQUET)
        self.links = spark.read.parquet(_written(path, links)) if shared else \
            spark.createDataFrame(links)
        self._view = f"icedtea_links_{abs(hash(path))}"
        self.links.createOrReplaceTempView(self._view)

    def _run(self, query: str, positions: Positions, **params: int) -> list[tuple]:
        pairs = [(int(p), int(x)) for p, ps in positions.items() for x in ps]
        if not pairs:
            return []
        wanted = self.spark.createDataFrame(pairs, "part INT, pos BIGINT")
        name = f"{self._view}_wanted"
        wanted.createOrReplaceTempView(name)
        try:
            sql = _SPARK_SQL[query].format(wanted=name, links=self._view, bits=BLOCK_BITS,
                                           **{k: int(v) for k, v in params.items()})
            return [tuple(row) for row in self.spark.sql(sql).collect()]
        finally:
            self.spark.catalog.dropTempView(name)


def _written(path: str, links: pa.Table) -> str:
    """``links`` as the Parquet file ``path`` (written once), sorted by ``op``, ``part``."""
    if not os.path.exists(path):
        partial = path + ".partial"
        pq.write_table(links.sort_by([("op", "ascending"), ("part", "ascending")]),
                       partial, row_group_size=1 << 20)
        os.replace(partial, path)
    return path


def links_bytes(files: dict) -> int:
    """The size on disk of a run's lineage files (``tables.chosen_files``)."""
    return sum(os.path.getsize(path) for path in files.values() if os.path.exists(path))


def choose_engine(size: int, spark: Any) -> str:
    """``"spark"`` when ``it.config.lineage_engine`` says so, or when the lineage is
    larger than ``it.config.lineage_spark_threshold_bytes`` or the session's master is
    a cluster and a session is active; else ``"duckdb"``."""
    forced = config.lineage_engine
    if forced not in (None, "duckdb", "spark"):
        raise ValueError(f"it.config.lineage_engine is {forced!r}: use 'duckdb', 'spark' "
                         "or None (chosen by size)")
    if forced is not None:
        if forced == "spark" and spark is None:
            raise LookupError("it.config.lineage_engine is 'spark' but no SparkSession is "
                              "active in this kernel")
        return forced
    if spark is None:
        return "duckdb"
    master = spark.sparkContext.master or ""
    on_cluster = not master.startswith("local")
    return "spark" if on_cluster or size > config.lineage_spark_threshold_bytes else "duckdb"


def engine_for(store: Any, links: pa.Table) -> Any:
    """The engine a run's traces use (``choose_engine``), over its ``links``."""
    from .tables import chosen_files, connect

    spark = _active_session()
    if choose_engine(links_bytes(chosen_files(store)), spark) == "spark":
        return SparkEngine(spark, store.path, links, executors_share(store.read_manifest()))
    import weakref

    engine = DuckEngine(connect(links))
    weakref.finalize(engine, engine.con.close)  # closed with the run's lineage, or at exit
    return engine


def _active_session() -> Any:
    try:
        from pyspark.sql import SparkSession
    except ImportError:  # pragma: no cover - pyspark is a dependency
        return None
    return SparkSession.getActiveSession()
