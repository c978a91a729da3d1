"""Skew (--skew): heavy keys and their reduce partitions against exact counts, the skew
test, advice, and s.mitigate() on skewed pipelines."""
import random
import time
from collections import Counter

import pytest

from icedtea_jupyter.comm.skew import default_operator
from icedtea_jupyter.skew import MitigationRefused
from tests.waiting import wait_until

pytestmark = pytest.mark.spark


def skewed_events(n=20_000, hot=0.4, keys=300, seed=7):
    rng = random.Random(seed)
    return [("hot" if rng.random() < hot else f"u{rng.randrange(keys)}", rng.randrange(100))
            for _ in range(n)]


EVENTS = skewed_events()
AGGREGATION = """
totals = (sc.parallelize(EVENTS, 8).map(lambda e: (e[0], e[1])).setName("by user")
            .reduceByKey(add, 4).setName("sum").collect())
"""


def spark_partitions(sc, keys, partitions):
    """Where Spark's own partitionBy sends each key (the job's partitioner)."""
    pairs = sc.parallelize([(k, None) for k in keys], 2).partitionBy(partitions)
    return dict(pairs.mapPartitionsWithIndex(lambda i, it: [(k, i) for k, _ in it]).collect())


def check_against_exact(s, exact, where):
    assert s.keys_sketch.n == sum(exact.values())
    assert s.error <= s.keys_sketch.sketch.bound()
    for key, count, part in zip(s.keys["key"], s.keys["count"], s.keys["partition"]):
        assert exact[key] - s.error <= count <= exact[key], key
        assert part == where[key], key


def test_heavy_keys_of_a_skewed_reduce_by_key_and_their_reduce_partitions(record, sc):
    from operator import add

    run = record(AGGREGATION, {"EVENTS": EVENTS, "add": add}, skew=True)
    assert run.status == "finished", run.error
    s = run.skew("sum")
    exact = Counter(k for k, _ in EVENTS)
    where = spark_partitions(sc, list(exact), 4)
    assert s.keys["key"].iloc[0] == "hot" and len(s.keys) == 20
    check_against_exact(s, exact, where)
    hot = where["hot"]
    parts = s.partitions
    assert list(parts["partition"]) == [0, 1, 2, 3]
    assert parts["key_records"].sum() == pytest.approx(len(EVENTS))
    assert parts.set_index("partition")["key_records"][hot] > 0.4 * len(EVENTS)
    flagged = s.skewed
    assert set(flagged["partition"]) == {hot} and "reshape" in set(flagged["rule"])
    advice = s.advice
    assert advice[0].remedy == "salt" and advice[0].shrink > 0.3
    assert "Salt(HEAVY, 4)" in advice[0].code and ".reduceByKey(add)" in advice[0].code
    spec = s.chart().to_dict()
    assert spec["params"][0]["name"] == "partition" and spec["$schema"].endswith("v5.20.1.json")
    assert s.estimated == 0  # 2,500 records a map partition: every key counted
    heat = s.heatmap().to_dict()
    rows = next(iter(heat["datasets"].values()))
    assert {r["operator"] for r in rows} == {"by user", "sum (combine)", "sum"}
    assert sum(r["records_in"] for r in rows if r["operator"] == "by user") == len(EVENTS)
    # the same report from the map side's name, and from the store after a restart
    assert run.skew("sum (combine)").operator == "sum"
    from icedtea_jupyter import open_run

    again = open_run(run.path).skew("sum")
    assert again.keys.equals(s.keys)


def test_without_skew_there_are_loads_but_no_keys(record):
    from operator import add

    run = record(AGGREGATION, {"EVENTS": EVENTS, "add": add})
    s = run.skew("sum")
    assert s.keys.empty and "key_records" not in s.partitions
    assert s.partitions["records"].sum() > 0 and s.rules.load == "records"
    with pytest.raises(KeyError, match="no operator 'nope'"):
        run.skew("nope")


JOIN = """
joined = (sc.parallelize(EVENTS, 4).join(sc.parallelize(USERS, 2), 3)
            .setName("enrich").collect())
"""


def test_heavy_keys_of_a_skewed_join_count_both_sides(record, sc):
    users = [(k, f"name of {k}") for k in sorted({k for k, _ in EVENTS})]
    run = record(JOIN, {"EVENTS": EVENTS, "USERS": users}, skew=True)
    assert run.status == "finished", run.error
    s = run.skew("enrich")
    exact = Counter(k for k, _ in EVENTS) + Counter(k for k, _ in users)
    check_against_exact(s, exact, spark_partitions(sc, list(exact), 3))
    assert s.keys["key"].iloc[0] == "hot"
    assert {a.remedy for a in s.advice} >= {"broadcast", "skew_join"}
    assert s.advice[0].remedy == "broadcast"  # 301 users against 20,000 events


PARTITIONED = """
sizes = (sc.parallelize(EVENTS, 4){before}.partitionBy(3).setName("by key")
           .mapPartitions(lambda rows: [sum(1 for _ in rows)]).collect())
"""


@pytest.mark.parametrize("before", ["", ".map(lambda e: e)"], ids=["source", "after θ"])
def test_heavy_keys_of_a_user_partition_by_and_the_advice_that_spreads_them(record, sc,
                                                                            before):
    run = record(PARTITIONED.format(before=before), {"EVENTS": EVENTS}, skew=True)
    assert run.status == "finished", run.error
    s = run.skew("by key")
    exact = Counter(k for k, _ in EVENTS)
    check_against_exact(s, exact, spark_partitions(sc, list(exact), 3))
    assert s.keys["key"].iloc[0] == "hot"
    assert s.partitions["records"].tolist() == run.namespace["sizes"]
    assert default_operator(run) == "by key"  # the sidebar's Skew view opens on it
    advice = s.advice[0]
    assert advice.remedy == "own_partitions" and advice.shrink > 0.2
    # the advised partitioner, run: its heaviest partition is what the advice said
    code = advice.code.splitlines()
    scope = {"portable_hash": __import__("pyspark").rdd.portable_hash}
    exec("\n".join(code[:-1]), scope)
    spread = eval("sc.parallelize(EVENTS, 4)" + code[-1], dict(scope, sc=sc, EVENTS=EVENTS))
    assert max(spread.glom().map(len).collect()) == advice.after


THETA_AFTER_PARTITION_BY = """
class Count:
    def __init__(self):
        self.n = 0
    def __call__(self, rows):
        for row in rows:
            self.n += 1
            yield row[0], self.n
out = sc.parallelize(EVENTS, 4).partitionBy(3).mapPartitions(Count()).setName("count").collect()
"""


def test_jumps_through_an_operator_after_a_counted_partition_by_equal_the_run(record):
    run = record(THETA_AFTER_PARTITION_BY, {"EVENTS": EVENTS}, skew=True,
                 interesting="count", interact_every=0.05)
    assert run.status == "finished", run.error
    assert run.skew("partitionBy").keys["key"].iloc[0] == "hot"
    dbg = run.debugger()
    last = len(run.interactions) - 1
    for k in sorted({0, last // 2, last}):
        jumped, recorded = dbg.jump(k), run.snapshot(k)
        for q in (w["partition"] for w in run.partitions("count")):
            assert jumped.state("count", q) == recorded.state("count", q), (k, q)
    dbg.close()


FRAME_JOIN = """
events = spark.createDataFrame(EVENTS, "user string, amount long")
users = spark.createDataFrame(USERS, "user string, name string")
if BROADCAST:
    from pyspark.sql.functions import broadcast
    users = broadcast(users)
out = events.join(users, {on}).groupBy("name").count().collect()
"""


@pytest.mark.parametrize("on,broadcast", [('"user"', False),
                                          ("events.user == users.user", False),
                                          ('"user"', True)],
                         ids=["on a name", "on a condition", "broadcast"])
def test_heavy_keys_of_a_dataframe_join_are_counted_by_spark(record, spark, on, broadcast):
    from pyspark.sql import functions as F

    from icedtea_jupyter import open_run

    users = [(k, f"name of {k}") for k in sorted({k for k, _ in EVENTS})]
    threshold = spark.conf.get("spark.sql.autoBroadcastJoinThreshold")
    spark.conf.set("spark.sql.autoBroadcastJoinThreshold", "-1")  # AQE: no late broadcast
    try:
        run = record(FRAME_JOIN.format(on=on),
                     {"EVENTS": EVENTS, "USERS": users, "BROADCAST": broadcast}, skew=True)
    finally:
        spark.conf.set("spark.sql.autoBroadcastJoinThreshold", threshold)
    assert run.status == "finished", run.error
    if broadcast:
        with pytest.raises(ValueError, match="BroadcastHashJoin: Spark shuffled neither"):
            run.skew("join")
        return
    s = run.skew("join")
    exact = Counter(k for k, _ in EVENTS) + Counter(k for k, _ in users)
    keys = spark.createDataFrame([(k,) for k in exact], "user string")
    where = dict(keys.repartition(4, "user").select("user", F.spark_partition_id()).collect())
    check_against_exact(s, exact, where)  # Spark's own shuffle partition of each key
    assert s.keys["key"].iloc[0] == "hot" and s.api == "DataFrame.join"
    assert s.timeline.empty and "after the run" in s.timeline_note
    loads = Counter()
    for key, count in exact.items():
        loads[where[key]] += count
    assert s.partitions.set_index("partition")["records"].to_dict() == \
        {p: loads[p] for p in range(4)}
    assert [a.remedy for a in s.advice] == ["broadcast", "skew_join"]
    assert "F.broadcast(right)" in s.advice[0].code
    assert open_run(run.path).skew("join").keys.equals(s.keys)  # kept in the store


def test_a_join_adaptive_execution_made_a_broadcast_at_run_time_says_so(record, spark):
    users = [(k, f"name of {k}") for k in sorted({k for k, _ in EVENTS})]
    names = ("spark.sql.autoBroadcastJoinThreshold",
             "spark.sql.adaptive.autoBroadcastJoinThreshold")
    saved = {name: spark.conf.get(name, None) for name in names}
    spark.conf.set(names[0], "-1")  # planned as a sort-merge join (no size known ahead)
    spark.conf.set(names[1], "10MB")  # AQE broadcasts the users once it has measured them
    try:
        run = record(FRAME_JOIN.format(on='"user"'),
                     {"EVENTS": EVENTS, "USERS": users, "BROADCAST": False}, skew=True)
    finally:
        for name, value in saved.items():
            spark.conf.unset(name) if value is None else spark.conf.set(name, value)
    assert run.status == "finished", run.error
    with pytest.raises(ValueError, match="BroadcastHashJoin: Spark's adaptive execution "
                                         "chose it at run time"):
        run.skew("join")


GROUPED = """
import pandas as pd
frame = spark.createDataFrame(EVENTS, "user string, amount long")
def total(key, rows):
    return pd.DataFrame({"user": [key[0]], "total": [int(rows["amount"].sum())]})
out = frame.groupBy("user").applyInPandas(total, "user string, total long").collect()
"""


FRAME_ONLY = """
import pandas as pd
from pyspark.sql.functions import col
frame = spark.createDataFrame(EVENTS, "user string, amount long")
def total(rows):
    return pd.DataFrame({"user": [rows["user"].iloc[0]], "total": [int(rows["amount"].sum())]})
out = frame.groupBy(col("user")).applyInPandas(total, "user string, total long").collect()
"""


# grouped by a computed expression: no column of the group's frame holds its key
COMPUTED = FRAME_ONLY.replace('groupBy(col("user"))', 'groupBy(upper(col("user")))').replace(
    "import col", "import col, upper").replace('rows["user"].iloc[0]',
                                               'rows["user"].iloc[0].upper()')


@pytest.mark.parametrize("code", [GROUPED, FRAME_ONLY, COMPUTED],
                         ids=["key-and-frame", "frame-only", "frame-only-computed-key"])
def test_heavy_groups_of_a_dataframe_group_by_with_a_pandas_function(record, spark, code):
    """Each group's key comes from Spark, also for a function of the frame alone and a
    key computed by the groupBy (the host takes it; the function gets the frame)."""
    upper = "upper(" in code
    run = record(code, {"EVENTS": EVENTS}, skew=True)
    assert run.status == "finished", run.error
    s = run.skew("total")
    exact = Counter(k.upper() if upper else k for k, _ in EVENTS)
    grouped = spark.createDataFrame(EVENTS, "user string, amount long")
    if upper:
        grouped = grouped.selectExpr("upper(user) as user")
    rows = (grouped.groupBy("user").count()
            .selectExpr("user", "spark_partition_id() as p").collect())
    where = {r["user"]: r["p"] for r in rows}
    keys = s.keys.assign(key=lambda f: f["key"].map(lambda k: k[0]))
    assert keys["key"].iloc[0] == ("HOT" if upper else "hot")
    assert run.namespace["out"] and {r["user"] for r in run.namespace["out"]} == set(exact)
    for key, count, part in zip(keys["key"], keys["count"], keys["partition"]):
        assert count == exact[key] and part == where[key]
    # AQE coalesced the small shuffle into one partition: salting the hot group cannot
    # make the heaviest (only) partition lighter, so it is not advised, and it says why
    # (tests/unit/test_skew.py checks the salting advice and its code over partitions)
    assert list(s.loads()) == [0]
    assert [a.remedy for a in s.advice] == ["none"]
    assert s.advice[0].why.startswith("salt would not make the heaviest partition (0, ")


def test_mitigate_splits_the_heavy_key_and_keeps_the_answer(record):
    from operator import add

    run = record(AGGREGATION, {"EVENTS": EVENTS, "add": add}, skew=True)
    s = run.skew("sum")
    fixed = s.mitigate()
    assert fixed.status == "finished", fixed.error
    assert fixed.mitigation["same_result"] is True and fixed.mitigation["compared"] == ["totals"]
    assert sorted(fixed.namespace["totals"]) == sorted(run.namespace["totals"])
    after = fixed.skew("sum")
    before_top = s.partitions["key_records"].max()
    assert after.partitions["key_records"].max() < 0.7 * before_top
    assert after.skewed.empty or set(after.skewed["partition"]) != set(s.skewed["partition"])
    assert s.compare(after).to_dict()["hconcat"]


def test_mitigate_refuses_a_non_associative_aggregation_and_a_join(record):
    cell = AGGREGATION.replace("add, 4", "lambda a, b: a - b, 4")
    run = record(cell, {"EVENTS": EVENTS}, skew=True)
    with pytest.raises(MitigationRefused, match="not associative"):
        run.skew("sum").mitigate()
    users = [("hot", "h")]
    joined = record(JOIN, {"EVENTS": EVENTS[:200], "USERS": users}, skew=True)
    with pytest.raises(MitigationRefused, match="is a join"):
        joined.skew("enrich").mitigate()


SORTED_GROUPS = """
import pandas as pd
frame = spark.createDataFrame(EVENTS, "user string, amount long")
def total(key, rows):
    return pd.DataFrame({"user": [key[0]], "total": [int(rows["amount"].sum())]})
out = (frame.groupBy("user").applyInPandas(total, "user string, total long")
       .orderBy("total").toPandas())
"""


def test_keys_count_once_when_a_sort_samples_the_grouped_function_first(record, spark):
    """``orderBy`` samples its input in a job of its own first, which runs the
    ``applyInPandas`` once more: each key still counts its records once."""
    run = record(SORTED_GROUPS, {"EVENTS": EVENTS}, skew=True)
    assert run.status == "finished", run.error
    jobs = {w["stage"] for w in run._worker_states()
            if w["operator"] == run.dag.node("total").id}
    assert len(jobs) >= 2  # the sort's sampling job and the real one both ran it
    s = run.skew("total")
    exact = Counter(k for k, _ in EVENTS)
    keys = s.keys.assign(key=lambda f: f["key"].map(lambda k: k[0]))
    assert s.keys_sketch.n == len(EVENTS)
    for key, count in zip(keys["key"], keys["count"]):
        assert count == exact[key], key
    assert s.partitions["records"].sum() == len(EVENTS)


def test_metrics_and_progress_count_a_function_a_sort_reran_once(record, spark):
    """The sort's sampling job and the real job both ran ``total``: ``run.metrics()``,
    ``run.progress()`` and ``run.skew`` count each partition once (the last job's)."""
    run = record(SORTED_GROUPS, {"EVENTS": EVENTS}, skew=True)
    assert run.status == "finished", run.error
    users = len({k for k, _ in EVENTS})
    metrics = run.metrics().set_index("operator").loc[["total"]]
    assert (metrics["stages"] >= 2).any()  # a partition that both jobs ran
    assert metrics["records_in"].sum() == len(EVENTS)
    assert metrics["records_out"].sum() == users == len(run.namespace["out"])
    progress, = [row for row in run.progress() if row["operator"] == "total"]
    assert (progress["records_in"], progress["records_out"]) == (len(EVENTS), users)
    assert progress["done"] == len(metrics)
    per_partition = run.skew("total").partitions.set_index("partition")["records"]
    assert metrics.set_index("partition")["records_in"].to_dict() == per_partition.to_dict()


SLOW_AGGREGATION = """
import time
def slow(e):
    time.sleep(0.0004)
    return e
totals = (sc.parallelize(EVENTS, 8).map(slow).setName("by user")
            .reduceByKey(add, 4).setName("sum").collect())
"""


def test_a_frontend_gets_the_live_view_pushed_as_changed_rows(record):
    """While a --skew run records, an open frontend is sent its skew view (skew.changed):
    the whole report, then changed rows only, which put together give growing counts of
    the hot key; asking for another operator switches the pushes to it."""
    from operator import add

    from icedtea_jupyter.comm import target
    from tests.unit.fakes import FakeComm

    target.watch_runs()
    comm = FakeComm()
    target._on_open(comm, {})
    from icedtea_jupyter.session import registry

    asked: list = []

    def follow(run):
        def ask_for_by_user(kind, data):  # once "sum" showed the hot key: pick "by user"
            if kind == "skew" and not asked and len(hot_counts(comm, "sum")) >= 2 \
                    and hot_counts(comm, "sum")[-1] > 0:
                asked.append(comm.send_request("skew.report", run=run.id, operator="by user"))
        run.subscribe(ask_for_by_user)

    registry.on_added(follow)
    run = record(SLOW_AGGREGATION, {"EVENTS": EVENTS, "add": add}, skew=True)
    asked.append(None)  # later runs' sketches ask nothing
    assert run.status == "finished", run.error
    pushed = [e for e in comm.events("skew.changed") if e["run"] == run.id]
    comm.close()  # every event conformed to the schema
    reports = [e for e in pushed if e["report"] is not None]
    assert reports and reports[0]["report"]["live"]
    by_operator = [e["operator"] for e in reports]
    assert by_operator[-1] == "by user" and "sum" in by_operator
    hot = hot_counts(comm, "sum")
    assert len(hot) >= 2 and hot == sorted(hot) and 0 < hot[-1] <= Counter(
        k for k, _ in EVENTS)["hot"]
    # while the reduce side waits, the load over time is the map side's (the stage running)
    titles = [e["report"]["timeline"]["title"]["text"] if isinstance(
        e["report"]["timeline"]["title"], dict) else e["report"]["timeline"]["title"]
        for e in reports if e["operator"] == "sum"]
    assert "sum (combine): records in over time (live)" in titles, titles
    # each push says when the oldest sketch it is the first to carry left its worker
    since = [e["since"] for e in pushed if e["since"] is not None]
    assert len(since) >= 2 and all(0 < time.time() - t < run.duration + 10 for t in since)


def hot_counts(comm, operator):
    """The hot key's count in each skew.changed event of ``operator`` that has keys."""
    counts = []
    for event in list(comm.events("skew.changed")):
        if event["operator"] != operator:
            continue
        keys = event["report"]["keys"] if event["report"] else event["changes"].get("keys")
        if keys is not None:
            counts.append(next((k["count"] for k in keys if k["key"] == "'hot'"), 0))
    return counts


def test_the_load_over_time_of_each_partition_live_and_from_the_store(record):
    """run.skew(op).timeline: each partition's records in so far at the same moments,
    rising to the partition's total; the same after a restart; the chart names the
    partitions and, pushed live, grows as the map side runs."""
    from operator import add

    from icedtea_jupyter import open_run
    from icedtea_jupyter.comm import target
    from icedtea_jupyter.session import registry
    from tests.unit.fakes import FakeComm

    target.watch_runs()
    comm = FakeComm()
    target._on_open(comm, {})
    asked: list = []

    def follow(run):
        def ask_for_by_user(kind, data):  # the map side's view, pushed while it runs
            if kind == "skew" and not asked:
                asked.append(comm.send_request("skew.report", run=run.id, operator="by user"))
        run.subscribe(ask_for_by_user)

    registry.on_added(follow)
    run = record(SLOW_AGGREGATION, {"EVENTS": EVENTS, "add": add}, skew=True)
    asked.append(None)
    assert run.status == "finished", run.error
    pushed = [e for e in comm.events("skew.changed")
              if e["run"] == run.id and e["operator"] == "by user"]
    comm.close()  # every event conformed to the schema
    live_points = [p for e in pushed for p in (
        next(iter(e["report"]["timeline"]["datasets"].values())) if e["report"]
        else e["changes"]["timeline"])]
    assert len({p["seconds"] for p in live_points}) >= 2, pushed
    assert max(p["records"] for p in live_points) > 0

    s = run.skew("by user")
    timeline = s.timeline
    totals = s.partitions.set_index("partition")["records"]
    assert set(timeline["partition"]) == set(totals.index) == set(range(8))
    moments = sorted(set(timeline["seconds"]))
    assert 0 < moments[0] and moments[-1] <= run.duration + 1.0
    for partition, rows in timeline.groupby("partition"):
        rows = rows.sort_values("seconds")
        assert len(rows) == len(moments)  # every partition at the same moments
        assert rows["records"].is_monotonic_increasing
        assert rows["records"].iloc[-1] == totals[partition]
    assert len(moments) >= 3  # 20,000 records at 0.4 ms: several reports a task
    spec = s.timeline_chart().to_dict()
    series = {p["series"] for p in next(iter(spec["datasets"].values()))}
    assert series == {f"partition {p}" for p in range(8)}  # 8 partitions: all named
    assert s.timeline_note == "" and s.timeline_operator == "by user"
    # final, an aggregation shows the side that took in records over the longer time:
    # here its map side (0.4 ms a record) rather than its reduce side (a few ms)
    final = run.skew("sum")
    assert final.timeline_operator == "sum (combine)"
    assert set(final.timeline["partition"]) == set(range(8))
    again = open_run(run.path).skew("by user")
    assert again.timeline.equals(timeline)


REPARTITIONED = """
import pandas as pd
frame = spark.createDataFrame(EVENTS, "user string, amount long")
def tag(batches):
    for pdf in batches:
        yield pdf.assign(amount=pdf.amount * 2)
out = frame.mapInPandas(tag, "user string, amount long").repartition(4, "user").collect()
"""


HELD_AFTER_JVM_STAGE = """
import pandas as pd
frame = spark.createDataFrame(EVENTS, "user string, amount long")
def tag(batches):
    for pdf in batches:
        yield pdf.assign(amount=pdf.amount * 2)
def held(batches):
    GATE.wait("held")
    yield from batches
out = (frame.mapInPandas(tag, "user string, amount long").repartition(4, "user")
       .groupBy("user").count().repartition(3, "count")
       .mapInPandas(held, "user string, count long").collect())
"""


def test_a_jvm_stage_has_loads_while_the_run_records(spark, tmp_path, gate):
    """The stage that counts the repartitioned events per user runs no Python; while the
    run is held after it, run.skew("stage N") has its partitions' records (the events it
    read) from Spark's status store, and the live view lists it."""
    from icedtea_jupyter.comm.skew import live_report, report_json
    from icedtea_jupyter.session.execution import RunOptions, start_run

    rows = (spark.createDataFrame(EVENTS, "user string, amount long")  # before the run:
            .repartition(4, "user").selectExpr("spark_partition_id() as p")  # its held
            .groupBy("p").count().collect())  # tasks take both of Spark's task slots
    exact = {r["p"]: r["count"] for r in rows}
    run = start_run(HELD_AFTER_JVM_STAGE, {"spark": spark, "EVENTS": EVENTS, "GATE": gate},
                    RunOptions(store=str(tmp_path / "runs"), skew=True))
    try:
        wait_until(lambda: gate.held(), 120, "the held operator's workers")
        s = run.skew("tag")
        assert s.live and len(s.jvm_stages) == 1, s.jvm_stages
        stage = run.skew(s.jvm_stages[0])
        assert stage.live
        assert stage.partitions.set_index("partition")["records"].to_dict() == exact
        assert set(stage.skewed["partition"]) == {max(exact, key=exact.get)}
        wait_until(lambda: s.jvm_stages[0] in report_json(
            run, live_report(run, "held"))["operators"], 10, "the live view's stages")
    finally:
        gate.open()
    run.wait(120)
    assert run.status == "finished", run.error
    final = run.skew(s.jvm_stages[0]).partitions  # the live loads were the final ones
    assert final.equals(stage.partitions[list(final.columns)])


def test_a_jvm_stage_has_loads_per_partition_from_spark(record, spark):
    """The stage after repartition(4, "user") runs no Python: its tasks' records come
    from Spark's status store when the run ends, kept in stages.parquet, and
    run.skew("stage N") tests and charts them like an operator's."""
    import pandas as pd

    from icedtea_jupyter import open_run

    run = record(REPARTITIONED, {"EVENTS": EVENTS})
    assert run.status == "finished", run.error
    s = run.skew("tag")
    assert len(s.jvm_stages) == 1, s.jvm_stages
    stage = run.skew(s.jvm_stages[0])
    rows = (spark.createDataFrame(EVENTS, "user string, amount long").repartition(4, "user")
            .selectExpr("spark_partition_id() as p").groupBy("p").count().collect())
    exact = {r["p"]: r["count"] for r in rows}
    loads = stage.partitions.set_index("partition")["records"].to_dict()
    assert loads == exact and sum(loads.values()) == len(EVENTS)
    hot = max(exact, key=exact.get)
    assert set(stage.skewed["partition"]) == {hot}
    assert stage.advice[0].remedy == "repartition"
    assert (stage.partitions["seconds"] >= 0).all() and stage.partitions["bytes"].sum() > 0
    cells = pd.DataFrame(next(iter(s.heatmap().to_dict()["datasets"].values())))
    jvm = cells[cells["operator"] == f"{s.jvm_stages[0]} (JVM)"]
    assert jvm.set_index("partition")["records_in"].to_dict() == exact
    with pytest.raises(KeyError, match=f"JVM stages from Spark's status store: "
                                       f"'{s.jvm_stages[0]}'"):
        run.skew("stage 999")
    stored = pd.read_parquet(f"{run.path}/stages.parquet")  # the user's own pandas
    assert {"stage", "partition", "status", "records", "bytes", "seconds"} <= set(stored)
    again = open_run(run.path).skew(s.jvm_stages[0])
    assert again.partitions.equals(stage.partitions)
