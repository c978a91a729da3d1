"""Time travel on DataFrame pipelines: mapInPandas and mapInArrow as θ, a record a batch."""
import pytest

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


@pytest.mark.parametrize("aqe", ["true", "false"])
@pytest.mark.parametrize("record_inputs", [False, True])
@pytest.mark.parametrize("code", [PANDAS, ARROW], ids=["mapInPandas", "mapInArrow"])
def test_jumps_equal_the_recorded_snapshots_and_steps_move_by_batch(
        record, sql_conf, code, record_inputs, aqe):
    sql_conf(spark_sql_adaptive_enabled=aqe,
             spark_sql_execution_arrow_maxRecordsPerBatch=str(BATCH))
    run = record(code, {"ROWS": ROWS}, interact_every=0.1, record_inputs=record_inputs)
    assert run.status == "finished", run.error
    assert len(run.interactions) >= 3
    dbg = run.debugger()
    middles = []
    for k in range(len(run.interactions)):
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


def steps_from(dbg, k, p):
    """Step over, into, over: each takes θ's next batch; the totals follow the data."""
    seen = dbg.jump(k).state("running", p)["seen"]
    waiting = dbg.pending(p)["running"]
    assert waiting["count"] == (ROWS // 2 - seen) // BATCH
    assert waiting["rows"][0] == [seen, seen + BATCH]  # a record is a batch: its rows
    last_id = p * ROWS // 2 + seen + BATCH - 1
    assert f"{last_id}" in repr(waiting["records"][0])  # the batch, shown
    for step in range(min(3, waiting["count"])):
        moved = dbg.step_into(p, "running") if step == 1 else dbg.step_over(p)
        state = moved.state("running", p)
        assert state["seen"] == seen + (step + 1) * BATCH
        assert state["total"] == pytest.approx(oracle_total(p, state["seen"]))
