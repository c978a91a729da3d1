"""Trace times (issue 12): one run recorded with --lineage, then its traces, DuckDB.

Records ``bench/lineage_capture.py``'s pipeline once (``--pipeline``, ``--words``), then
times, on the live run: the first backward trace of one output row (the links loaded,
DuckDB imported, what the first trace derives), its records, later traces (``w40000``,
and the common ``w7`` of a word count); then, on the same run reopened as after a
kernel restart (``registry.open_run``), the same output row traced by its id. Repeats
the traces ``--repeat`` times, each on a fresh ``Lineage`` of the live run (the
derived key links and a join's keys kept in the store are read, not fetched again,
after the first).

    flock /tmp/icedtea-bench.lock .venv/bin/python bench/lineage_trace.py --words 1000000

``--capture-pairs N`` (with ``--pipeline join``): instead, the join's first trace
alternated N times with and without the keys the run captured (``capture_pairs``).
"""
from __future__ import annotations

import repo_paths  # noqa: F401 - this checkout's modules, in the driver and the workers

# isort: split

import os
import shutil
import statistics
import sys
import tempfile
import time
from operator import add

os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from lineage_capture import PIPELINES, arguments, local_session, zipf_lines  # noqa: E402

from icedtea_jupyter.session import registry  # noqa: E402
from icedtea_jupyter.session.execution import RunOptions, start_run  # noqa: E402


def timed(label: str, call) -> object:
    start = time.perf_counter()
    result = call()
    size = len(result) if hasattr(result, "__len__") else ""
    print(f"  {label}: {time.perf_counter() - start:.3f} s ({size} records at the end)")
    return result


def traces(run, selector, words: list[str]) -> None:
    run._lineage_cache = None  # a fresh Lineage: the links loaded again
    trace = timed("first trace_back (positions)", lambda: run.trace_back(selector))
    timed("  its records", trace.to_pandas)
    for word in words:
        timed(f"later trace_back of {word} (positions)",
              lambda word=word: run.trace_back(lambda row: row[0] == word))


def capture_pairs(run, selector, pairs: int) -> None:
    """A join's first trace, alternated in this process: with the keys the run captured
    (now) and without them (before: the join's and its inputs' keys fetched with Spark),
    each on a fresh ``Lineage`` whose ``lineage/derived/`` holds only what the run
    captured; the Lineage's set-up timed apart."""
    derived = os.path.join(run.path, "lineage", "derived")
    kept = tempfile.mkdtemp(prefix="icedtea-captured-")
    for name in os.listdir(derived):
        shutil.copy(os.path.join(derived, name), kept)
    times: dict[str, list[float]] = {"before": [], "captured": []}
    for k in range(pairs):
        for variant in ("before", "captured") if k % 2 == 0 else ("captured", "before"):
            shutil.rmtree(derived)
            shutil.copytree(kept, derived) if variant == "captured" else os.makedirs(derived)
            run._lineage_cache = None
            setup = time.perf_counter()
            lineage = run._lineage()
            if variant == "before":
                lineage.join_keys.captured = {}
            start = time.perf_counter()
            found = len(run.trace_back(selector))
            times[variant].append(time.perf_counter() - start)
            print(f"  pair {k + 1} {variant}: set-up {start - setup:.3f} s, first trace "
                  f"{times[variant][-1]:.3f} s ({found} source records, load "
                  f"{os.getloadavg()[0]:.1f})")
    ratios = sorted(c / b for c, b in zip(times["captured"], times["before"]))
    print(f"medians: before {statistics.median(times['before']):.3f} s, captured "
          f"{statistics.median(times['captured']):.3f} s; median paired ratio "
          f"{statistics.median(ratios):.2f}x")


def main() -> None:
    args = arguments(repeat=2, extra=[("--capture-pairs", 0)])
    pipeline, selector = PIPELINES[args.pipeline]
    selector = selector or (lambda row: True)
    spark = local_session()
    sc = spark.sparkContext
    ns = {"sc": sc, "LINES": zipf_lines(args.words), "P": args.partitions, "add": add}
    store = tempfile.mkdtemp(prefix="icedtea-trace-bench-")
    print(f"{args.pipeline}, {args.words:,} words, load {os.getloadavg()[0]:.1f}")
    start = time.perf_counter()
    run = start_run(pipeline, dict(ns), RunOptions(store=store, lineage=True))
    run.wait(1800)
    assert run.status == "finished", run.error
    print(f"run with --lineage: {time.perf_counter() - start:.2f} s")
    if args.capture_pairs:
        capture_pairs(run, selector, args.capture_pairs)
        spark.stop()
        return
    words = ["w40000", "w7"] if args.pipeline == "wordcount" else []
    for k in range(args.repeat):
        print(f"traces {k + 1} (load {os.getloadavg()[0]:.1f}):")
        traces(run, selector, words)
    _, outputs = run.lineage_outputs()
    at = next((part, pos) for part, pos, row in outputs if selector(row))
    registry_runs = registry.runs
    registry.runs = lambda: []  # as after a kernel restart
    try:
        reopened = registry.open_run(run.path)
    finally:
        registry.runs = registry_runs
    print(f"reopened (load {os.getloadavg()[0]:.1f}):")
    t = timed(f"trace_back(at={at}) (positions)", lambda: reopened.trace_back(at=at))
    print(f"  operators {t.operators}; notes {t.notes}")
    spark.stop()


if __name__ == "__main__":
    main()
