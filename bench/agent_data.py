"""The samples and summaries agents' cost: bench/overhead.py's Python-UDF pipeline plain,
recorded (progress agent only), with ``--agent samples``, ``--agent summaries`` and both,
side by side in one process and Spark session, in a rotating order per repetition.

Prints per mode the median wall time and Python-worker CPU time, the ratio of medians
against the plain run and the median of the per-repetition (paired) ratios.
Targets: each agent alone <= 1.2x, both <= 1.1x the plain run.

    .venv/bin/python bench/agent_data.py [--records 5000000] [--repeat 3]

``--in-process N``: instead, bench/per_record.py's hosted chain (a dict-state
``Operator``, a filter, a map) over N records in this process, without Spark, with each
set of agents, interleaved; CPU seconds (``time.process_time``, which other tenants'
load sways far less than wall time) per million records, medians and their ratios
against PySpark's own chain of the same functions.
"""
from __future__ import annotations

import json
import os
import statistics
import sys

import repo_paths  # noqa: F401 - this checkout's modules, in the driver and the workers

# isort: split

from overhead import plain, prepare, recorded  # noqa: E402 - bench/overhead.py's

from icedtea_jupyter.agents.samples import SamplesAgent  # noqa: E402
from icedtea_jupyter.agents.summaries import SummariesAgent  # noqa: E402

MODES = {"recorded": [], "samples": [SamplesAgent], "summaries": [SummariesAgent],
         "both": [SamplesAgent, SummariesAgent]}


def in_process(records: int, repeat: int) -> None:
    import time

    import per_record

    from icedtea_jupyter.executor import host as host_module
    from tests.unit.fakes import RecordingChannel

    channel = RecordingChannel()
    host_module.channel_for = lambda run: channel
    data = per_record.SHAPES["operator"][1](records)
    cpu: dict[str, list[float]] = {m: [] for m in ["plain", "hosted", *MODES]}
    cpu.pop("recorded", None)

    def timed(mode: str) -> float:
        per_record.AGENTS[0] = tuple(MODES.get(mode, ()))
        fn = per_record.plain if mode == "plain" else per_record.hosted
        start = time.process_time()
        fn("operator", data, 0.66)
        return time.process_time() - start
    for i in range(repeat):
        modes = list(cpu)
        for mode in modes[i % len(modes):] + modes[:i % len(modes)]:
            cpu[mode].append(timed(mode) * 1e6 / records)
    base = statistics.median(cpu["plain"])
    print(f"in process: {records:,} records · {repeat} repetitions · load "
          f"{os.getloadavg()[0]:.2f}")
    for mode, values in cpu.items():
        print(f"{mode:9s} {statistics.median(values):.3f} CPU s a million · ratio "
              f"{statistics.median(values) / base:.3f} · to hosted "
              f"{statistics.median(values) / statistics.median(cpu['hosted']):.3f}")
    print(json.dumps({"bench": "agent_data_in_process", "records": records, "cpu": cpu}))


def main() -> None:
    if "--in-process" in sys.argv:
        at = sys.argv.index("--in-process")
        repeat = int(sys.argv[sys.argv.index("--repeat") + 1]) if "--repeat" in sys.argv else 7
        return in_process(int(sys.argv[at + 1]), repeat)
    sys.argv += [] if any(a.startswith("--records") for a in sys.argv) else ["--records",
                                                                            "5000000"]
    args, spark, ns, store = prepare(__doc__.splitlines()[0])
    runs = {"plain": lambda: (plain(ns), plain.cpu)}
    for mode, agents in MODES.items():
        runs[mode] = (lambda agents=agents: (recorded(ns, store, agents=list(agents)),
                                             recorded.cpu))
    for run in runs.values():  # warm up workers and caches
        run()
    times: dict[str, list[float]] = {m: [] for m in runs}
    cpu: dict[str, list[float]] = {m: [] for m in runs}
    names = list(runs)
    for i in range(args.repeat):
        for mode in names[i % len(names):] + names[:i % len(names)]:
            wall, seconds = runs[mode]()
            times[mode].append(wall)
            cpu[mode].append(seconds)
            print(f"  rep {i + 1} {mode:9s} {wall:.2f} s wall, {seconds:.2f} s worker CPU",
                  flush=True)
    report = {"bench": "agent_data", "records": args.records, "times": times, "cpu": cpu,
              "load": os.getloadavg()}
    base, base_cpu = statistics.median(times["plain"]), statistics.median(cpu["plain"])
    print(f"records {args.records:,} · partitions {args.partitions} · repetitions "
          f"{args.repeat} · load {os.getloadavg()[0]:.2f}")
    for mode in names:
        paired = statistics.median(t / p for t, p in zip(times[mode], times["plain"]))
        ratio = statistics.median(times[mode]) / base
        cpu_ratio = statistics.median(cpu[mode]) / base_cpu
        report[mode] = {"ratio": ratio, "paired": paired, "cpu_ratio": cpu_ratio}
        print(f"{mode:9s} median {statistics.median(times[mode]):6.2f} s · ratio {ratio:.3f}"
              f" · paired {paired:.3f} · worker CPU ratio {cpu_ratio:.3f}")
    print(json.dumps(report))
    spark.stop()


if __name__ == "__main__":
    main()
