"""Time travel on DataFrame pipelines: mapInPandas and mapInArrow as θ, a record a batch."""
import pytest

from icedtea_jupyter.replay.debugger import Debugger
from tests.moments import distinct_moments

pytestmark = pytest.mark.spark

ROWS, BATCH = 1200, 50  # two partitions of 600 rows: twelve batches each

PANDAS = """
import time
def running(batches):
    total, seen, by_k = 0.0, 0, {}
    for pdf in batches:
        time.sleep(0.03)
        total += float(pdf.v.sum())
        seen += len(pdf)
        for k, v in pdf.groupby("k").v.sum().items():
            by_k[int(k)] = by_k.get(int(k), 0.0) + float(v)
        yield pdf.assign(total=total)
df = spark.range(0, ROWS, numPartitions=2).selectExpr("id", "id % 3 AS k", "CAST(id AS DOUBLE) / 2 AS v")
out = df.mapInPandas(running, "id long, k long, v double, total double").groupBy("k").count().collect()
"""

ARROW = """
import time
import pyarrow.compute as pc
def running(batches):
    total, seen = 0.0, 0
    for batch in batches:
        time.sleep(0.03)
        total += pc.sum(batch.column("v")).as_py()
        seen += batch.num_rows
        yield batch
df = spark.range(0, ROWS, numPartitions=2).selectExpr("id", "id % 3 AS k", "CAST(id AS DOUBLE) / 2 AS v")
out = df.mapInArrow(running, df.schema).groupBy("k").count().collect()
"""


@pytest.fixture
def sql_conf(spark):
    """Set SQL settings for one test, then put them back."""
    changed = {}

    def set_conf(**settings):
        for key, value in settings.items():
            key = key.replace("_", ".")
            changed.setdefault(key, spark.conf.get(key, None))
            spark.conf.set(key, value)

    yield set_conf
    for key, value in changed.items():
        if value is None:
            spark.conf.unset(key)
        else:
            spark.conf.set(key, value)


def oracle_total(partition, rows):
    """θ's running total after the first ``rows`` rows of ``partition`` (0.5 × id)."""
    start = partition * ROWS // 2
    return sum(0.5 * i for i in range(start, start + rows))


# AQE changes nothing in a plan without a shuffle (these sources have none): it is on and
# off in the tests with a shuffle before θ (applyInPandas, and after_a_shuffle below)
@pytest.mark.parametrize("record_inputs", [False, True])
@pytest.mark.parametrize("code", [PANDAS, ARROW], ids=["mapInPandas", "mapInArrow"])
def test_jumps_equal_the_recorded_snapshots_and_steps_move_by_batch(
        record, sql_conf, code, record_inputs):
    sql_conf(spark_sql_execution_arrow_maxRecordsPerBatch=str(BATCH))
    # pinned at θ's counts, not every 0.1 s: a loaded machine took a single interaction
    run = record(code, {"ROWS": ROWS}, interact_at="0:100 1:50, 0:250 1:300, 0:450 1:end",
                 record_inputs=record_inputs)
    assert run.status == "finished", run.error
    assert len(run.interactions) == 4
    dbg = run.debugger()
    middles = []
    for k in distinct_moments(run):
        jumped, recorded = dbg.jump(k), run.snapshot(k)
        for p in (0, 1):
            status = recorded.status("running", p)
            if status in ("running", "finished"):
                assert jumped.state("running", p) == recorded.state("running", p), (k, p)
            seen = recorded.state("running", p)["seen"]
            if status == "running" and 0 < seen < ROWS // 2:
                middles.append((seen, k, p))
        assert not jumped.notes, jumped.notes
    assert middles  # some jumps land in the middle of a partition
    expected = "recorded" if record_inputs else "regenerated"
    assert set(dbg.inputs.source.values()) == {expected}

    _, k, p = min(middles)
    steps_from(dbg, k, p)
    steps_from(dbg, 0, 1)  # from the initial states
    sidebar_shows_row_ranges(run, dbg)


def test_a_worker_whose_log_is_lost_is_refused_not_counted_in_rows(record, sql_conf):
    """A worker whose end never reached the kernel leaves no replay log: its counts are
    rows, and without the log's batch rows a jump cannot tell how many batches they
    were. The jump says so instead of handing the worker every batch."""
    import os

    from icedtea_jupyter.store import layout

    sql_conf(spark_sql_execution_arrow_maxRecordsPerBatch=str(BATCH))
    # no replay process reading the logs in the background while they are removed
    run = record(PANDAS, {"ROWS": ROWS}, interact_at="0:100 1:50, 0:250 1:300", prepare=False)
    assert run.status == "finished", run.error
    theta = run.dag.node("running").id
    logs = [path for name, path in layout.replay_logs(run.path)
            if name.operator == theta and name.partition == 0]
    assert logs
    for path in logs:
        os.remove(path)
    with pytest.raises(LookupError, match="'running'.s worker on partition 0 left no "
                                          "replay log.*record the cell again"):
        run.debugger().jump(1)


def sidebar_shows_row_ranges(run, dbg):
    """The sidebar's view of the debugger (the comm's DebugView) gives θ's batches' rows."""
    from icedtea_jupyter.comm.schema import check
    from icedtea_jupyter.comm.time_travel import debug_view

    dbg.jump(0)
    view = debug_view(run, dbg)
    assert check(view, "DebugView") == []
    assert view["pending"]["0"]["running"]["rows"][:2] == [[0, BATCH], [BATCH, 2 * BATCH]]


def steps_from(dbg, k, p):
    """Step over, into, over: each takes θ's next batch; the totals follow the data."""
    seen = dbg.jump(k).state("running", p)["seen"]
    waiting = dbg.pending(p)["running"]
    assert waiting["count"] == (ROWS // 2 - seen) // BATCH
    assert waiting["rows"][0] == [seen, seen + BATCH]  # a record is a batch: its rows
    column = waiting["records"][0]["id"]  # the batch itself: a pandas frame, an Arrow batch
    first = p * ROWS // 2 + seen
    ids = column.to_pylist() if hasattr(column, "to_pylist") else list(column)
    assert ids == list(range(first, first + BATCH))
    for step in range(min(3, waiting["count"])):
        moved = dbg.step_into(p, "running") if step == 1 else dbg.step_over(p)
        state = moved.state("running", p)
        assert state["seen"] == seen + (step + 1) * BATCH
        assert state["total"] == pytest.approx(oracle_total(p, state["seen"]))


SOURCE = ('df = spark.range(0, ROWS, numPartitions=3)'
          '.selectExpr("id % 5 AS k", "CAST(id AS DOUBLE) AS v").repartition("k")\n')
SHUFFLED = {  # θ of each kind after a shuffle that AQE coalesces: (θ's name, the cell)
    "mapInPandas": ("running", SOURCE + """
def running(batches):
    total, seen = 0.0, 0
    for pdf in batches:
        total += float(pdf.v.sum())
        seen += len(pdf)
        yield pdf
out = df.mapInPandas(running, "k long, v double").count()
"""),
    "mapInArrow": ("running", SOURCE + """
import pyarrow.compute as pc
def running(batches):
    total, seen = 0.0, 0
    for batch in batches:
        total += pc.sum(batch.column("v")).as_py()
        seen += batch.num_rows
        yield batch
out = df.mapInArrow(running, df.schema).count()
"""),
    "udf": ("Running", SOURCE + """
from pyspark.sql.functions import udf, col
class Running:
    def __init__(self):
        self.seen, self.total = 0, 0.0
    def __call__(self, v):
        self.seen += 1
        self.total += v
        return self.total
out = df.select(udf(Running(), "double")(col("v"))).collect()
"""),
    "pandas_udf": ("running", SOURCE + """
import pandas as pd
from pyspark.sql.functions import pandas_udf, col
def make():
    state = {"seen": 0, "total": 0.0}
    def running(v: pd.Series) -> pd.Series:
        state["seen"] += len(v)
        state["total"] += float(v.sum())
        return v
    return running
out = df.select(pandas_udf(make(), "double")(col("v"))).collect()
"""),
}


@pytest.mark.parametrize("aqe", ["true", "false"])
@pytest.mark.parametrize("kind", sorted(SHUFFLED))
def test_partitions_after_a_shuffle_replay_as_the_run_planned_them(
        record, sql_conf, kind, aqe, monkeypatch):
    """With AQE the shuffle's four partitions are coalesced: replay regenerates the ones
    the run had, with the run's settings even where the session's changed since, in a
    session of its own: the user's is never written (a cell running meanwhile keeps its
    settings)."""
    sql_conf(spark_sql_adaptive_enabled=aqe,
             spark_sql_execution_arrow_maxRecordsPerBatch=str(BATCH))
    name, code = SHUFFLED[kind]
    run = record(code, {"ROWS": ROWS})
    assert run.status == "finished", run.error
    partitions = sorted({w["partition"] for w in run.partitions(name)})
    assert (len(partitions) == 1) == (aqe == "true")  # AQE coalesced the four (small) ones
    changed = "false" if aqe == "true" else "true"
    sql_conf(spark_sql_adaptive_enabled=changed,  # changed after the run: pinned back
             spark_sql_execution_arrow_maxRecordsPerBatch="7")
    conf, writes = run.namespace["spark"].conf, []
    monkeypatch.setattr(conf, "set", lambda *a: writes.append(a), raising=False)
    monkeypatch.setattr(conf, "unset", lambda *a: writes.append(a), raising=False)
    dbg = run.debugger()
    dbg.jump(0)
    seen = 0
    for p in partitions:  # step over every record, to the partition's end
        while not dbg.ended(p):
            final = dbg.step_over(p)
        assert final.state(name, p) == run.final_state(name, p)
        seen += final.state(name, p).get("state", final.state(name, p))["seen"]
    assert seen == ROWS
    assert not writes
    assert spark_conf(run, "spark.sql.adaptive.enabled") == changed


def spark_conf(run, key):
    return run.namespace["spark"].conf.get(key)


CSV = """
df = spark.read.csv(PATH, schema="id long, v double")
def running(batches):
    total = 0.0
    for pdf in batches:
        total += float(pdf.v.sum())
        yield pdf
out = df.mapInPandas(running, "id long, v double").count()
"""


def write_csv(path, values):
    path.write_text("".join(f"{i:04d},{v:07.1f}\n" for i, v in enumerate(values)))


@pytest.mark.parametrize("record_inputs", [False, True])
def test_a_source_changed_since_the_run(record, sql_conf, tmp_path, record_inputs):
    """Rewritten in place after the run: regenerated batches name the batch that differs
    and the flag that keeps what θ saw; recorded batches replay what the run saw."""
    sql_conf(spark_sql_execution_arrow_maxRecordsPerBatch=str(BATCH))
    source = tmp_path / "payments.csv"
    write_csv(source, [float(i) for i in range(120)])
    run = record(CSV, {"PATH": str(source)}, record_inputs=record_inputs)
    assert run.status == "finished", run.error
    write_csv(source, [float(i) + 0.5 for i in range(120)])  # same size, other values
    dbg = run.debugger()
    if record_inputs:
        assert dbg.jump(0) and dbg.step_over(0).state("running", 0)["total"] == \
            sum(range(BATCH))
        in_kernel = Debugger.for_run(run)  # where there is no fork(): the batches themselves
        in_kernel.jump(0)
        batch = in_kernel.pending(0)["running"]["records"][0]
        assert list(batch.v) == [float(i) for i in range(BATCH)]  # a pandas frame
        in_kernel.close()
        return
    from icedtea_jupyter.replay.inputs import InputsChanged

    with pytest.raises(InputsChanged) as raised:
        dbg.jump(0)
    message = str(raised.value)
    assert "batch #0 (rows 0–49)" in message and "other values" in message
    assert message.endswith("run the cell again with --record-inputs to keep what θ saw")


GROUPED = """
import time
class Centre:
    def __init__(self):
        self.groups, self.rows, self.means = 0, 0, {}
    def __call__(self, pdf):
        time.sleep(0.02)
        self.groups += 1
        self.rows += len(pdf)
        self.means[int(pdf.k.iloc[0])] = float(pdf.v.mean())
        return pdf.assign(v=pdf.v - pdf.v.mean())
df = spark.range(0, ROWS, numPartitions=2).selectExpr("id % 60 AS k", "CAST(id AS DOUBLE) / 2 AS v")
out = df.groupBy("k").applyInPandas(Centre(), "k long, v double").count()
"""


def group_mean(key):
    """The mean of v over group ``key``: ids key, key + 60, … (20 of them), halved."""
    return sum(key + 60 * j for j in range(20)) / 20 / 2


@pytest.mark.parametrize("aqe", ["true", "false"])
@pytest.mark.parametrize("record_inputs", [False, True])
def test_apply_in_pandas_a_record_is_a_group(record, sql_conf, record_inputs, aqe):
    sql_conf(spark_sql_adaptive_enabled=aqe)
    run = record(GROUPED, {"ROWS": ROWS}, interact_every=0.1, record_inputs=record_inputs)
    assert run.status == "finished", run.error
    dbg = run.debugger()
    partitions = sorted({w["partition"] for w in run.partitions("Centre")})
    middles = []
    for k in distinct_moments(run):
        jumped, recorded = dbg.jump(k), run.snapshot(k)
        for p in partitions:
            status = recorded.status("Centre", p)
            if status in ("running", "finished"):
                assert jumped.state("Centre", p) == recorded.state("Centre", p), (k, p)
            if status == "running":
                middles.append((recorded.state("Centre", p)["groups"], k, p))
        assert not jumped.notes, jumped.notes
    middles = [m for m in middles if m[0] > 0]
    assert middles  # some jumps land in the middle of a partition
    expected = "recorded" if record_inputs else "regenerated"
    assert set(dbg.inputs.source.values()) == {expected}

    _, k, p = min(middles)
    before = dbg.jump(k).state("Centre", p)
    waiting = dbg.pending(p)["Centre"]
    rows = before["rows"]
    assert waiting["rows"][0] == [rows, rows + 20]  # a record is a group: its rows
    for step in range(min(2, waiting["count"])):
        after = (dbg.step_into(p, "Centre") if step else dbg.step_over(p)).state("Centre", p)
        assert (after["groups"], after["rows"]) == (before["groups"] + 1, before["rows"] + 20)
        [key] = set(after["means"]) - set(before["means"])
        assert after["means"][key] == pytest.approx(group_mean(key))
        before = after


ROW_UDF = """
import time
from pyspark.sql.functions import udf, col
class Running:
    def __init__(self):
        self.rows, self.total = 0, 0.0
    def __call__(self, v):
        time.sleep(0.0005)
        self.rows += 1
        self.total += v
        return self.total
running = udf(Running(), "double")
df = spark.range(0, ROWS, numPartitions=2).selectExpr("CAST(id AS DOUBLE) / 2 AS v")
out = df.select(running(col("v")).alias("t")).collect()
"""

PANDAS_UDF = """
import time
import pandas as pd
from pyspark.sql.functions import pandas_udf, col
def make():
    state = {"rows": 0, "total": 0.0}
    def running(v: pd.Series) -> pd.Series:
        time.sleep(0.03)
        state["rows"] += len(v)
        state["total"] += float(v.sum())
        return v + state["total"]
    return running
running = pandas_udf(make(), "double")
df = spark.range(0, ROWS, numPartitions=2).selectExpr("CAST(id AS DOUBLE) / 2 AS v")
out = df.select(running(col("v")).alias("t")).collect()
"""


def udf_state(state):
    """The running count and total of either UDF's state (attributes, or a closure's dict)."""
    state = state.get("state", state)
    return state["rows"], state["total"]


@pytest.mark.parametrize("record_inputs", [False, True])
@pytest.mark.parametrize("code", [ROW_UDF, PANDAS_UDF], ids=["udf", "pandas_udf"])
def test_udf_columns_a_record_is_a_row_or_a_batch(record, sql_conf, code, record_inputs):
    jumps_and_steps_equal_the_run_and_the_oracle(record, sql_conf, code, record_inputs,
                                                 unit=1 if code is ROW_UDF else BATCH)


def jumps_and_steps_equal_the_run_and_the_oracle(record, sql_conf, code, record_inputs, unit):
    """A UDF θ's jumps equal the recorded snapshots, and steps move by ``unit`` rows (a
    row, or a batch) to the states the oracle gives."""
    sql_conf(spark_sql_execution_arrow_maxRecordsPerBatch=str(BATCH))
    run = record(code, {"ROWS": ROWS}, interact_every=0.1, record_inputs=record_inputs)
    assert run.status == "finished", run.error
    name = run.dag.interesting.name
    dbg = run.debugger()
    middles = []
    for k in distinct_moments(run):
        jumped, recorded = dbg.jump(k), run.snapshot(k)
        for p in (0, 1):
            status = recorded.status(name, p)
            if status in ("running", "finished"):
                assert jumped.state(name, p) == recorded.state(name, p), (k, p)
            rows = udf_state(recorded.state(name, p))[0]
            if status == "running" and 0 < rows < ROWS // 2 - 3 * BATCH:
                middles.append((rows, k, p))
        assert not jumped.notes, jumped.notes
    assert middles  # some jumps land in the middle of a partition
    expected = "recorded" if record_inputs else "regenerated"
    assert set(dbg.inputs.source.values()) == {expected}

    _, k, p = min(middles)
    rows, _ = udf_state(dbg.jump(k).state(name, p))
    for step in range(3):
        moved = dbg.step_into(p, name) if step == 1 else dbg.step_over(p)
        rows_now, total = udf_state(moved.state(name, p))
        assert rows_now == rows + (step + 1) * unit
        assert total == pytest.approx(oracle_total(p, rows_now))


PUSHED_BELOW = ROW_UDF.replace(
    'out = df.select(running(col("v")).alias("t")).collect()',
    'out = df.select(col("v"), running(col("v")).alias("t")).filter("v > 100").collect()')


def test_a_filter_spark_runs_before_a_udf_theta_is_named_in_the_refusal(record):
    from icedtea_jupyter.replay.inputs import InputsChanged

    run = record(PUSHED_BELOW, {"ROWS": ROWS}, interact_every=0.1)
    assert run.status == "finished", run.error
    assert run.final_state("Running", 0)["rows"] < ROWS // 2  # called after the filter
    with pytest.raises(InputsChanged, match=r"Spark ran the cell's filter \(.*> 100\.0\) "
                                            "before θ: its optimizer moved it below the "
                                            "UDF column 'Running'") as refused:
        run.debugger().jump(0)
    assert "source changed" not in str(refused.value)
    assert "--record-inputs" in str(refused.value)
    kept = record(PUSHED_BELOW, {"ROWS": ROWS}, interact_every=0.1, record_inputs=True)
    last = len(kept.interactions) - 1
    for p in (0, 1):  # the calls θ got, kept: replay works
        if kept.snapshot(last).status("Running", p) == "running":
            assert kept.debugger().jump(last).state("Running", p) == \
                kept.snapshot(last).state("Running", p)
