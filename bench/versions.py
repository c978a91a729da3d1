"""Versions and reuse (issue 16): a reused answer's latency, fingerprinting's cost.

1. A cell whose action returns a 1M-row result (``toPandas`` of a DataFrame, and an
   RDD's ``collect``) is recorded once, then again with ``--reuse``: the action's time
   in the cell is measured in both (budget: the reused answer in <= 0.2 s).
2. A cell of ten operators (RDD: six Python operators and four structural ones; and a
   DataFrame of ten transformations) is recorded; the tracker's own clock gives the
   seconds the cell waited for fingerprints (its sinks at each action, every node at the
   end; budget <= 0.05 s), and the seconds its background thread spent fingerprinting
   the sinks while the actions' jobs ran (without ``--reuse``).
3. With ``--reuse``, the DataFrame cell of ten transformations: what the action waits for
   before Spark runs (its quick keys and the store's search), when no earlier run is
   equivalent (a constant changed each run) and when one is (answered from the store);
   and, interleaved in one process, Spark's tree strings (the quick keys) against its
   JSON plans (the exact fingerprint) for that plan.

    .venv/bin/python bench/versions.py [--rows 1000000] [--repeat 5] [--reuse-only]
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

os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")

from pyspark.sql import SparkSession  # noqa: E402

from icedtea_jupyter.session.execution import RunOptions, start_run  # noqa: E402

TIMED = "import time\n_t = time.perf_counter()\n{action}\nSECONDS = time.perf_counter() - _t\n"
PANDAS = "out = spark.range(ROWS, numPartitions=4).selectExpr('id', 'id % 97 AS k').toPandas()"
COLLECT = "out = sc.parallelize(range(ROWS), 4).map(lambda x: x * 3).collect()"
RDD_TEN = """
out = (sc.parallelize(DATA, 4).map(lambda x: (x % 13, x)).filter(lambda kv: kv[1] > 3)
       .mapValues(lambda v: v * 2).flatMap(lambda kv: [kv, kv]).keyBy(lambda kv: kv[0])
       .values().repartition(4).map(lambda kv: (kv[0], kv[1] + 1))
       .reduceByKey(lambda a, b: a + b).sortByKey().collect())
"""
FRAME_TEN = """
from pyspark.sql import functions as F
df = spark.createDataFrame([(i, i % 7, float(i)) for i in range(2000)], 'a long, b long, c double')
out = (df.filter('a > 10').withColumn('d', F.col('c') * 2).select('a', 'b', 'd')
       .filter('b < 5').withColumnRenamed('d', 'e').where('e > 30').groupBy('b')
       .agg(F.sum('e').alias('s'), F.count('*').alias('n')).orderBy('b').limit(10)
       .collect())
"""


def record(code: str, namespace: dict, store: str, **options: object) -> dict:
    run = start_run(code, namespace, RunOptions(store=store, wait=True, **options))
    run.wait(600)
    assert run.status == "finished", run.error
    return {"run": run, "seconds": namespace.get("SECONDS"),
            "fingerprint": run.manifest.get("fingerprint_seconds"),
            "background": run.manifest.get("fingerprint_background_seconds"),
            "search": run.manifest.get("reuse_search_seconds")}


def reuse_latency(spark: SparkSession, action: str, rows: int, repeat: int) -> dict:
    store = tempfile.mkdtemp(prefix="icedtea-bench-versions-")
    base = {"spark": spark, "sc": spark.sparkContext, "ROWS": rows}
    code = TIMED.format(action=action)
    first = record(code, dict(base), store, cell_id="bench")
    answered = []
    for _ in range(repeat):
        again = record(code, dict(base), store, cell_id="bench", reuse=True)
        assert again["run"].reused_from == first["run"].id, (first["run"].results,
                                                             again["run"].results)
        answered.append(again["seconds"])
    return {"computed": first["seconds"], "reused median": statistics.median(answered),
            "reused max": max(answered),
            "stored bytes": first["run"].results[0]["bytes"]}


def fingerprint_cost(spark: SparkSession, code: str, repeat: int) -> dict:
    store = tempfile.mkdtemp(prefix="icedtea-bench-versions-")
    base = {"spark": spark, "sc": spark.sparkContext, "DATA": list(range(20_000))}
    runs = [record(code, dict(base), store) for _ in range(repeat)]
    costs = [r["fingerprint"] for r in runs]
    return {"operators": len(runs[0]["run"].dag.operators),
            "median seconds": statistics.median(costs), "max seconds": max(costs),
            "background median": statistics.median(r["background"] for r in runs)}


def reuse_wait(spark: SparkSession, repeat: int) -> dict:
    """Seconds a --reuse action waits before Spark runs or the store answers."""
    store = tempfile.mkdtemp(prefix="icedtea-bench-versions-")
    base = {"spark": spark, "sc": spark.sparkContext}
    changed = [record(FRAME_TEN.replace("'a > 10'", f"'a > {10 + i}'"), dict(base), store,
                      cell_id="changed", reuse=True)["search"] for i in range(repeat)]
    same = [record(FRAME_TEN, dict(base), store, cell_id="same", reuse=True)
            for _ in range(repeat + 1)]
    assert all(r["run"].reused_from for r in same[1:])
    answered = [r["search"] for r in same[1:]]
    return {"changed median": statistics.median(changed), "changed max": max(changed),
            "answered median": statistics.median(answered), "answered max": max(answered)}


def plan_digests(spark: SparkSession, repeat: int) -> dict:
    """The quick keys against the exact fingerprint of one plan, interleaved."""
    from icedtea_jupyter.versions import plans
    from icedtea_jupyter.versions.quick import quick_keys

    namespace = {"spark": spark}
    exec(FRAME_TEN.replace(".collect()", ""), namespace)
    df = namespace["out"]
    quick, exact = [], []
    for _ in range(repeat):
        began = time.perf_counter()
        quick_keys(df, {})
        quick.append(time.perf_counter() - began)
        began = time.perf_counter()
        plans.plan_fingerprint(plans.analyzed(df), {})
        plans.tree(__import__("json").loads(
            df._jdf.queryExecution().analyzed().canonicalized().toJSON()))
        exact.append(time.perf_counter() - began)
    return {"quick": statistics.median(quick), "exact": statistics.median(exact),
            "ratio": statistics.median(e / q for e, q in zip(exact, quick))}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--fingerprints-only", action="store_true")
    parser.add_argument("--reuse-only", action="store_true")
    args = parser.parse_args()
    spark = (SparkSession.builder.master("local[2]").appName("bench versions")
             .config("spark.ui.enabled", "false").config("spark.ui.showConsoleProgress", "false")
             .config("spark.sql.shuffle.partitions", "4").getOrCreate())
    spark.sparkContext.setLogLevel("ERROR")
    if args.reuse_only:
        digests = plan_digests(spark, 5 * args.repeat)
        print(f"plan digests, DataFrame of 10 transformations: quick keys (tree strings) "
              f"median {digests['quick'] * 1000:.1f} ms, exact and canonical plans (JSON) "
              f"median {digests['exact'] * 1000:.1f} ms; median paired ratio "
              f"{digests['ratio']:.1f}x")
        waits = reuse_wait(spark, args.repeat)
        print(f"--reuse, DataFrame cell of 10 transformations, waited before Spark ran: no "
              f"equivalent run: median {waits['changed median'] * 1000:.1f} ms, max "
              f"{waits['changed max'] * 1000:.1f} ms; answered from the store: median "
              f"{waits['answered median'] * 1000:.1f} ms, max "
              f"{waits['answered max'] * 1000:.1f} ms")
        spark.stop()
        return
    reused = () if args.fingerprints_only else (("toPandas", PANDAS), ("RDD collect", COLLECT))
    for name, action in reused:
        result = reuse_latency(spark, action, args.rows, args.repeat)
        print(f"reuse, {args.rows:,} rows, {name}: computed {result['computed']:.3f} s; "
              f"answered from the store: median {result['reused median']:.3f} s, max "
              f"{result['reused max']:.3f} s; {result['stored bytes']:,} bytes stored")
    for name, code in (("RDD", RDD_TEN), ("DataFrame", FRAME_TEN)):
        result = fingerprint_cost(spark, code, args.repeat)
        print(f"fingerprints, {name} cell of {result['operators']} DAG nodes: median "
              f"{result['median seconds'] * 1000:.1f} ms, max {result['max seconds'] * 1000:.1f} ms "
              f"waited; {result['background median'] * 1000:.1f} ms in the background")
    spark.stop()


if __name__ == "__main__":
    main()
