"""DataFrame lineage (issue 12) and the two trace engines, briefly.

1. A DataFrame pipeline over ``--rows`` rows (range → pandas UDF column → filter →
   groupBy/agg → join → select, collect), plain and recorded with ``--lineage``, rotated
   in one process and session: medians of wall time, their ratio and the median of paired
   ratios; then the first backward trace of one output row (it writes the operators'
   frames with hidden ids) and a later one.
2. An RDD word count of ``--words`` words with ``--lineage``: one backward trace with
   DuckDB and with Spark SQL (``it.config.lineage_engine``), each on a fresh ``Lineage``.

    flock /tmp/icedtea-bench.lock .venv/bin/python bench/dataframe_lineage.py
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from operator import add

os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")

from pyspark.sql import SparkSession  # noqa: E402

from bench.lineage_capture import zipf_lines  # noqa: E402
from icedtea_jupyter.config import config  # noqa: E402
from icedtea_jupyter.lineage.trace import Lineage, trace_back  # noqa: E402
from icedtea_jupyter.session.execution import RunOptions, start_run  # noqa: E402

FRAMES = """
from pyspark.sql import functions as F
from pyspark.sql.functions import pandas_udf

@pandas_udf("long")
def tripled(v):
    return v * 3

facts = spark.range(0, N, numPartitions=4).withColumn("k", F.col("id") % 1000)
kept = facts.withColumn("t", tripled("id")).filter(F.col("t") % 7 != 0)
sums = kept.groupBy("k").agg(F.sum("t").alias("total"))
names = spark.createDataFrame([(k, f"key {k}") for k in range(0, 1000, 10)], "k long, name string")
rows = sums.join(names, "k").select("name", "total").collect()
"""

WORDS = """
counts = (sc.parallelize(LINES, 4).flatMap(lambda line: line.split()).setName("split")
          .map(lambda word: (word, 1)).setName("pair").reduceByKey(add).setName("count")
          .collect())
"""


def timed(spark, code, names, lineage):
    ns = {"spark": spark, "sc": spark.sparkContext, **names}
    start = time.perf_counter()
    if lineage is None:
        exec(code, ns)  # noqa: S102 - the plain run
        return time.perf_counter() - start, None
    run = start_run(code, ns, RunOptions(store=tempfile.mkdtemp(), lineage=lineage))
    run.wait(600)
    return time.perf_counter() - start, run


def frames(spark, rows, repeat):
    """Plain, recorded and recorded with --lineage, rotated; ratios to plain."""
    walls, paired, run = {None: [], False: [], True: []}, {False: [], True: []}, None
    variants = [None, False, True]
    for i in range(repeat):
        got = {}
        for lineage in variants[i % 3:] + variants[:i % 3]:
            got[lineage] = timed(spark, FRAMES, {"N": rows}, lineage)
            walls[lineage].append(got[lineage][0])
        for lineage in (False, True):
            paired[lineage].append(got[lineage][0] / got[None][0])
        run = got[True][1]
    plain = statistics.median(walls[None])
    print(f"DataFrame pipeline, {rows:,} rows: plain {plain:.2f} s")
    for lineage, label in ((False, "recorded"), (True, "--lineage")):
        wall = statistics.median(walls[lineage])
        print(f"  {label}: {wall:.2f} s, ratio of medians {wall / plain:.2f}x, median paired "
              f"{statistics.median(paired[lineage]):.2f}x")
    for label in ("first", "later"):
        start = time.perf_counter()
        t = run.trace_back(lambda row: row.name == "key 420")
        print(f"  {label} trace back: {time.perf_counter() - start:.2f} s, {len(t)} sources")


def engines(spark, words):
    _, run = timed(spark, WORDS, {"LINES": zipf_lines(words), "add": add}, True)
    for engine in ("duckdb", "spark", "duckdb", "spark"):
        config.lineage_engine = engine
        start = time.perf_counter()
        t = trace_back(Lineage(run), lambda row: row[0] == "w40000")
        print(f"  word count {words:,} words, {t.engine}: {time.perf_counter() - start:.2f} s "
              f"(positions {t.operators})")
    config.lineage_engine = None


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--words", type=int, default=200_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--no-engines", action="store_true", help="skip part 2")
    args = parser.parse_args()
    spark = (SparkSession.builder.master("local[2]").config("spark.ui.enabled", "false")
             .config("spark.ui.showConsoleProgress", "false")
             .getOrCreate())
    spark.sparkContext.setLogLevel("ERROR")
    print("load", os.getloadavg())
    frames(spark, args.rows, args.repeat)
    if not args.no_engines:
        engines(spark, args.words)
    print("load", os.getloadavg())


if __name__ == "__main__":
    main()
