"""Built-in agents' overhead (issue 15): each tool alone against the plain run, side by side.

The Python-UDF pipeline of ``overhead.py`` (a map, a stateful ``Operator`` in
mapPartitions, a filter, a map and a reduceByKey over ``--records`` records), plain and
recorded with each tool alone, in the same process and Spark session, in an order
rotating per repetition. Prints, per tool, the ratio of medians and the median of the
paired ratios (each repetition's tool run against its plain run), wall and Python-worker
CPU (target: <= 1.2 each tool).

    .venv/bin/python bench/agents.py [--tool check,latency] [--records 5000000] [--repeat 3]

(from any directory: ``repo_paths`` puts this checkout first, for the workers too)
"""
from __future__ import annotations

import json
import os
import statistics
import sys
import threading
import time

import repo_paths  # noqa: F401 - this checkout's modules, in the driver and the workers

# isort: split

import psutil  # noqa: E402
from overhead import own_daemons, plain, prepare, recorded  # noqa: E402

from icedtea_jupyter.agents.overhead import OverheadAgent  # noqa: E402


def near_max(r):
    """The filter's reference implementation (``--golden``)."""
    return r[1] * 2 > r[2]


TOOLS = {  # tool -> the RunOptions fields that select it
    "recording": {},  # the progress agent and time travel only: the tools' floor
    "tolerate": {"tolerate": 10},
    "check": {"checks": ["near max: row[1] >= 0"]},
    "check-table": {"table_checks": ["near max: sum(1) between 0 and 1e15",
                                     "near max: not_null(0)"]},
    "golden": {"golden": ["near max: near_max"]},  # the default: within its budget
    "golden-1%": {"golden": ["near max: near_max"], "golden_sample": 0.01},
    "golden-all": {"golden": ["near max: near_max"], "golden_sample": 1.0},
    "latency": {"latency_factor": 10.0},
    "overhead": {"agents": [OverheadAgent]},
}


def main() -> None:
    tools = sys.argv.pop(sys.argv.index("--tool") + 1).split(",") if "--tool" in sys.argv \
        else [t for t in TOOLS if t != "recording"]
    sys.argv = [a for a in sys.argv if a != "--tool"]
    args, spark, ns, store = prepare(__doc__.splitlines()[0])
    ns["near_max"] = near_max
    runs = {"plain": lambda: plain(ns)}
    for tool in tools:
        runs[tool] = lambda tool=tool: recorded(ns, store, **TOOLS[tool])
    for run_once in runs.values():  # warm up workers and caches
        run_once()
    times: dict[str, list[float]] = {name: [] for name in runs}
    cpu: dict[str, list[float]] = {name: [] for name in runs}
    others: dict[str, list[dict]] = {name: [] for name in runs}  # kernel, JVM CPU; load
    names = list(runs)
    for i in range(args.repeat):
        order = names[i % len(names):] + names[:i % len(names)]  # rotating
        for name in order:
            before = other_cpu()
            with WorkerCpuSampler() as sampled:
                times[name].append(runs[name]())
            cpu[name].append(sampled.seconds)
            after = other_cpu()
            others[name].append({k: after[k] - before[k] for k in after}
                                | {"load": os.getloadavg()[0]})
            print(f"  rep {i + 1} {name:11s} {times[name][-1]:.2f} s wall, "
                  f"{cpu[name][-1]:.2f} s worker CPU, {others[name][-1]['kernel']:.2f} s "
                  f"kernel, {others[name][-1]['jvm']:.2f} s JVM, load "
                  f"{others[name][-1]['load']:.1f}", flush=True)
    results = [summary(tool, times, cpu) for tool in tools]
    for result in results:
        print(f"{result['tool']}: wall ratio {result['ratio']:.3f} (paired "
              f"{result['paired']:.3f}) · worker CPU ratio {result['cpu_ratio']:.3f} "
              f"(paired {result['paired_cpu']:.3f})")
    print(json.dumps({"bench": "agents", "records": args.records, "repeat": args.repeat,
                      "results": results, "times": times, "cpu": cpu, "others": others}))
    spark.stop()


class WorkerCpuSampler:
    """This process's Python workers' CPU seconds during one run, sampled every
    ``period`` seconds per process (``overhead.worker_cpu_seconds`` reads the daemons'
    totals instead, reaped workers included). A worker is counted from its first sample (from 0 if it
    started during the run) to its last: one that exits loses at most ``period``."""

    def __init__(self, period: float = 0.2) -> None:
        self.period, self.first, self.last = period, {}, {}
        self.stop = threading.Event()

    def _sample(self, started: float) -> None:
        for process in own_daemons():  # this process's workers only
            try:
                times = process.cpu_times()
            except psutil.Error:
                continue
            seconds = times.user + times.system
            if process.pid not in self.first:
                try:
                    new = process.create_time() >= started
                except psutil.Error:
                    continue
                self.first[process.pid] = 0.0 if new else seconds
            self.last[process.pid] = seconds

    def __enter__(self) -> WorkerCpuSampler:
        started = time.time()
        self._sample(started)

        def loop() -> None:
            while not self.stop.wait(self.period):
                self._sample(started)
        self.thread = threading.Thread(target=loop, daemon=True)
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop.set()
        self.thread.join()
        self._sample(0.0)

    @property
    def seconds(self) -> float:
        return sum(self.last[pid] - self.first[pid] for pid in self.last)


def other_cpu() -> dict[str, float]:
    """CPU seconds so far of this process (the kernel side: the coordinator's threads,
    the driver) and of the Spark JVM it started: with the workers', where the cores went."""
    me = psutil.Process()
    jvm = sum(t.user + t.system for t in (c.cpu_times() for c in me.children(recursive=True)
                                          if "java" in c.name()))
    own = me.cpu_times()
    return {"kernel": own.user + own.system, "jvm": jvm}


def summary(tool: str, times: dict, cpu: dict) -> dict:
    """One tool against the plain runs: ratio of medians, median of paired ratios."""
    def ratios(values: dict) -> tuple[float, float]:
        paired = [t / p for t, p in zip(values[tool], values["plain"])]
        return (statistics.median(values[tool]) / statistics.median(values["plain"]),
                statistics.median(paired))
    (ratio, paired), (cpu_ratio, paired_cpu) = ratios(times), ratios(cpu)
    return {"tool": tool, "ratio": ratio, "paired": paired, "cpu_ratio": cpu_ratio,
            "paired_cpu": paired_cpu}


if __name__ == "__main__":
    main()
