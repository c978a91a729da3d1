"""Spark Connect sessions: the DataFrame Python operators run in the Connect server's
Python workers and report to the kernel's coordinator like a classic session's; what
needs a classic session says so. One local Connect server for the module."""
import re

import pytest

from icedtea_jupyter.instrument.connect import NeedsClassicSession
from icedtea_jupyter.session.connect import NO_OPERATOR_WARNING

pytestmark = pytest.mark.spark

ROWS, BATCH = 600, 50  # two partitions of 300 rows: six batches each

MAP_IN_PANDAS = """
import time
def running(batches):
    total, seen = 0.0, 0
    for pdf in batches:
        time.sleep(0.02)
        total += float(pdf.v.sum())
        seen += len(pdf)
        yield pdf.assign(total=total)
df = spark.range(0, ROWS, 1, 2).selectExpr("id", "CAST(id AS DOUBLE) / 2 AS v")
out = sorted(df.mapInPandas(running, "id long, v double, total double").collect())
"""


@pytest.fixture(scope="module")
def batches_of(connect_spark):
    key = "spark.sql.execution.arrow.maxRecordsPerBatch"
    before = connect_spark.conf.get(key)
    connect_spark.conf.set(key, str(BATCH))
    yield BATCH
    connect_spark.conf.set(key, before)


def plain(code, spark, **names):
    """The cell run without icedtea, on the same session: its namespace."""
    ns = {"spark": spark, **names}
    exec(code, ns)
    return ns


def oracle(partition, rows):
    """θ's state after the first ``rows`` rows of ``partition``: v is id / 2."""
    start = partition * ROWS // 2
    return {"total": sum(i / 2 for i in range(start, start + rows)), "seen": rows}


def test_map_in_pandas_over_connect_records_progress_snapshots_and_time_travel(
        record_connect, connect_spark, batches_of):
    run = record_connect(MAP_IN_PANDAS, {"ROWS": ROWS},
                         interact_when="int(row.id.iloc[0]) % 150 == 0",
                         prepare=False)  # the debugger regenerates θ's inputs when asked
    assert run.status == "finished", run.error
    assert run.manifest["session"] == "connect" and run.warnings == []
    assert run.namespace["out"] == plain(MAP_IN_PANDAS, connect_spark, ROWS=ROWS)["out"]
    metrics = run.metrics().set_index(["operator", "partition"])
    for p in (0, 1):
        assert tuple(metrics.loc[("running", p), ["records_in", "records_out"]]) == (300, 300)
    assert [i.trigger for i in run.interactions] == ["initial"] + ["condition"] * 4
    assert_condition_scopes(run, "running")
    for interaction in run.interactions:
        snapshot = run.snapshot(interaction.index)
        for p in (0, 1):
            if snapshot.status("running", p) in ("running", "finished"):
                rows = interaction.counts[("running", p)]
                assert kept(snapshot.state("running", p)) == oracle(p, rows), (interaction, p)

    key = "spark.sql.execution.arrow.maxRecordsPerBatch"
    connect_spark.conf.set(key, str(2 * BATCH))  # changed since the run: pinned back for it
    dbg = run.debugger()
    for interaction in run.interactions:
        jumped, recorded = dbg.jump(interaction.index), run.snapshot(interaction.index)
        for p in (0, 1):
            if recorded.status("running", p) in ("running", "finished"):
                assert kept(jumped.state("running", p)) == kept(recorded.state("running", p))
        assert not jumped.notes, jumped.notes
    assert set(dbg.inputs.source.values()) == {"regenerated"}  # over Connect, one query
    assert dbg.inputs.pinned == {key: (str(2 * BATCH), str(BATCH))}
    assert connect_spark.conf.get(key) == str(2 * BATCH)  # and restored
    seen = dbg.jump(1).state("running", 1)["seen"]  # θ's next batch, stepped over
    assert kept(dbg.step_over(1).state("running", 1)) == oracle(1, seen + BATCH)


def kept(state):
    return {key: state[key] for key in ("total", "seen")}


def assert_condition_scopes(run, theta):
    """Each condition interaction (ids 0, 150, 300, 450 start a batch) comes after the
    whole batch that met it: θ has processed its partition's rows up to that batch's end."""
    firsts = []
    for interaction in run.interactions[1:]:
        first = int(re.search(r"^0\s+(\d+)", interaction.record["repr"], re.M).group(1))
        partition = first // (ROWS // 2)
        assert interaction.counts[(theta, partition)] == first % (ROWS // 2) + BATCH
        firsts.append(first)
    assert sorted(firsts) == [0, 150, 300, 450]


UDFS = """
import time
from pyspark.sql.functions import col, pandas_udf, udf

def make_plus_one():
    calls = 0
    def plus_one(x):
        nonlocal calls
        calls += 1
        return x + 1
    return plus_one

def make_halve():
    rows = 0
    def halve(s):
        nonlocal rows
        time.sleep(0.05)
        rows += len(s)
        return s / 2
    return halve

plus_one, halve = udf(make_plus_one(), "long"), pandas_udf(make_halve(), "double")
df = spark.range(0, ROWS, 1, 2)
out = sorted(df.select("id", plus_one(col("id")).alias("a"), halve(col("id")).alias("b"))
             .collect())
"""


def test_udf_and_pandas_udf_over_connect_record_progress_and_snapshots(
        record_connect, connect_spark, batches_of):
    run = record_connect(UDFS, {"ROWS": ROWS}, interesting="halve", interact_every=0.1)
    assert run.status == "finished", run.error
    assert run.namespace["out"] == plain(UDFS, connect_spark, ROWS=ROWS)["out"]
    metrics = run.metrics().set_index(["operator", "partition"])
    for name, p in [(name, p) for name in ("plus_one", "halve") for p in (0, 1)]:
        assert tuple(metrics.loc[(name, p), ["records_in", "records_out"]]) == (300, 300)
    assert {("range", "plus_one"), ("range", "halve"), ("halve", "select")} <= set(run.dag.edges)
    assert len(run.interactions) >= 3
    middles = 0
    for interaction in run.interactions:  # a scalar pandas UDF's state: its closure
        snapshot = run.snapshot(interaction.index)
        for p in (0, 1):
            rows = interaction.counts[("halve", p)]
            if snapshot.status("halve", p) in ("running", "finished"):
                assert snapshot.state("halve", p)["rows"] == rows, (interaction, p)
                assert rows % BATCH == 0  # between two batches
                middles += 0 < rows < ROWS // 2
    assert middles  # some interactions caught a partition half done
    assert [run.final_state("halve", p)["rows"] for p in (0, 1)] == [ROWS // 2] * 2
    dbg = run.debugger()  # a pandas UDF θ's calls, regenerated over Connect
    for interaction in run.interactions:
        jumped, recorded = dbg.jump(interaction.index), run.snapshot(interaction.index)
        for p in (0, 1):
            if recorded.status("halve", p) in ("running", "finished"):
                assert jumped.state("halve", p)["rows"] == recorded.state("halve", p)["rows"]
    assert set(dbg.inputs.source.values()) == {"regenerated"}


GROUPED = """
import pyarrow.compute as pc
df = spark.createDataFrame([(k % 3, float(k)) for k in range(30)], "k long, v double")
def halves(batches):
    for batch in batches:
        yield batch.set_column(1, "v", pc.divide(batch.column("v"), 2))
def centre(pdf):
    return pdf.assign(v=pdf.v - pdf.v.mean())
out = sorted(df.mapInArrow(halves, df.schema).groupBy("k")
             .applyInPandas(centre, "k long, v double").collect())
"""


def test_map_in_arrow_and_apply_in_pandas_over_connect_count_rows(record_connect,
                                                                   connect_spark):
    run = record_connect(GROUPED)
    assert run.status == "finished", run.error
    assert run.namespace["out"] == plain(GROUPED, connect_spark)["out"]
    totals = run.metrics().groupby("operator")[["records_in", "records_out"]].sum()
    assert tuple(totals.loc["halves"]) == (30, 30)
    assert tuple(totals.loc["centre"]) == (30, 30)  # 30 rows in, in 3 groups
    assert ("halves", "groupBy") in run.dag.edges


@pytest.mark.parametrize(("code", "feature"), [
    ("out = spark.range(10).rdd.map(lambda r: r.id).collect()", "DataFrame.rdd"),
    ("sc = spark.sparkContext\nout = sc.parallelize([1, 2]).collect()", "spark.sparkContext"),
])
def test_rdd_features_say_they_need_a_classic_session(record_connect, connect_spark, code,
                                                      feature):
    run = record_connect(code)
    assert run.status == "failed"
    assert run.error["exception"] == "NeedsClassicSession"
    message = run.error["message"]
    assert message.startswith(f"{feature} needs a classic SparkSession")
    assert "mapInPandas, mapInArrow, applyInPandas" in message  # what does work
    assert NO_OPERATOR_WARNING not in run.warnings  # refused: its error says why
    with pytest.raises(Exception) as outside:  # outside a recording cell: PySpark's own
        exec(code, {"spark": connect_spark})
    assert "classic SparkSession" not in str(outside.value)


def test_lineage_and_a_cell_without_python_operators_are_explained(record_connect):
    run = record_connect("out = spark.range(10).filter('id > 3').count()", lineage=True)
    assert run.status == "finished", run.error
    assert run.namespace["out"] == 6
    assert any(w.startswith("--lineage: this run records no lineage. Lineage (capture and "
                            "traces) needs a classic SparkSession") for w in run.warnings)
    assert NO_OPERATOR_WARNING in run.warnings
    with pytest.raises(NeedsClassicSession, match=r"^Lineage \(run.trace_back, trace_forward\)"
                       r" needs a classic SparkSession"):
        run.trace_back(6)


def test_reuse_on_connect_runs_the_cell_and_says_it_needs_a_classic_session(record_connect):
    cell = "out = spark.range(10).filter('id > 3').count()"
    first = record_connect(cell, cell_id="c")
    again = record_connect(cell, cell_id="c", reuse=True)
    assert first.status == again.status == "finished", (first.error, again.error)
    assert again.namespace["out"] == 6 and again.reused_from is None
    assert again.results == []  # nothing intercepted, nothing answered from a store
    [note] = [w for w in again.warnings if w.startswith("--reuse:")]
    assert "every action of this cell runs on Spark" in note
    assert "Reuse of stored results (--reuse) needs a classic SparkSession" in note
    assert not any(w.startswith("--reuse:") for w in first.warnings)
