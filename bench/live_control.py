"""Live control (Amber): what an armed breakpoint that never hits costs, and how fast a
pause and a resume take effect.

``--part overhead`` (local[2]): ``overhead.py``'s pipeline (an ``Operator`` θ, a filter, a
map, a reduceByKey; a few million records) plain, under ``%%icedtea``, with a conditional
breakpoint on θ that never hits (``--break-when "running max: row[1] < 0"``), and with a
global COUNT breakpoint on θ whose target is never reached; side by side in one process,
alternating the order. Ratios of the medians to the plain run (budget <= 1.05 each).

``--part inprocess``: θ alone over the same records in this process, no Spark, in CPU
seconds: hosted without and with the breakpoints, against PySpark's own call.

``--part latency`` (local[8]): a job of 8 tasks that run for minutes; ``run.pause()``
repeatedly: the seconds from the request until the last of the 8 tasks held (``seconds``
of its report) and the call's wall time; ``run.resume()`` likewise (budgets 0.1 s, 0.05 s).
With ``--cluster``, on the standalone cluster of the tests (``tests/spark/cluster.py``: a
master and two workers of 4 cores on 127.0.0.1 and 127.0.0.2, executors in JVMs of their
own, Python workers beside them).

    .venv/bin/python bench/live_control.py --part overhead [--records 3000000] [--repeat 5]
    .venv/bin/python bench/live_control.py --part latency [--pauses 20] [--cluster]
    .venv/bin/python bench/live_control.py --part inprocess [--records N] [--repeat 5]
    valgrind --tool=callgrind .venv/bin/python bench/live_control.py --part inprocess \
        --only hosted|breakpoint|setup   (instructions: subtract setup's)
"""
from __future__ import annotations

import repo_paths  # noqa: F401 - this checkout's modules, in the driver and the workers

# isort: split

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, os.path.dirname(__file__))
sys.path.insert(1, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # tests/
os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")

from overhead import PIPELINE, measured, namespace, plain  # noqa: E402
from pyspark.sql import SparkSession  # noqa: E402

from icedtea_jupyter.session.execution import RunOptions, start_run  # noqa: E402

THETA = "running max"


def recorded(ns: dict, store: str, global_count: int | None = None, **options) -> float:
    """Wall seconds of one recorded run; with ``global_count``, a global COUNT breakpoint
    on θ armed as soon as the cell has built θ (before its tasks start)."""
    def run_it() -> None:
        run = start_run(PIPELINE, dict(ns), RunOptions(store=store, prepare=False,
                                                       interesting=THETA, **options))
        if global_count is not None:
            while THETA not in run.dag.names().values():
                time.sleep(0.001)
            run.add_global_breakpoint(THETA, count_at_least=global_count)
        run.wait()
        assert run.status == "finished" and not run.breakpoints, (run.error, run.breakpoints)
    wall, _ = measured(run_it)
    return wall


def session(master: str) -> SparkSession:
    spark = (SparkSession.builder.master(master).appName("icedtea live control bench")
             .config("spark.ui.enabled", "false")
             .config("spark.ui.showConsoleProgress", "false").getOrCreate())
    spark.sparkContext.setLogLevel("ERROR")
    return spark


def overhead(args: argparse.Namespace) -> dict:
    spark = session("local[2]")
    ns = namespace(spark, args.records, args.partitions)
    store = tempfile.mkdtemp(prefix="icedtea-bench-")
    variants = {
        "plain": lambda: plain(ns),
        "icedtea": lambda: recorded(ns, store),
        "breakpoint": lambda: recorded(ns, store, break_when=[f"{THETA}: row[1] < 0"]),
        "global count": lambda: recorded(ns, store, global_count=args.records * 10),
    }
    for fn in variants.values():  # warm up workers and caches
        fn()
    times: dict[str, list[float]] = {name: [] for name in variants}
    for i in range(args.repeat):
        names = list(variants) if i % 2 == 0 else list(variants)[::-1]
        for name in names:
            times[name].append(variants[name]())
            print(f"  rep {i + 1} {name:12s} {times[name][-1]:.2f} s", flush=True)
    medians = {name: statistics.median(v) for name, v in times.items()}
    ratios = {name: medians[name] / medians["plain"] for name in variants}
    # each repetition against the plain run beside it: cancels a drifting load
    paired = {name: statistics.median(t / p for t, p in zip(times[name], times["plain"]))
              for name in variants}
    for name in variants:
        print(f"{name:12s} median {medians[name]:.2f} s  ratio {ratios[name]:.3f}  "
              f"paired {paired[name]:.3f}")
    spark.stop()
    return {"bench": "live_control_overhead", "records": args.records, "medians": medians,
            "ratios": ratios, "paired": paired, "times": times}


def slow(x: int) -> int:
    time.sleep(0.0005)
    return x


def latency(args: argparse.Namespace) -> dict:
    if not args.cluster:
        return pauses(session("local[8]"), args)
    from tests.spark.cluster import standalone_cluster

    with standalone_cluster(Path(tempfile.mkdtemp(prefix="icedtea-cluster-")), workers=2,
                            cores=4) as (url, env):
        os.environ.update(env)
        return dict(pauses(session(url), args), master=url)


def pauses(spark: SparkSession, args: argparse.Namespace) -> dict:
    ns = {"sc": spark.sparkContext, "slow": slow}
    code = "n = sc.parallelize(range(8 * 400_000), 8).map(slow).setName('slow').count()"
    run = start_run(code, ns, RunOptions(store=tempfile.mkdtemp(prefix="icedtea-bench-"),
                                         prepare=False))
    while len([w for w in (run.partitions("slow") if "slow" in run.dag.names().values()
                           else []) if w["status"] == "running"]) < 8:
        time.sleep(0.05)
    time.sleep(2.0)  # every task past its first records
    pauses, pause_calls, resumes, resume_calls = [], [], [], []
    for _ in range(args.pauses):
        start = time.perf_counter()
        report = run.pause()
        pause_calls.append(time.perf_counter() - start)
        assert report.complete and report.acknowledged == 8, report
        pauses.append(report.seconds)
        time.sleep(0.2)
        start = time.perf_counter()
        resumes.append(run.resume())
        resume_calls.append(time.perf_counter() - start)
        time.sleep(0.3)
    run.stop()
    run.wait(120)
    spark.stop()
    result = {"bench": "live_control_latency", "tasks": 8, "pauses": args.pauses}
    for name, values in (("pause", pauses), ("pause call", pause_calls),
                         ("resume", resumes), ("resume call", resume_calls)):
        result[name] = {"median": statistics.median(values), "max": max(values)}
        print(f"{name:12s} median {statistics.median(values) * 1000:6.1f} ms  "
              f"max {max(values) * 1000:6.1f} ms")
    return result


class _NullChannel:
    """Where the in-process hosts report: nowhere."""

    connected = True
    operator_names: dict = {}

    def __init__(self) -> None:
        self.hosts: list = []

    def send(self, message: dict, body: bytes = b"") -> None:
        pass

    def end_worker(self, message: dict, body: bytes = b"") -> None:
        pass

    def register(self, host: object) -> None:
        self.hosts.append(host)

    def unregister(self, host: object) -> None:
        self.hosts.remove(host)


def inprocess(args: argparse.Namespace) -> dict:
    """θ alone (``overhead.py``'s ``RunningMax``) over the same records in this process,
    in CPU seconds (less swayed by other tenants than wall time): PySpark's way (the
    ``Operator`` called on the iterator), hosted, hosted with a conditional breakpoint
    that never hits, hosted with a global COUNT never reached; alternating."""
    from overhead import RunningMax, payment

    from icedtea_jupyter.executor import control_state
    from icedtea_jupyter.executor import host as host_module
    from icedtea_jupyter.executor.spec import OperatorSpec, RunSpec
    from icedtea_jupyter.executor.wrappers import PartitionFunction

    host_module.channel_for = lambda run: _NullChannel()  # type: ignore[assignment]
    run = RunSpec("bench-live-control", ("127.0.0.1", 1), b"", tempfile.mkdtemp())
    data = [payment(i) for i in range(args.records)]
    armed = {"hosted": [], "breakpoint": [{"id": 1, "operator": 0, "kind": "condition",
                                           "when": "row[1] < 0"}],
             "global count": [{"id": 2, "operator": 0, "kind": "count"}]}

    def once(name: str) -> float:
        start = time.process_time()
        if name == "plain":
            for _ in RunningMax()(iter(data)):
                pass
        else:
            control_state.observe(run.run_id, {"type": "breakpoints", "items": armed[name]})
            if name == "global count":  # a local target it never reaches
                control_state.observe(run.run_id, {"type": "target", "breakpoint": 2,
                                                   "task": -1, "seq": 1, "target": 1e18})
            spec = OperatorSpec(0, run, "mapPartitions", "running max")
            for _ in PartitionFunction(spec, "mapPartitions", RunningMax())(0, iter(data)):
                pass
        return time.process_time() - start

    names = ["plain", *armed]
    if args.only:  # once, for an instruction count (valgrind): subtract --only setup's
        if args.only != "setup":
            once(args.only)
        return {}
    for name in names:
        once(name)
    times: dict[str, list[float]] = {name: [] for name in names}
    for i in range(args.repeat):
        for name in (names if i % 2 == 0 else names[::-1]):
            times[name].append(once(name))
    paired = {name: statistics.median(t / p for t, p in zip(times[name], times["hosted"]))
              for name in names}
    for name in names:
        print(f"{name:12s} median {statistics.median(times[name]):.3f} s CPU  "
              f"paired vs hosted {paired[name]:.3f}")
    return {"bench": "live_control_inprocess", "records": args.records, "times": times,
            "paired_vs_hosted": paired}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--part", choices=("overhead", "latency", "inprocess"), required=True)
    parser.add_argument("--records", type=int, default=3_000_000)
    parser.add_argument("--partitions", type=int, default=4)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--pauses", type=int, default=20)
    parser.add_argument("--cluster", action="store_true", help="latency: standalone cluster")
    parser.add_argument("--only", choices=("plain", "hosted", "breakpoint", "global count",
                                           "setup"), help="inprocess: run one variant once")
    args = parser.parse_args()
    result = {"overhead": overhead, "latency": latency, "inprocess": inprocess}[args.part](args)
    if result:
        print(json.dumps(result))


if __name__ == "__main__":
    main()
