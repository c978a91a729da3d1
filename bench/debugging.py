"""Post-execution debugging: jump latency per checkpoint plan, checkpoint cost vs τ, steps.

IcedTea's evaluation of jumps and steps (§7.5, §7.6: Figures 20-23, Table 4), on real
recorded runs in one process and one Spark session (local[2]):

1. jump latency to every interaction under the plans none / all / online / offline
   (τ = 1 s): a stateful θ (per-account running sums and a tumbling window of
   per-session counts, a dict state) and two chained Python operators over 200k records
   (Figure 20; target: every jump <= τ under online and offline);
2. checkpoint cost vs τ (0.5 to 20 s) relative to checkpointing every interaction, from
   one measuring pass and the planners (Figure 21);
3. offline vs online checkpoint cost per τ (Figure 22);
4. step latency (step_over / step_into / step_out) on the fraud pipeline scaled to 20k
   payments, and on the pipeline of 1. (target: <= 50 ms a step);
5. step options on 10,000 input records for a chain, a union before θ and two paths
   from θ to a union (Figure 23, Table 4).

    cd bench && PYTHONPATH=.. PYSPARK_PYTHON=../.venv/bin/python ../.venv/bin/python debugging.py [--quick]

Prints a table per measurement, writes results/debugging.json and the charts in images/.
"""
from __future__ import annotations

import repo_paths  # noqa: F401 - this checkout's modules, in the driver and the workers

# isort: split

import argparse
import gc
import json
import os
import shutil
import statistics
import sys
import tempfile
from time import perf_counter, process_time

os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")

from icedtea_jupyter import Operator  # noqa: E402
from icedtea_jupyter.checkpoints.phase import measure  # noqa: E402
from icedtea_jupyter.checkpoints.planner import InfeasiblePlan, make_plan  # noqa: E402
from icedtea_jupyter.examples import fraud  # noqa: E402
from icedtea_jupyter.replay.cursor import StepRefused  # noqa: E402
from icedtea_jupyter.replay.debugger import Debugger  # noqa: E402 - the in-kernel engine: its plans
from icedtea_jupyter.session.execution import RunOptions, start_run  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
PLANS = ("none", "all", "online", "offline")
TAUS = (0.5, 1.0, 2.0, 5.0, 10.0, 20.0)

if __name__ != "__main__":  # imported: ship the operators by value, workers cannot import us
    from pyspark import cloudpickle

    cloudpickle.register_pickle_by_value(sys.modules[__name__])


# --- operators ---------------------------------------------------------------------------
class RunningSums(Operator):
    """θ of 1.: running sum per account (2,000 accounts) and a tumbling window of counts
    per session (up to 25,000 sessions, cleared when the window closes, so the state's
    size rises and falls), with a small scoring loop as per-record work."""

    window = 25_000
    rounds = 300

    def open(self):
        self.sums = {}
        self.sessions = {}
        self.seen = 0

    def process(self, event):
        account, session, amount = event
        score = amount
        for _ in range(self.rounds):
            score = (score * 31 + 7) % 1_000_003
        self.seen += 1
        total = self.sums.get(account, 0) + amount
        self.sums[account] = total
        self.sessions[session] = self.sessions.get(session, 0) + 1
        if self.seen % self.window == 0:
            self.sessions = {}
        yield account, total, score


def event(i):
    return i % 2000, (i * 7919) % 100_003, (i * 31) % 1000


SUMS_PIPELINE = """
kept = (sc.parallelize(range(N), P).map(event)
        .mapPartitions(RunningSums()).setName("sums")
        .map(lambda r: (r[0], r[1] + r[2] % 10)).setName("score")
        .filter(lambda r: r[1] % 3 != 0).setName("keep")
        .count())
"""


class Pairs(Operator):
    """θ of 5.: a running sum per key (100 keys); two outputs per input, flatMap-like."""

    def open(self):
        self.sums = {}

    def process(self, x):
        key = x % 100
        self.sums[key] = self.sums.get(key, 0) + x
        yield key, self.sums[key]
        yield key, -x


SHAPES = {
    "chain": (
        "out = (sc.parallelize(range(N), 2).mapPartitions(Pairs()).setName('theta')\n"
        "       .map(lambda r: (r[0], r[1] * 2)).setName('double')\n"
        "       .filter(lambda r: r[1] % 3 != 0).setName('keep').count())"),
    "union": (
        "left = sc.parallelize(range(N), 2).map(lambda x: x).setName('left')\n"
        "right = sc.parallelize(range(N, 2 * N), 2).map(lambda x: x).setName('right')\n"
        "out = (left.union(right).mapPartitions(Pairs()).setName('theta')\n"
        "       .map(lambda r: (r[0], r[1] * 2)).setName('double')\n"
        "       .filter(lambda r: r[1] % 3 != 0).setName('keep').count())"),
    "two paths": (
        "theta = sc.parallelize(range(N), 2).mapPartitions(Pairs()).setName('theta')\n"
        "plus = theta.map(lambda r: (r[0], r[1] + 1)).setName('plus')\n"
        "minus = theta.map(lambda r: (r[0], r[1] - 1)).setName('minus')\n"
        "out = plus.union(minus).filter(lambda r: r[1] % 3 != 0).setName('keep').count()"),
}
SHAPE_INPUTS = {"chain": 1, "union": 2, "two paths": 1}


# --- helpers -----------------------------------------------------------------------------
def start_session():
    from pyspark.sql import SparkSession

    spark = (SparkSession.builder.master("local[2]").appName("icedtea debugging bench")
             .config("spark.ui.enabled", "false").config("spark.ui.showConsoleProgress", "false")
             .getOrCreate())
    spark.sparkContext.setLogLevel("ERROR")
    return spark


def record(code: str, namespace: dict, store: str, **options):
    options.setdefault("prepare", False)  # this bench measures the in-kernel engine
    run = start_run(code, dict(namespace), RunOptions(store=store, **options))
    run.wait(600)
    if run.status != "finished":
        raise RuntimeError(f"the recorded run failed: {run.error}")
    return run


def stats_ms(seconds: list[float]) -> dict:
    ms = sorted(s * 1000 for s in seconds)
    if not ms:
        return {"n": 0}
    p95 = ms[min(len(ms) - 1, int(round(0.95 * (len(ms) - 1))))]
    return {"n": len(ms), "median_ms": statistics.median(ms), "p95_ms": p95, "max_ms": ms[-1],
            "mean_ms": statistics.fmean(ms), "samples_ms": [s * 1000 for s in seconds]}


class Targets:
    """Every interaction's target on every partition, looked up once through the
    debugger's log reader (``RunLogs.target`` and ``RunLogs.counts``, the two lookups a
    jump makes per partition), with the seconds those lookups took for each interaction."""

    def __init__(self, dbg) -> None:
        logs = dbg.logs
        self.partitions = list(logs.partitions)
        self.by_index, self.lookup_s = [], []
        for k in range(logs.interactions):
            start = perf_counter()
            paths = range(len(logs.paths))
            self.by_index.append({(p, i): logs.target(k, p, i)
                                  for p in self.partitions for i in paths})
            for p in self.partitions:
                for i in paths:
                    logs.counts(k, p, i)
            self.lookup_s.append(perf_counter() - start)

    def running(self) -> list[int]:
        """Interactions at which θ had started and not finished on some partition."""
        return [k for k, targets in enumerate(self.by_index) if k and any(
            0 < t.count and not t.finished for t in targets.values())]


def replay_costs(dbg, targets: Targets) -> list:
    """The library's ``checkpoints.phase.measure`` with every target looked up beforehand
    (the debugger's log reader answers from ``targets`` for the duration): the cost of
    each interaction as replay, checkpoint bytes and restore time only."""
    logs = dbg.logs
    logs.target = lambda index, partition, path=0: targets.by_index[index][(partition, path)]
    try:
        return measure(dbg)
    finally:
        del logs.target


def running_by_time(run, theta: str) -> int:
    """Interactions taken while θ's workers ran, from timestamps alone (cheap)."""
    workers = run.partitions(theta)
    began = min(w["started"] for w in workers if w.get("started"))
    ended = max(w["ended"] for w in workers if w.get("ended"))
    return sum(1 for raw in run.history().raw[1:] if began <= raw["time"] <= ended)


def table(rows: list[list], header: list[str]) -> str:
    cells = [header] + [[str(c) for c in row] for row in rows]
    widths = [max(len(r[i]) for r in cells) for i in range(len(header))]
    line = lambda r: "  ".join(c.rjust(w) if i else c.ljust(w)  # noqa: E731
                               for i, (c, w) in enumerate(zip(r, widths)))
    return "\n".join([line(header), line(["-" * w for w in widths])] + [line(r) for r in cells[1:]])


def say(*text) -> None:
    print(*text, flush=True)


# --- 1. jumps under four plans -----------------------------------------------------------
def record_sums_run(spark, args, store) -> tuple:
    """Plain run then recorded run of the running-sums pipeline, side by side. The
    interval between interactions is first guessed from the plain run, then set from
    how long θ's workers ran; the run is recorded again (at most twice) until about
    ``args.interactions`` interactions land while θ runs."""
    ns = {"sc": spark.sparkContext, "N": args.records, "P": args.partitions, "event": event,
          "RunningSums": RunningSums}
    spark.sparkContext.parallelize(range(100), args.partitions).map(event).count()  # warm up
    start = perf_counter()
    exec(SUMS_PIPELINE, dict(ns))
    plain = perf_counter() - start
    every = max(0.03, 1.3 * plain / args.interactions)
    attempts = []
    for attempt in range(3):
        start = perf_counter()
        run = record(SUMS_PIPELINE, ns, store, interesting="sums", interact_every=every,
                     record_inputs=True)
        recorded = perf_counter() - start
        running = running_by_time(run, "sums")
        metrics = run.metrics()
        theta_seconds = float(metrics[metrics.operator == "sums"].seconds.max())
        total = len(run.history().raw)
        attempts.append({"interact_every": every, "interactions": total, "running": running,
                         "recorded_s": recorded, "theta_worker_s": theta_seconds})
        say(f"  recorded every {every:.3f} s: {total} interactions, {running} while θ ran "
            f"({theta_seconds:.2f} s a worker); recorded run {recorded:.2f} s, plain run "
            f"{plain:.2f} s")
        if 0.75 * args.interactions <= running <= 1.3 * args.interactions or attempt == 2:
            break
        every = max(0.03, every * (max(1, running) / args.interactions) ** 0.5)
        say(f"  recording again, every {every:.3f} s")
    return ns, run, Debugger.for_run(run), {"plain_s": plain, "attempts": attempts}


def jumps(dbg, tau: float, targets: Targets, repeats: int, margin: float) -> dict:
    """For each plan: take its checkpoints, then jump to every interaction in order,
    ``repeats`` passes (one for ``none``, whose jumps are long), timing each jump and the
    garbage collector's pauses inside it. With ``margin`` (< 1), online and offline are
    also planned under ``margin`` × τ and judged against τ."""
    from icedtea_jupyter.checkpoints.planner import InteractionCost, Plan

    results = {}
    n = dbg.logs.interactions
    runs = [(plan, plan, tau) for plan in PLANS]
    if 0 < margin < 1:
        runs += [(f"{plan} @{margin:g}τ", plan, margin * tau) for plan in ("online", "offline")]
    for label, plan, plan_tau in runs:
        start = perf_counter()
        try:
            summary = dbg.take_checkpoints(plan, plan_tau)
        except InfeasiblePlan as exc:
            say(f"  {label}: {exc}")
            results[label] = {"infeasible": str(exc)}
            continue
        taking = perf_counter() - start
        passes = 1 if plan == "none" else repeats
        wall = [[0.0] * passes for _ in range(n)]
        cpu = [[0.0] * passes for _ in range(n)]
        gcs = [[0.0] * passes for _ in range(n)]
        for r in range(passes):
            for k in range(n):
                with GcPauses() as pauses:
                    w, c = perf_counter(), process_time()
                    dbg.jump(k)
                    wall[k][r], cpu[k][r] = perf_counter() - w, process_time() - c
                gcs[k][r] = sum(s for _, s in pauses.pauses)
        history = [InteractionCost(**c) for c in summary["costs"]]
        model = Plan(plan, plan_tau, frozenset(summary["checkpoints"]))
        median = [statistics.median(v) for v in wall]
        everything = [x for v in wall for x in v]
        results[label] = {"plan": plan, "planned_tau": plan_tau,
            "planned_for_s": summary.get("planned_for"),  # the library's replay budget
            "checkpoints": summary["checkpoints"], "bytes_written": summary["bytes_written"],
            "model_cost_bytes": summary["model_cost"],
            "model_max_jump_s": summary["max_jump_seconds"], "checkpointing_s": taking,
            "passes": passes, "jump_s": wall, "jump_cpu_s": cpu, "jump_gc_s": gcs,
            "jump_median_s": median,
            "model_jump_s": [model.jump_seconds(history, k) for k in range(n)],
            "max_s": max(everything), "max_of_medians_s": max(median),
            "median_s": statistics.median(median),
            "jumps": len(everything), "over_tau": sum(x > tau for x in everything),
            "targets_over_tau": sum(x > tau for x in median),
            "max_cpu_s": max(x for v in cpu for x in v),
            "max_gc_s": max(x for v in gcs for x in v),
            "over_tau_without_gc": sum(w - g > tau for wv, gv in zip(wall, gcs)
                                       for w, g in zip(wv, gv))}
        r = results[label]
        say(f"  {label:8s} {len(summary['checkpoints']):3d} checkpoints, "
            f"{summary['bytes_written'] / 1e6:6.2f} MB written in {taking:5.1f} s; "
            f"{r['jumps']} jumps: max {r['max_s']:.3f} s, median {r['median_s']:.3f} s, "
            f"{r['over_tau']} over τ ({r['targets_over_tau']} of {n} targets by their median)")
    return results


def chart_jumps(results: dict, tau: float, lookups: list[float], path: str) -> None:
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7.5, 4.4))
    styles = {"none": "o-", "all": "s-", "online": "^-", "offline": "v-"}
    for plan in PLANS:
        if "jump_s" in results.get(plan, {}):
            values = results[plan]["jump_median_s"]
            passes = results[plan]["passes"]
            label = plan if passes == 1 else f"{plan} (median of {passes})"
            ax.plot(range(len(values)), values, styles[plan], ms=3.5, lw=1.2, label=label)
    if max(lookups) > 0.01:
        ax.plot(range(len(lookups)), lookups, ":", color="grey", lw=1.5,
                label="history lookups alone (in every jump)")
    ax.axhline(tau, ls="--", color="black", lw=1, label=f"τ = {tau:g} s")
    ax.set_yscale("log")
    ax.set_xlabel("interaction k (jump target)")
    ax.set_ylabel("jump latency, wall clock (s, log scale)")
    ax.set_title("Jump latency per checkpoint plan (cf. IcedTea Figure 20a)")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=130)
    plt.close(fig)


# --- 2. and 3. checkpoint cost vs τ ------------------------------------------------------
def cost_vs_tau(costs: list) -> list[dict]:
    rows = []
    for tau in TAUS:
        everything = make_plan("all", costs, tau)
        online = make_plan("online", costs, tau)
        try:
            offline = make_plan("offline", costs, tau)
        except InfeasiblePlan as exc:
            offline, reason = None, str(exc)
        full = everything.cost(costs)
        row = {"tau": tau, "all_bytes": full, "all_checkpoints": len(everything.checkpoints),
               "online_bytes": online.cost(costs), "online_checkpoints": len(online.checkpoints),
               "online_ratio": online.cost(costs) / full,
               "online_max_jump_s": online.max_jump_seconds(costs)}
        if offline is None:
            row.update(offline_bytes=None, offline_infeasible=reason)
        else:
            row.update(offline_bytes=offline.cost(costs),
                       offline_checkpoints=len(offline.checkpoints),
                       offline_ratio=offline.cost(costs) / full,
                       offline_max_jump_s=offline.max_jump_seconds(costs),
                       offline_vs_online=(offline.cost(costs) / online.cost(costs)
                                          if online.cost(costs) else None))
        rows.append(row)
    return rows


SWEEPS = {"measured": "costs from measure()",
          "replay": "replay only (history lookups excluded)"}


def chart_cost(sweeps: dict, path: str) -> None:
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 4.2))
    for name, rows in sweeps.items():
        line = "-" if name == "measured" else "--"
        taus = [r["tau"] for r in rows]
        ax.plot(taus, [r["online_ratio"] for r in rows], "^" + line, color="tab:orange",
                label=f"online, {SWEEPS[name]}")
        shown = [r for r in rows if r["offline_bytes"] is not None]
        ax.plot([r["tau"] for r in shown], [r["offline_ratio"] for r in shown], "v" + line,
                color="tab:blue", label=f"offline, {SWEEPS[name]}")
    ax.set_xscale("log")
    ax.set_xticks(list(TAUS), [f"{t:g}" for t in TAUS])
    ax.set_xlabel("τ (s)")
    ax.set_ylabel("checkpoint bytes / bytes of checkpointing all")
    ax.set_ylim(-0.02, 1.05)
    ax.set_title("Checkpoint cost vs τ (cf. IcedTea Figure 21)")
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=130)
    plt.close(fig)


def chart_offline_online(sweeps: dict, path: str) -> None:
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 4.2))
    width = 0.38
    for i, (name, rows) in enumerate(sweeps.items()):
        xs = [j + (i - (len(sweeps) - 1) / 2) * width for j in range(len(rows))]
        values = [100 * (1 - r["offline_vs_online"]) if r.get("offline_vs_online") is not None
                  else 0.0 for r in rows]
        bars = ax.bar(xs, values, width, label=SWEEPS[name],
                      color="tab:blue" if name == "measured" else "tab:cyan")
        for bar, r in zip(bars, rows):
            text = (f"{r['offline_checkpoints']}/{r['online_checkpoints']}"
                    if r.get("offline_vs_online") is not None
                    else ("infeasible" if r["offline_bytes"] is None else "0/0"))
            ax.annotate(text, (bar.get_x() + bar.get_width() / 2, bar.get_height()),
                        ha="center", va="bottom", fontsize=7)
    ax.set_xticks(range(len(TAUS)), [f"{t:g}" for t in TAUS])
    ax.set_xlabel("τ (s)")
    ax.set_ylabel("cost reduction of offline over online (%)")
    ax.set_title("Offline vs online checkpointing (cf. IcedTea Figure 22)\n"
                 "labels: checkpoints offline/online", fontsize=10)
    ax.grid(True, axis="y", alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=130)
    plt.close(fig)


# --- 4. steps ----------------------------------------------------------------------------
def timed(pauses, gc_seconds: list, fn, *args) -> float:
    """Seconds ``fn(*args)`` took; appends the garbage collector's pauses within it."""
    before = len(pauses.pauses)
    start = perf_counter()
    fn(*args)
    elapsed = perf_counter() - start
    gc_seconds.append(sum(s for _, s in pauses.pauses[before:]))
    return elapsed


def state_sizes(state: dict) -> dict:
    """Entries of each dict-like state variable (a summarised one gives its length)."""
    return {name: (value.get("len") if type(value).__name__ == "Summary" else len(value))
            for name, value in state.items() if isinstance(value, dict)}


class GcPauses:
    """The garbage collector's pauses while it is open (a step that hits a full
    collection of a large heap is slow for reasons outside the debugger)."""

    def __enter__(self):
        self.pauses, self._start = [], None
        gc.callbacks.append(self._callback)
        return self

    def _callback(self, phase, info):
        if phase == "start":
            self._start = perf_counter()
        elif self._start is not None:
            self.pauses.append((info["generation"], perf_counter() - self._start))

    def __exit__(self, *exc):
        gc.callbacks.remove(self._callback)

    def summary(self) -> dict:
        full = [s for g, s in self.pauses if g == 2]
        return {"collections": len(self.pauses), "full": len(full),
                "max_pause_ms": 1000 * max((s for _, s in self.pauses), default=0.0),
                "max_full_pause_ms": 1000 * max(full, default=0.0)}


def steps(dbg, k: int, count: int, outs: int, partitions: list[int] | None = None) -> dict:
    """``count`` step-overs, ``count`` step-intos and ``outs`` step-outs from I_k."""
    with GcPauses() as pauses:
        result = _steps(dbg, k, count, outs, partitions, pauses)
    result["gc"] = pauses.summary()
    return result


def _steps(dbg, k: int, count: int, outs: int, partitions: list[int] | None,
           pauses: GcPauses) -> dict:
    chain = list(dbg.logs.chain)  # θ's pipelined operators (a chain in 4.'s pipelines)
    dbg.jump(k)
    partitions = partitions or [p for p, rows in dbg.pending().items()
                                if rows[chain[0]]["count"] > 3 * count]
    if not partitions:
        raise RuntimeError(f"no partition has {3 * count} records left at I{k}")
    over, into, out = [], [], []
    gc_over, gc_into, gc_out = [], [], []
    i = 0
    while len(over) < count:
        p = partitions[i % len(partitions)]
        i += 1
        if dbg.pending(p, limit=1)[chain[0]]["count"] and p not in dbg.step_options()["refused"]:
            over.append(timed(pauses, gc_over, dbg.step_over, p))
    p = partitions[0]
    while len(into) < count:  # θ takes a record, then each operator its waiting ones
        waiting = dbg.pending(p, limit=1)
        deepest = next((op for op in reversed(chain[1:]) if waiting[op]["count"]), chain[0])
        into.append(timed(pauses, gc_into, dbg.step_into, p, deepest))
    if any(dbg.pending(p, limit=1)[op]["count"] for op in chain[1:]):
        dbg.step_out(p)
    while len(out) < outs:
        dbg.step_into(p, chain[0])
        if not any(dbg.pending(p, limit=1)[op]["count"] for op in chain[1:]):
            continue  # θ emitted nothing: no scope to step out of
        out.append(timed(pauses, gc_out, dbg.step_out, p))
    result = {"interaction": k, "partitions": partitions}
    for name, seconds, gcs in (("step_over", over, gc_over), ("step_into", into, gc_into),
                               ("step_out", out, gc_out)):
        result[name] = stats_ms(seconds)
        result[name]["gc_ms"] = [g * 1000 for g in gcs]
        result[name]["over_50ms_without_gc"] = sum(s - g > 0.05 for s, g in zip(seconds, gcs))
    return result


def fraud_steps(spark, args, store) -> dict:
    payments = fraud.PAYMENTS * args.fraud_repeat
    ns = {name: getattr(fraud, name) for name in ("FeatureEnrichment", "FraudDetector",
                                                  "FraudFilter")}
    ns.update(PAYMENTS=payments, spark=spark)
    run = record(fraud.PIPELINE, ns, store, interesting="enrich", interact_every=0.05,
                 record_inputs=True)
    dbg = Debugger.for_run(run)
    running = Targets(dbg).running()
    if not running:
        raise RuntimeError("no interaction landed while 'enrich' ran; lower interact_every")
    k = running[len(running) // 2]
    counts = {p: dbg.logs.log("enrich", p).records_in if dbg.logs.log("enrich", p) else 0
              for p in dbg.logs.partitions}
    result = steps(dbg, k, args.steps, args.step_outs)
    result.update(payments=len(payments), interactions=dbg.logs.interactions,
                  records_per_partition=counts, chain=dbg.chain)
    dbg.close()
    return result


# --- 5. step options ---------------------------------------------------------------------
def replayed_partitions(dbg, operator: str) -> list[int]:
    if hasattr(dbg, "partitions"):  # newer engines replay stages after θ's own, too
        return dbg.partitions(operator)
    return list(dbg.logs.partitions)


def shape_of(dbg) -> str:
    """What the debugger replays: θ's pipelined operators, one chain per path from θ (each
    its own Spark task), then the stages they feed through the JVM, after ⇒."""
    logs = dbg.logs
    text = " | ".join("→".join(path) for path in logs.paths)  # one Spark task per path
    fed = [name for stage in getattr(logs, "fed", []) for name in stage.names]
    return text + (f" ⇒ {'→'.join(fed)}" if fed else "")


def walk(dbg) -> dict:
    """From I0, step over every θ input on every partition; count the step-overs taken,
    refused, and the records each chained operator processed (its step-into options)."""
    snapshot = dbg.jump(0)
    chain = dbg.chain
    over = refused = 0
    for p in dbg.logs.partitions:
        while dbg.pending(p, limit=1)[chain[0]]["count"]:
            try:
                snapshot = dbg.step_over(p)
                over += 1
            except StepRefused:
                refused += 1
                snapshot = dbg.step_out(p)
    into = {op: sum(snapshot.count(op, q) for q in replayed_partitions(dbg, op))
            for op in chain}
    return {"step_over_options": over, "without_step_over": refused,
            "step_into_options": sum(into.values()), "processed_per_operator": into}


def step_options(spark, args, store) -> dict:
    results = {}
    for shape, code in SHAPES.items():
        ns = {"sc": spark.sparkContext, "N": args.option_records, "Pairs": Pairs}
        every = max(1, args.option_records // 10)
        run = record(code, ns, store, interesting="theta", record_inputs=True,
                     interact_when=f"row % {every} == {every // 2}")
        dbg = Debugger.for_run(run)
        n = dbg.logs.interactions
        running = Targets(dbg).running()
        k = running[len(running) // 2] if running else n // 2
        noted = {i: dbg.jump(i).notes for i in range(n)}  # does every jump match the run?
        noted = {i: notes for i, notes in noted.items() if notes}
        snapshot = dbg.jump(k)
        at_k = dbg.step_options()
        pending = {p: {op: v["count"] for op, v in rows.items()}
                   for p, rows in dbg.pending().items()}
        p = next((p for p, rows in pending.items() if rows.get("theta")), None)
        after = None
        if p is not None:
            dbg.step_into(p, "theta")
            after = dbg.step_options()
        start = perf_counter()
        totals = walk(dbg)
        walking = perf_counter() - start
        metrics = run.metrics()
        processed = {op: int(metrics[metrics.operator == op].records_in.sum())
                     for op in sorted(set(metrics.operator))}
        outside = sorted(n.name for n in run.dag.g_theta
                         if n.kind == "python" and n.name not in dbg.chain)
        chains = {task: chain for task, chain in run.snapshot(k).task_chains().items()}
        results[shape] = {
            "input_records": args.option_records * SHAPE_INPUTS[shape],
            "interactions": n, "interaction": k, "chain": dbg.chain, "replayed": shape_of(dbg),
            "outside_chain": outside, "partitions": dbg.logs.partitions,
            "pending_at_k": pending, "options_at_k": at_k,
            "after_step_into_theta": {"partition": p, "options": after},
            "jump_notes": snapshot.notes, "walk": totals, "walk_s": walking,
            "records_in_per_operator": processed, "recorded_task_chains_at_k": chains,
            "jumps_with_notes": len(noted), "notes_by_interaction": noted}
        say(f"  {shape:9s} replays {shape_of(dbg)}; not replayed: "
            f"{', '.join(outside) or 'none'}; at I{k}: {at_k['step_over']} step-over, "
            f"{at_k['step_into']} step-into; after one step_into(θ) on partition {p}: "
            f"{after['step_over'] if after else '-'} step-over, "
            f"{after['step_into'] if after else '-'} step-into, "
            f"{len(after['refused']) if after else 0} refused; whole run: "
            f"{totals['step_over_options']} step-overs, {totals['without_step_over']} refused, "
            f"{totals['step_into_options']} step-intos ({walking:.1f} s)")
        if noted:
            first = min(noted)
            say(f"    {len(noted)} of {n} jumps carry divergence notes, e.g. I{first}: "
                f"{noted[first][0]}")
        dbg.close()
    return results


# --- main --------------------------------------------------------------------------------
def library_state() -> dict:
    """The commit measured and the library files changed on top of it (the checkout is
    shared with ongoing work)."""
    import subprocess

    def git(*argv: str) -> str:
        try:
            return subprocess.run(["git", *argv], cwd=HERE, capture_output=True, text=True,
                                  timeout=10).stdout.strip()
        except (OSError, subprocess.SubprocessError):
            return ""

    return {"commit": git("rev-parse", "HEAD"),
            "changed": git("status", "--short", "--", "../icedtea_jupyter").splitlines()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a small smoke size (< 2 min)")
    parser.add_argument("--records", type=int, default=200_000)
    parser.add_argument("--partitions", type=int, default=2)
    parser.add_argument("--interactions", type=int, default=28)
    parser.add_argument("--tau", type=float, default=1.0)
    parser.add_argument("--jump-repeats", type=int, default=3)
    parser.add_argument("--margin", type=float, default=0.0,
                        help="also plan online/offline under margin × τ (0: do not)")
    parser.add_argument("--steps", type=int, default=200)
    parser.add_argument("--step-outs", type=int, default=50)
    parser.add_argument("--fraud-repeat", type=int, default=1250)  # 16 × 1250 = 20,000
    parser.add_argument("--option-records", type=int, default=10_000)
    parser.add_argument("--output", default=os.path.join(HERE, "results", "debugging.json"))
    parser.add_argument("--images", default=os.path.join(HERE, "images"))
    args = parser.parse_args()
    if args.quick:
        args.records, args.interactions, args.steps, args.step_outs = 24_000, 10, 50, 10
        args.jump_repeats = 2
        args.fraud_repeat, args.option_records = 250, 2_000
    os.makedirs(os.path.dirname(args.output), exist_ok=True)
    os.makedirs(args.images, exist_ok=True)
    began = perf_counter()
    load = [os.getloadavg()]
    spark = start_session()
    store = tempfile.mkdtemp(prefix="icedtea-bench-debugging-")
    report = {"bench": "debugging", "quick": args.quick, "cores": os.cpu_count(),
              "tau": args.tau, "library": library_state()}
    try:
        say(f"1. jumps: {args.records:,} records, {args.partitions} partitions, "
            f"θ = 'sums' → 'score' → 'keep', τ = {args.tau:g} s")
        ns, run, dbg, setup = record_sums_run(spark, args, store)
        targets = Targets(dbg)
        costs = measure(dbg)  # the library's measuring pass, once (2. and 3. use it)
        full = sum(c.replay_seconds for c in costs)
        lookups = sum(targets.lookup_s)
        sweeps = {"measured": cost_vs_tau(costs)}
        if lookups > 0.05 * full:  # the measured replay times are mostly history lookups
            pure = replay_costs(dbg, targets)
            sweeps["replay"] = cost_vs_tau(pure)
        setup.update(records=args.records, partitions=args.partitions,
                     interactions=dbg.logs.interactions, running=targets.running(),
                     chain=dbg.chain, full_replay_s=full, lookup_s=targets.lookup_s,
                     state_bytes_max=max(c.checkpoint_bytes for c in costs),
                     mean_gap_s=full / max(1, len(costs) - 1))
        say(f"  {dbg.logs.interactions} interactions; replay from I0 to the end {full:.2f} s "
            f"(measure()); finding an interaction's targets in the recorded history "
            f"{min(targets.lookup_s) * 1000:.1f}-{max(targets.lookup_s) * 1000:.1f} ms a jump")
        results = jumps(dbg, args.tau, targets, args.jump_repeats, args.margin)
        chart_jumps(results, args.tau, targets.lookup_s,
                    os.path.join(args.images, "jump_latency.png"))
        rows = [[plan, len(r["checkpoints"]), f"{r['bytes_written'] / 1e6:.2f}",
                 "-" if r["planned_for_s"] is None else f"{r['planned_for_s']:.2f}", r["jumps"],
                 f"{r['max_s']:.3f}", f"{r['max_of_medians_s']:.3f}", f"{r['median_s']:.3f}",
                 r["over_tau"], r["targets_over_tau"], f"{r['model_max_jump_s']:.3f}",
                 f"{r['max_cpu_s']:.3f}", f"{r['max_gc_s']:.3f}", r["over_tau_without_gc"]]
                if "jump_s" in r else [plan, "infeasible"] + [""] * 12
                for plan, r in results.items()]
        say(table(rows, ["plan", "ckpts", "MB", "budget s", "jumps", "max s", "max median s",
                         "median s",
                         "jumps > τ", "targets > τ", "model max s", "max CPU s",
                         "max GC s", "> τ minus GC"]))
        report["jumps"] = {"setup": setup, "plans": results}

        say("\n2./3. checkpoint cost vs τ (one measuring pass, the planners)")
        chart_cost(sweeps, os.path.join(args.images, "checkpoint_cost_vs_tau.png"))
        chart_offline_online(sweeps, os.path.join(args.images, "offline_vs_online.png"))
        for name, sweep in sweeps.items():
            say(f"  {SWEEPS[name]}:")
            say(table([[f"{r['tau']:g}", r["all_checkpoints"], r["online_checkpoints"],
                        f"{r['online_ratio']:.3f}",
                        r.get("offline_checkpoints", "infeasible"),
                        f"{r['offline_ratio']:.3f}" if r["offline_bytes"] is not None else "-",
                        f"{r['offline_vs_online']:.3f}"
                        if r.get("offline_vs_online") is not None else "-"] for r in sweep],
                      ["τ s", "all", "online", "online/all", "offline", "offline/all",
                       "offline/online"]))
        report["cost_vs_tau"] = {"costs": [vars(c) for c in costs], "sweeps": sweeps}
        if "replay" in sweeps:
            report["cost_vs_tau"]["costs_replay_only"] = [vars(c) for c in pure]

        say("\n4. steps")
        # θ's window of sessions fills up to RunningSums.window keys and empties: step
        # from the interaction where it is closest to half full (a typical state), with
        # room for every step before it closes
        count = max(10, args.steps // 4)
        inputs = {p: dbg.logs.log("sums", p).records_in for p in targets.partitions}
        window = RunningSums.window
        need = 3 * count + 2 * max(5, args.step_outs // 5) + 10
        room = [(abs(t.count % window - window // 2), k, p) for k in targets.running()
                for (p, _), t in targets.by_index[k].items()
                if not t.finished and inputs[p] - t.count > need
                and window - t.count % window > need]
        _, k, p = min(room)
        state_before = state_sizes(dbg.jump(k).state("sums", p))
        sums_steps = steps(dbg, k, count, max(5, args.step_outs // 5), [p])
        sums_steps["state_keys_before"] = state_before
        sums_steps["state_keys_after"] = state_sizes(dbg.state("sums", p))
        dbg.close()
        fraud_result = fraud_steps(spark, args, store)
        say(table([[name, kind, r[kind]["n"], f"{r[kind]['median_ms']:.2f}",
                    f"{r[kind]['p95_ms']:.2f}", f"{r[kind]['max_ms']:.2f}",
                    sum(x > 50 for x in r[kind]["samples_ms"]),
                    r[kind]["over_50ms_without_gc"]]
                   for name, r in (("fraud", fraud_result), ("running sums", sums_steps))
                   for kind in ("step_over", "step_into", "step_out")],
                  ["pipeline", "step", "n", "median ms", "p95 ms", "max ms", "> 50 ms",
                   "> 50 ms minus GC"]))
        for name, r in (("fraud", fraud_result), ("running sums", sums_steps)):
            say(f"  {name}: from I{r['interaction']}, partitions {r['partitions']}; garbage "
                f"collections during the steps: {r['gc']['collections']} "
                f"({r['gc']['full']} full, longest pause {r['gc']['max_pause_ms']:.1f} ms)")
        say(f"  running sums: θ's state on partition {p} at I{k}: {state_before} keys "
            f"(after the steps {sums_steps['state_keys_after']})")
        report["steps"] = {"fraud": fraud_result, "running_sums": sums_steps}

        say(f"\n5. step options on {args.option_records:,} records per source")
        report["step_options"] = step_options(spark, args, store)
        say(table([[shape, r["replayed"], ", ".join(r["outside_chain"]) or "-",
                    r["input_records"], f"I{r['interaction']}",
                    r["options_at_k"]["step_over"], r["options_at_k"]["step_into"],
                    (r["after_step_into_theta"]["options"] or {}).get("step_over", "-"),
                    len((r["after_step_into_theta"]["options"] or {}).get("refused", {})),
                    r["walk"]["step_over_options"], r["walk"]["without_step_over"],
                    r["walk"]["step_into_options"]]
                   for shape, r in report["step_options"].items()],
                  ["shape", "replayed", "not replayed", "inputs", "at", "over", "into",
                   "over after into(θ)", "refused", "run: over", "no over", "run: into"]))
    finally:
        spark.stop()
        shutil.rmtree(store, ignore_errors=True)
    load.append(os.getloadavg())
    report["load_average"] = load
    report["library_at_end"] = library_state()
    report["seconds"] = perf_counter() - began
    with open(args.output, "w", encoding="utf-8") as out:
        json.dump(report, out, indent=1, default=str)
    say(f"\ntotal {report['seconds']:.0f} s; load average at start {load[0][0]:.1f}, "
        f"at end {load[1][0]:.1f}; wrote {os.path.relpath(args.output)} and charts in "
        f"{os.path.relpath(args.images)}/")


if __name__ == "__main__":
    main()
