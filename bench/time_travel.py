"""Time-travel recording: overhead at 1 and 10 interactions a second, log size, snapshot latency.

The pipeline of ``bench/overhead.py`` (θ = its stateful "running max" operator, so G(θ) is
it, the filter, the map and both sides of the reduceByKey) runs plain and recorded with ``--interact-every 1`` and ``--interact-every 0.1``,
alternating in one process. Prints the medians, the ratios (targets: <= 1.05 and
<= 1.10), the replay-log bytes as a share of θ's input bytes (target: <= 2%) and the
snapshot latency from request to the last report (target: <= 0.5 s).

    .venv/bin/python bench/time_travel.py [--records 3000000] [--repeat 5]
"""
from __future__ import annotations

import repo_paths  # noqa: F401 - this checkout's modules, in the driver and the workers

# isort: split

import json
import os
import statistics

from overhead import plain, prepare, recorded

from icedtea_jupyter.store import layout


def log_bytes(run) -> int:
    """The replay logs, the interactions and the snapshot reports, in bytes."""
    files = [path for _, path in layout.replay_logs(run.path)]
    files += [layout.snapshots_path(run.path), layout.interactions_log_path(run.path),
              layout.interactions_path(run.path)]
    return sum(os.path.getsize(f) for f in files if os.path.exists(f))


def theta_input_bytes(run) -> int:
    metrics = run.metrics()
    return int(metrics[metrics.operator == run.dag.interesting.name].bytes_in.sum())


def main() -> None:
    args, spark, ns, store = prepare(__doc__.splitlines()[0])
    settings = {"plain": None, "1/s": 1.0, "10/s": 0.1}
    theta = "running max"
    plain(ns), recorded(ns, store, interact_every=1.0, interesting=theta)  # warm up
    times = {name: [] for name in settings}
    cpu = {name: [] for name in settings}
    shares, latencies, counts = {}, {}, {}
    for i in range(args.repeat):
        order = list(settings.items()) if i % 2 == 0 else list(settings.items())[::-1]
        for name, every in order:
            if every is None:
                times[name].append(plain(ns))
                cpu[name].append(plain.cpu)
            else:
                times[name].append(recorded(ns, store, interact_every=every,
                                            interesting=theta))
                cpu[name].append(recorded.cpu)
                run = recorded.last_run
                shares.setdefault(name, []).append(log_bytes(run) / theta_input_bytes(run))
                latencies.setdefault(name, []).extend(
                    i.latency for i in run.interactions[1:] if i.latency is not None)
                counts.setdefault(name, []).append(len(run.interactions) - 1)
            print(f"  rep {i + 1} {name:6s} {times[name][-1]:.2f} s", flush=True)
    medians = {name: statistics.median(v) for name, v in times.items()}
    report = {"records": args.records, "medians": medians}
    print(f"records {args.records:,} · partitions {args.partitions} · repetitions {args.repeat}")
    print(f"plain median {medians['plain']:.2f} s")
    for name, target in (("1/s", 1.05), ("10/s", 1.10)):
        ratio = medians[name] / medians["plain"]
        # each repetition's ratio to the plain run beside it: a drifting load cancels out
        paired = statistics.median(r / p for r, p in zip(times[name], times["plain"]))
        cpu_ratio = statistics.median(cpu[name]) / statistics.median(cpu["plain"])
        share = statistics.median(shares[name])
        latency = statistics.median(latencies[name]) if latencies[name] else float("nan")
        worst = max(latencies[name]) if latencies[name] else float("nan")
        ranked = sorted(latencies[name])
        p95 = ranked[int(0.95 * (len(ranked) - 1))] if ranked else float("nan")
        print(f"{name:5s} median {medians[name]:.2f} s · ratio {ratio:.3f} (target <= {target}), "
              f"paired ratio {paired:.3f}, "
              f"Python-worker CPU ratio {cpu_ratio:.3f} · "
              f"{statistics.median(counts[name]):.0f} interactions · log {share:.2%} of θ's "
              f"input bytes (target <= 2%) · snapshot latency median {latency * 1000:.1f} ms, "
              f"p95 {p95 * 1000:.1f} ms, max {worst * 1000:.1f} ms (target <= 500 ms)")
        report[name] = {"ratio": ratio, "paired_ratio": paired, "cpu_ratio": cpu_ratio, "log_share": share, "latency_median": latency,
                        "latency_p95": p95, "latency_max": worst}
    print(json.dumps(report))
    out = os.path.join(os.path.dirname(os.path.abspath(__file__)), "results",
                       f"time_travel_{args.records}.json")
    os.makedirs(os.path.dirname(out), exist_ok=True)
    with open(out, "w", encoding="utf-8") as f:
        json.dump({**report, "times": times, "worker_cpu": cpu, "partitions": args.partitions,
                   "repeat": args.repeat}, f, indent=1)
    spark.stop()


if __name__ == "__main__":
    main()
