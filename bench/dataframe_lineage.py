"""DataFrame lineage (issue 12) and the two trace engines, briefly.

1. A DataFrame pipeline over ``--rows`` rows (range → pandas UDF column → filter →
   groupBy/agg → join → select, collect), plain and recorded with ``--lineage``, rotated
   in one process and session: medians of wall time, their ratio and the median of paired
   ratios, and how long the frames written ahead took after each --lineage run; then
   ``--trace-pairs`` rounds of first backward traces of one output row (with
   ``--no-prepare``: the trace writes the frames; at the cell's end: it waits for those
   written ahead; once they are written) each with a later one; ``--coalescing-pairs N``:
   N first traces with and without AQE coalescing the frames' shuffles, alternated.
2. An RDD word count of ``--words`` words with ``--lineage``: one backward trace with
   DuckDB and with Spark SQL (``it.config.lineage_engine``), each on a fresh ``Lineage``.

    flock /tmp/icedtea-bench.lock .venv/bin/python bench/dataframe_lineage.py
"""
from __future__ import annotations

import repo_paths  # noqa: F401 - this checkout's modules, in the driver and the workers

# isort: split

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
from bench.overhead import measured  # noqa: E402
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


def timed(spark, code, names, lineage, **options):
    """(wall seconds, worker CPU seconds, the run or None) of one variant."""
    ns = {"spark": spark, "sc": spark.sparkContext, **names}
    got: dict = {}

    def run_it():
        if lineage is None:
            exec(code, ns)  # noqa: S102 - the plain run
            return
        got["run"] = start_run(code, ns, RunOptions(store=tempfile.mkdtemp(), lineage=lineage,
                                                    **options))
        got["run"].wait(600)
    wall, cpu = measured(run_it)
    return wall, cpu, got.get("run")


def written_ahead(run):
    """(seconds from the cell's end until its frames were written, worker CPU seconds
    spent meanwhile) of a --lineage run's frames written ahead."""
    start = time.perf_counter()
    while run.lineage_writer is None and time.perf_counter() - start < 10:
        time.sleep(0.01)
    wall, cpu = measured(lambda: run.lineage_writer.wait(600))
    assert run.lineage_writer.outcome == "written", run.lineage_writer.outcome
    return time.perf_counter() - start, cpu


def frames(spark, rows, repeat):
    """Plain, recorded and recorded with --lineage, rotated; ratios to plain (wall time
    and the workers' CPU: ratio of medians, median of paired ratios). After each --lineage
    run its frames are written ahead before the next variant starts: how long that took
    from the cell's end and the workers' CPU it used."""
    variants = [None, False, True]
    seen: dict = {v: [] for v in variants}
    ahead = []
    for i in range(repeat):
        for lineage in variants[i % 3:] + variants[:i % 3]:
            seen[lineage].append(timed(spark, FRAMES, {"N": rows}, lineage))
            if lineage:
                ahead.append(written_ahead(seen[lineage][-1][2]))
    print(f"DataFrame pipeline, {rows:,} rows, load {os.getloadavg()[0]:.1f}")
    for k, what in ((0, "wall"), (1, "worker CPU")):
        plain = [s[k] for s in seen[None]]
        line = f"  {what}: plain {statistics.median(plain):.2f} s"
        for lineage, label in ((False, "recorded"), (True, "--lineage")):
            mine = [s[k] for s in seen[lineage]]
            paired = [m / p for m, p in zip(mine, plain) if p > 0]
            line += (f"; {label} {statistics.median(mine):.2f} s, "
                     f"{statistics.median(mine) / max(statistics.median(plain), 1e-9):.2f}x "
                     f"(paired {statistics.median(paired) if paired else float('nan'):.2f}x)")
        print(line)
    print(f"  frames written ahead: {', '.join(f'{w:.2f} s' for w, _ in ahead)} after the "
          f"cell's end; worker CPU {', '.join(f'{c:.2f} s' for _, c in ahead)}")


def traces(spark, rows, pairs):
    """First traces, alternated: with --no-prepare (the frames written by the trace), at
    the cell's end (it waits for the frames written ahead), and once they are written;
    each followed by a later trace."""
    seen: dict = {"no-prepare": [], "at the end": [], "written": []}

    def first(variant):
        run = timed(spark, FRAMES, {"N": rows}, True, prepare=variant != "no-prepare")[2]
        if variant == "written":
            written_ahead(run)
        times = []
        for _ in range(2):
            start = time.perf_counter()
            t = run.trace_back(lambda row: row.name == "key 420")
            times.append(time.perf_counter() - start)
        seen[variant].append(times)
        print(f"  first trace, {variant}: {times[0]:.2f} s, later {times[1]:.2f} s, "
              f"{len(t)} sources, load {os.getloadavg()[0]:.1f}")
    for _ in range(pairs):
        for variant in seen:
            first(variant)
    for variant, times in seen.items():
        print(f"  {variant}: first {statistics.median(t[0] for t in times):.2f} s, later "
              f"{statistics.median(t[1] for t in times):.2f} s (medians)")


def coalescing(spark, rows, pairs):
    """The first trace with and without AQE coalescing the kept frames' shuffles
    (``frames.coalesced_like_the_run``), alternated: medians and the median paired ratio."""
    import contextlib

    from icedtea_jupyter.lineage import dataframe

    kept = dataframe.coalesced_like_the_run
    firsts: dict = {"without": [], "with": []}
    try:
        for variant in ("without", "with") * pairs:
            dataframe.coalesced_like_the_run = kept if variant == "with" else \
                (lambda spark: contextlib.nullcontext())
            run = timed(spark, FRAMES, {"N": rows}, True, prepare=False)[2]
            start = time.perf_counter()
            run.trace_back(lambda row: row.name == "key 420")
            firsts[variant].append(time.perf_counter() - start)
            print(f"  first trace {variant} coalescing: {firsts[variant][-1]:.2f} s, "
                  f"load {os.getloadavg()[0]:.1f}")
    finally:
        dataframe.coalesced_like_the_run = kept
    ratios = [w / o for w, o in zip(firsts["with"], firsts["without"])]
    print(f"  medians: without {statistics.median(firsts['without']):.2f} s, with "
          f"{statistics.median(firsts['with']):.2f} s, paired {statistics.median(ratios):.2f}x")


def engines(spark, words):
    _, _, run = timed(spark, WORDS, {"LINES": zipf_lines(words), "add": add}, True)
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
    parser.add_argument("--trace-pairs", type=int, default=1,
                        help="first traces with --no-prepare, at the cell's end and once "
                             "the frames are written ahead, alternated")
    parser.add_argument("--no-engines", action="store_true", help="skip part 2")
    parser.add_argument("--coalescing-pairs", type=int, default=0,
                        help="first traces with and without coalescing, alternated")
    args = parser.parse_args()
    spark = (SparkSession.builder.master("local[2]").config("spark.ui.enabled", "false")
             .config("spark.ui.showConsoleProgress", "false")
             .getOrCreate())
    spark.sparkContext.setLogLevel("ERROR")
    print("load", os.getloadavg())
    frames(spark, args.rows, args.repeat)
    traces(spark, args.rows, args.trace_pairs)
    if args.coalescing_pairs:
        coalescing(spark, args.rows, args.coalescing_pairs)
    if not args.no_engines:
        engines(spark, args.words)
    print("load", os.getloadavg())


if __name__ == "__main__":
    main()
