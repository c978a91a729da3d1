"""Driver program for the off-host cluster tests (``offhost_cluster_driver.py MASTER
NOTEBOOK [SCENARIO ...]``): records pipelines on a standalone cluster whose worker may
not see the notebook's folder NOTEBOOK (its run store is under it), checks each run the
way a user would, against plain Python, and prints one JSON line.

Scenarios: ``lineage`` (a word count traced back and forward), ``skew`` (a skewed
reduceByKey's heavy keys), ``inputs`` (--record-inputs, jumps), ``checkpoint``
(--checkpoint all, jumps), ``refused`` (every artifact refused by the coordinator).
"""
import json
import os
import random
import sys
import time
import traceback
from collections import Counter
from operator import add

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, REPO)

from pyspark import cloudpickle  # noqa: E402
from pyspark.sql import SparkSession  # noqa: E402

from icedtea_jupyter.session.execution import RunOptions, start_run  # noqa: E402
from icedtea_jupyter.store import layout  # noqa: E402

PARTITIONS = 3
RARE = "zzrare"


def text(n=900, seed=3):
    """Lines of words; RARE in three of them, each of those lines unique."""
    rng = random.Random(seed)
    vocab = ["spark"] * 6 + ["the", "a", "cat", "dog", "fast", "slow", "sat", "ran"]
    lines = [" ".join(rng.choice(vocab) for _ in range(rng.randrange(1, 8))) for _ in range(n)]
    for i in (17, 450, 899):
        lines[i] = f"{RARE} line{i} spark"
    return lines


def skewed_events(n=20_000, hot=0.4, keys=300, seed=7):
    rng = random.Random(seed)
    return [("hot" if rng.random() < hot else f"u{rng.randrange(keys)}", rng.randrange(100))
            for _ in range(n)]


class Total:
    """θ: the running total of the records it saw (slow enough for interactions)."""

    def __init__(self):
        self.total, self.seen = 0, 0

    def __call__(self, x):
        time.sleep(0.002)
        self.total += x
        self.seen += 1
        return x


def rows(frame):
    return [[row[0], int(row[1]), int(row[2]), _plain(row[3])]
            for row in frame.itertuples(index=False)]


def _plain(value):
    return list(value) if isinstance(value, tuple) else value


def record(spark, store, code, names, **options):
    ns = {"sc": spark.sparkContext, "add": add, **names}
    run = start_run(code, ns, RunOptions(store=store, **options))
    run.wait(300)
    return run, ns


def common(run):
    """What every scenario reports: the run's end, what each host found of the store,
    the artifacts that came over the control channel, the alerts."""
    return {"status": run.status, "error": run.error, "warnings": run.warnings,
            "hosts": run.manifest.get("hosts", {}),
            "received": dict(run.coordinator.inbox.received),
            "alerts": list(run.alerts()["message"])}


def lineage(spark, store):
    lines = text()
    parts = spark.sparkContext.parallelize(lines, PARTITIONS).glom().collect()  # plain Spark
    code = ("counts = (sc.parallelize(LINES, 3).flatMap(lambda l: l.split()).setName('split')"
            ".map(lambda w: (w, 1)).setName('pair').reduceByKey(add, 2).setName('sum')"
            ".collect())")
    run, ns = record(spark, store, code, {"LINES": lines}, lineage=True)
    exact = Counter(word for line in lines for word in line.split())
    out = dict(common(run), counts=sorted(map(list, ns.get("counts") or [])),
               exact=sorted(map(list, exact.items())))
    started = time.monotonic()
    back = run.trace_back((RARE, exact[RARE]))
    out["back"] = [r for r in rows(back.to_pandas()) if r[0] == "parallelize"]
    out["back_expected"] = [["parallelize", p, i, line] for p, part in enumerate(parts)
                            for i, line in enumerate(part) if RARE in line.split()]
    line = out["back_expected"][1][3]
    forward = run.trace_forward(line)
    out["forward"] = sorted(r[3] for r in rows(forward.to_pandas()))
    out["forward_expected"] = sorted([w, exact[w]] for w in set(line.split()))
    out["trace_seconds"] = time.monotonic() - started
    out["lineage_files"] = len(list(layout.lineage_files(run.path)))
    return out


def skew(spark, store):
    events = skewed_events()
    code = ("totals = (sc.parallelize(EVENTS, 4).map(lambda e: (e[0], e[1])).setName('by user')"
            ".reduceByKey(add, 4).setName('sum').collect())")
    run, _ = record(spark, store, code, {"EVENTS": events}, skew=True)
    s = run.skew("sum")
    exact = Counter(k for k, _ in events)
    keys = [[k, int(c)] for k, c in zip(s.keys["key"], s.keys["count"])]
    return dict(common(run), keys=keys, error=int(s.error), n=int(s.keys_sketch.n),
                exact={k: exact[k] for k, _ in keys}, events=len(events),
                skew_files=len(list(layout.skew_files(run.path))))


def jumps(spark, store, **options):
    code = "out = sc.parallelize(range(1200), 4).map(total).setName('total').sum()"
    run, ns = record(spark, store, code, {"total": Total()}, interesting="total",
                     interact_every=0.3, **options)
    dbg = run.debugger()
    equal = []
    for k in range(1, len(run.interactions)):
        snapshot, jumped = run.snapshot(k), dbg.jump(k)
        for p in range(4):
            if snapshot.state("total", p) is not None:
                equal.append(jumped.state("total", p) == snapshot.state("total", p))
    dbg.close()
    out = dict(common(run), out=ns.get("out"), interactions=len(run.interactions),
               jumps_equal=equal, checkpoints=len(list(layout.checkpoints(run.path))))
    if options.get("record_inputs"):
        node = run.dag.node("total").id
        out["recorded"] = [run.store.recorded_inputs(node, p) == list(range(p * 300, p * 300 + 300))
                           for p in range(4)]
    return out


REFUSED = "refused by the test"


def refused(spark, store):
    """A --lineage --skew word count whose coordinator refuses every artifact (as a full
    or unwritable store would): what the run, the trace and the skew report say."""
    from icedtea_jupyter.coordinator.artifacts import ArtifactInbox
    from icedtea_jupyter.lineage.tables import NoLineage

    def refuse(self, key, message, body):
        raise OSError(REFUSED)

    take, ArtifactInbox._take = ArtifactInbox._take, refuse
    try:
        code = ("counts = (sc.parallelize(LINES, 3).flatMap(lambda l: l.split())"
                ".setName('split').map(lambda w: (w, 1)).setName('pair')"
                ".reduceByKey(add, 2).setName('sum').collect())")
        run, ns = record(spark, store, code, {"LINES": text()}, lineage=True, skew=True)
    finally:
        ArtifactInbox._take = take
    try:
        run.trace_back((RARE, 3))
        no_lineage = None
    except NoLineage as exc:
        no_lineage = str(exc)
    report = run.skew("sum")
    return dict(common(run), no_lineage=no_lineage, skew_warnings=report.warnings,
                keys=len(report.keys), counts=len(ns.get("counts") or []))


SCENARIOS = {"lineage": lineage, "skew": skew, "refused": refused,
             "inputs": lambda spark, store: jumps(spark, store, record_inputs=True),
             "checkpoint": lambda spark, store: jumps(spark, store, checkpoint="all")}


def main(master, notebook, names):
    spark = (SparkSession.builder.master(master).appName("icedtea-offhost")
             .config("spark.driver.host", "127.0.0.1")
             .config("spark.executor.cores", "2").config("spark.cores.max", "2")
             .config("spark.executorEnv.PYTHONPATH", REPO)
             .config("spark.ui.enabled", "false").getOrCreate())
    spark.sparkContext.setLogLevel("ERROR")
    store = os.path.join(notebook, layout.DEFAULT_ROOT)
    results = {}
    for name in names:
        started = time.monotonic()
        try:
            results[name] = SCENARIOS[name](spark, store)
        except Exception:  # the others still run; the test shows this one's traceback
            results[name] = {"exception": traceback.format_exc()}
        results[name]["seconds"] = time.monotonic() - started
    print(json.dumps(results, default=str))
    spark.stop()


if __name__ == "__main__":
    cloudpickle.register_pickle_by_value(sys.modules[__name__])
    main(sys.argv[1], sys.argv[2], sys.argv[3:] or list(SCENARIOS))
