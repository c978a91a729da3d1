"""Lineage capture cost (issue 12): Titian's workloads plain, recorded, and with --lineage.

Lines of Zipf-distributed words (about ``--words`` in all), ``--pipeline``: ``wordcount``
(flatMap, map, reduceByKey), ``grep`` (a filter keeping the lines with a word of rank
1000-1099, then a map) or ``join`` (the words joined with a dictionary of every
seventh word's rank, then counted by rank's last digit); each repetition runs the plain pipeline, the recorded one and the one
recorded with ``--lineage`` in the same process and Spark session, rotating which goes
first. Prints the medians of wall time and of the Python workers' CPU time, their
ratios to the plain run and the median of the paired ratios (each repetition's run
against the plain run of the same repetition: the machine's load moves both), the lineage's bytes
(with a join inputs' keys captured in ``lineage/derived/``) against the input's, and the time of one
backward trace in DuckDB: the first (loading the links), its records (a Spark job over
the source partitions concerned), later ones. Titian's figures: capture 1.10-1.29x,
lineage within 30% of the input.

    .venv/bin/python bench/lineage_capture.py [--words 1000000] [--repeat 3] [--pipeline grep]
        [--text-file]
"""
from __future__ import annotations

import repo_paths  # noqa: F401 - this checkout's modules, in the driver and the workers

# isort: split

import argparse
import os
import random
import statistics
import sys
import tempfile
import threading
import time
from operator import add

os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")

import psutil  # noqa: E402
from pyspark.sql import SparkSession  # noqa: E402

from icedtea_jupyter.session.execution import RunOptions, start_run  # noqa: E402

PIPELINE = """
counts = (sc.parallelize(LINES, P).flatMap(lambda line: line.split()).setName("split")
          .map(lambda word: (word, 1)).setName("pair").reduceByKey(add).setName("count")
          .collect())
"""
PIPELINES = {
    "wordcount": (PIPELINE, lambda row: row[0] == "w49999"),
    "grep": ("""
found = (sc.parallelize(LINES, P).filter(lambda line: " w10" in f" {line}").setName("grep")
         .map(lambda line: line.upper()).setName("upper").collect())
""", None),  # its first output row, by id
    "join": ("""
ranks = sc.parallelize([(f"w{r}", r) for r in range(0, 50_000, 7)], P)
digits = (sc.parallelize(LINES, P).flatMap(lambda line: line.split()).setName("split")
          .map(lambda word: (word, 1)).setName("pair").join(ranks).setName("join")
          .map(lambda kv: (kv[1][1] % 10, 1)).setName("digit").reduceByKey(add)
          .setName("count").collect())
""", lambda row: row[0] == 3),
}


def zipf_lines(words: int, per_line: int = 10, vocabulary: int = 50_000) -> list[str]:
    rng = random.Random(7)
    weights = [1 / rank for rank in range(1, vocabulary + 1)]
    drawn = rng.choices([f"w{rank}" for rank in range(vocabulary)], weights, k=words)
    return [" ".join(drawn[i:i + per_line]) for i in range(0, words, per_line)]


class WorkerCpu:
    """CPU seconds of Spark's Python daemon and every worker it forked, sampled every
    ``period`` seconds by a thread: each process counts with the most it was seen to
    use, also after it exited (``overhead.worker_cpu_seconds`` reads the daemon's
    reaped children: a worker that ended and is not reaped yet drops out of a delta,
    which made paired ratios below 1)."""

    def __init__(self, period: float = 0.1) -> None:
        self.seen: dict[tuple[int, float], float] = {}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._sample, args=(period,), daemon=True)
        self._thread.start()

    def _sample(self, period: float) -> None:
        while not self._stop.wait(period):
            self.poll()

    def poll(self) -> None:
        for process in psutil.process_iter(["cmdline", "create_time"]):
            if "pyspark.daemon" not in " ".join(process.info["cmdline"] or []):
                continue
            try:
                times = process.cpu_times()
            except psutil.Error:
                continue
            key = (process.pid, process.info["create_time"])
            self.seen[key] = max(self.seen.get(key, 0.0), times.user + times.system)

    def total(self) -> float:
        self.poll()
        return sum(self.seen.values())

    def stop(self) -> None:
        self._stop.set()


def lineage_bytes(run, input_bytes: int) -> None:
    """The run's lineage files against its input's bytes, in all and by operator."""
    from icedtea_jupyter.store import layout

    names = {node.id: node.name for node in run.dag.operators}
    by_operator: dict[str, int] = {}
    for name, path in layout.lineage_files(run.path):
        label = names.get(name.operator, str(name.operator))
        by_operator[label] = by_operator.get(label, 0) + os.path.getsize(path)
    derived = os.path.join(run.path, "lineage", "derived")  # a join inputs' captured keys
    for name in os.listdir(derived) if os.path.isdir(derived) else ():
        label = f"{names.get(int(name.split('-op')[1].split('-')[0]), name)} keys"
        by_operator[label] = by_operator.get(label, 0) + os.path.getsize(
            os.path.join(derived, name))
    total = sum(by_operator.values())
    print(f"lineage {total / 1e6:.2f} MB for {input_bytes / 1e6:.1f} MB of input "
          f"({total / input_bytes:.1%}): " + ", ".join(
              f"{label} {size / 1e3:.0f} kB" for label, size in sorted(by_operator.items())))


def timed(meter: WorkerCpu, run_once) -> tuple[float, float]:
    time.sleep(0.2)  # the previous run's workers seen to their end
    cpu, start = meter.total(), time.perf_counter()
    run_once()
    wall = time.perf_counter() - start
    time.sleep(0.2)
    return wall, meter.total() - cpu


def arguments(repeat: int, extra: list[tuple[str, int]] = ()) -> argparse.Namespace:
    """The workload's options (``--words``, ``--partitions``, ``--repeat``, ``--pipeline``,
    and ``extra`` integer options with their defaults)."""
    parser = argparse.ArgumentParser()
    for flag, default in extra:
        parser.add_argument(flag, type=int, default=default)
    parser.add_argument("--words", type=int, default=1_000_000)
    parser.add_argument("--partitions", type=int, default=4)
    parser.add_argument("--repeat", type=int, default=repeat)
    parser.add_argument("--pipeline", choices=sorted(PIPELINES), default="wordcount")
    parser.add_argument("--text-file", action="store_true",
                        help="read the lines with sc.textFile from a file, not a list")
    return parser.parse_args()


def local_session() -> SparkSession:
    """The benchmarks' Spark session: ``local[2]``, no UI, errors only in the log."""
    spark = (SparkSession.builder.master("local[2]").config("spark.ui.enabled", "false")
             .config("spark.ui.showConsoleProgress", "false").getOrCreate())
    spark.sparkContext.setLogLevel("ERROR")
    return spark


def main() -> None:
    args = arguments(repeat=3)
    pipeline, selector = PIPELINES[args.pipeline]
    spark = local_session()
    sc = spark.sparkContext
    lines = zipf_lines(args.words)
    ns = {"sc": sc, "LINES": lines, "P": args.partitions, "add": add}
    store = tempfile.mkdtemp(prefix="icedtea-lineage-bench-")
    if args.text_file:  # a text of millions of lines is read from files, not parallelized
        ns["PATH"] = os.path.join(store, "text.txt")
        with open(ns["PATH"], "w") as text:
            text.writelines(line + "\n" for line in lines)
        pipeline = pipeline.replace("sc.parallelize(LINES, P)", "sc.textFile(PATH, P)")
    runs: list = []

    def recorded(lineage: bool, prepare: bool = False) -> None:
        # timed runs prepare nothing after their end (it would run beside the next one)
        run = start_run(pipeline, dict(ns), RunOptions(store=store, lineage=lineage,
                                                       prepare=prepare))
        run.wait(1800)
        assert run.status == "finished", run.error
        runs.append(run)

    variants = {"plain": lambda: exec(pipeline, dict(ns)), "recorded": lambda: recorded(False),
                "lineage": lambda: recorded(True)}
    exec(pipeline, dict(ns))  # warm the workers
    print(f"{args.pipeline}, {args.words:,} words in {len(lines):,} lines"
          f"{' read from a file' if args.text_file else ''}, load {os.getloadavg()[0]:.1f}")
    meter = WorkerCpu()
    times: dict[str, list[tuple[float, float]]] = {name: [] for name in variants}
    names = list(variants)
    for k in range(args.repeat):
        for name in names[k % 3:] + names[:k % 3]:
            times[name].append(timed(meter, variants[name]))
    plain_wall = statistics.median(w for w, _ in times["plain"])
    plain_cpu = statistics.median(c for _, c in times["plain"])
    for name, samples in times.items():
        wall = statistics.median(w for w, _ in samples)
        cpu = statistics.median(c for _, c in samples)
        paired_wall = statistics.median(w / p for (w, _), (p, _) in zip(samples, times["plain"]))
        paired_cpu = statistics.median(c / max(p, 1e-9)
                                       for (_, c), (_, p) in zip(samples, times["plain"]))
        print(f"{name:9s} wall {wall:6.2f} s ({wall / plain_wall:4.2f}x, paired "
              f"{paired_wall:4.2f}x)   worker cpu {cpu:6.2f} s ({cpu / max(plain_cpu, 1e-9):4.2f}x, "
              f"paired {paired_cpu:4.2f}x)")
    print(f"load after: {os.getloadavg()[0]:.1f}")
    run = next(r for r in reversed(runs) if r.options.get("lineage"))
    lineage_bytes(run, sum(len(line.encode()) + 1 for line in lines))
    first_trace(run, selector, "right after the run, nothing prepared")
    recorded(True, prepare=True)  # as a user's run: its lineage prepared when it ends
    run = runs[-1]
    while run.lineage_writer is None:
        time.sleep(0.01)
    run.lineage_writer.wait()
    print(f"prepared when the run ended in {run.lineage_writer.seconds:.2f} s "
          f"({run.lineage_writer.outcome})")
    first_trace(run, selector, "once prepared")
    for word in ("w40000", "w7") if args.pipeline == "wordcount" else ():
        start = time.perf_counter()
        found = len(run.trace_back(lambda row, word=word: row[0] == word))
        print(f"a later trace_back of {word} (positions only, {found} source lines): "
              f"{time.perf_counter() - start:.2f} s")
    meter.stop()
    spark.stop()


def first_trace(run, selector, when: str) -> None:
    start = time.perf_counter()
    trace = run.trace_back(selector) if selector else run.trace_back(at=(0, 0))
    first = time.perf_counter() - start
    rows = trace.to_pandas()
    print(f"first trace_back of one output row, {when}: {first:.2f} s with the links' "
          f"loading (positions), then {time.perf_counter() - start - first:.2f} s for its "
          f"records ({len(rows)} source lines, {trace.engine})")


if __name__ == "__main__":
    main()
