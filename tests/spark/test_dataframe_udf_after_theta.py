"""UDF columns applied to θ's output (``theta.withColumn("y", f("v"))``): PySpark pickles
a UDF when its column is made, before the column meets θ's DataFrame, yet its workers
record for time travel (the coordinator tells them G(θ) grew), and jumps put the UDF's
state where the run's snapshots had it: a row-at-a-time ``@udf`` (a callable instance:
a record is a row) and a scalar ``@pandas_udf`` (a closure: a record is a batch). And θ
behind a grouped map and a shuffle
gets its input batches regenerated in the run's boundaries."""

import pytest

from tests.moments import distinct_moments
from tests.spark.test_dataframe_after_theta import THETA as THETA_V_IS_ID
from tests.spark.test_dataframe_after_theta import interact_while_running
from tests.spark.test_dataframe_time_travel import sql_conf  # noqa: F401 - the fixture

pytestmark = pytest.mark.spark

ROWS, BATCH = 2000, 100  # two partitions of 1000 rows, ten batches each

THETA = THETA_V_IS_ID + """
from pyspark.sql.functions import pandas_udf, udf
"""
ROW_UDF = THETA + """
class Tally:
    def __init__(self):
        self.rows, self.total, self.last = 0, 0.0, None
    def __call__(self, v):
        time.sleep(0.0005)
        self.rows += 1
        self.total += v
        self.last = v
        return self.total
tally = udf(Tally(), "double")
out = theta.withColumn("y", tally("v")).collect()
"""
PANDAS_UDF = THETA + """
def make():
    state = {"batches": 0, "rows": 0, "total": 0.0}
    def tally(v: pd.Series) -> pd.Series:
        time.sleep(0.04)  # 0.4 s a partition at least: interactions every 0.1 s find it busy
        state["batches"] += 1
        state["rows"] += len(v)
        state["total"] += float(v.sum())
        return v * 2
    return tally
tally = pandas_udf(make(), "double")
out = theta.withColumn("y", tally("v")).collect()
"""


@pytest.fixture
def record(spark, tmp_path):
    """Record a cell, taking an interaction every 0.1 s until its action returns (the
    UDF after θ runs on after θ's batches; periodic interactions follow θ only)."""
    from icedtea_jupyter.session.execution import RunOptions, start_run

    def run_cell(code, **options):
        namespace = {"spark": spark, "ROWS": ROWS}
        run = start_run(code, namespace, RunOptions(store=str(tmp_path / "runs"), **options))
        interact_while_running(run, lambda: "out" in namespace)
        run.wait(180)
        return run

    return run_cell


def oracle(partition, rows):
    """The row UDF's state after the first ``rows`` rows of ``partition`` (v = id)."""
    first = partition * ROWS // 2
    values = [float(i) for i in range(first, first + rows)]
    return {"rows": rows, "total": sum(values), "last": values[-1] if values else None}


def udf_state(state):
    """The UDF's own variables in a worker's state (a closure's are under ``state``)."""
    return state.get("state", state)


def jumps_equal_the_snapshots(record, sql_conf, code, name, record_inputs):  # noqa: F811
    sql_conf(spark_sql_execution_arrow_maxRecordsPerBatch=str(BATCH))
    run = record(code, interesting="running", record_inputs=record_inputs)
    assert run.status == "finished", run.error
    assert len(run.interactions) > 3
    assert run.dag.node(name).in_g
    dbg = run.debugger()
    assert dbg.partitions(name) == [0, 1]
    moving = []
    for k in distinct_moments(run):
        jumped, recorded = dbg.jump(k), run.snapshot(k)
        assert not [n for n in jumped.notes if "not replayed" in n], jumped.notes
        for q in (0, 1):
            expected = recorded.state(name, q)
            assert expected is not None, (k, q)  # its workers reported at the interaction
            assert jumped.state(name, q) == expected, (k, q)
            if 0 < udf_state(expected)["rows"] < ROWS // 2:
                moving.append((k, q, udf_state(expected)))
    assert moving  # some interactions found the UDF in the middle of a partition
    for q in (0, 1):
        assert udf_state(run.final_state(name, q))["rows"] == ROWS // 2
    return run, dbg, moving


@pytest.mark.parametrize("record_inputs", [False, True])
def test_a_row_udf_after_theta_jumps_to_its_recorded_state(record, sql_conf,  # noqa: F811
                                                           record_inputs):
    run, dbg, moving = jumps_equal_the_snapshots(record, sql_conf, ROW_UDF, "Tally",
                                               record_inputs)
    for k, q, state in moving:  # a record is a row: its count, total and last value
        assert {key: state[key] for key in ("rows", "total", "last")} == \
            oracle(q, state["rows"]), (k, q)
    dbg.close()


@pytest.mark.parametrize("record_inputs", [False, True])
def test_a_pandas_udf_after_theta_jumps_to_its_recorded_state(record, sql_conf,  # noqa: F811
                                                              record_inputs):
    batches_jump_to_the_recorded_state(record, sql_conf, PANDAS_UDF, record_inputs)


def batches_jump_to_the_recorded_state(record, sql_conf, code, record_inputs):  # noqa: F811
    """A batch UDF ``tally`` after θ: jumps equal the snapshots, a batch at a time."""
    run, dbg, moving = jumps_equal_the_snapshots(record, sql_conf, code, "tally",
                                               record_inputs)
    for k, q, state in moving:  # a record is a batch of maxRecordsPerBatch rows
        assert state["rows"] == state["batches"] * BATCH, (k, q)
        assert state["total"] == oracle(q, state["rows"])["total"], (k, q)
    dbg.close()


BEHIND_A_GROUPED_MAP = """
import time
import pandas as pd
def centred(pdf):
    return pdf.assign(v=pdf.v - pdf.v.mean())
def running(batches):
    total, seen = 0.0, 0
    for pdf in batches:
        time.sleep(0.01)
        seen += len(pdf)
        total += float(pdf.v.abs().sum())
        yield pdf
df = spark.range(0, ROWS, numPartitions=2).selectExpr("id % 8 AS k", "CAST(id AS DOUBLE) AS v")
grouped = df.groupBy("k").applyInPandas(centred, "k long, v double")
out = grouped.mapInPandas(running, "k long, v double").count()
"""


@pytest.mark.parametrize("aqe", ["true", "false"])
def test_theta_behind_a_grouped_map_and_a_shuffle_regenerates_the_runs_batches(
        record, sql_conf, aqe):  # noqa: F811
    """θ (a mapInPandas) reads a groupBy().applyInPandas: its input batches are
    regenerated in the run's boundaries (a maxRecordsPerBatch of 70, not Spark's
    default 10,000), and every jump equals the recorded snapshot."""
    sql_conf(spark_sql_execution_arrow_maxRecordsPerBatch="70",
             spark_sql_adaptive_enabled=aqe, spark_sql_shuffle_partitions="2")
    run = record(BEHIND_A_GROUPED_MAP, interesting="running")
    assert run.status == "finished", run.error
    dbg = run.debugger()
    seen = []
    for k in distinct_moments(run):
        jumped, recorded = dbg.jump(k), run.snapshot(k)
        for p in dbg.partitions("running"):
            if recorded.state("running", p) is not None:
                assert jumped.state("running", p) == recorded.state("running", p), (k, p)
                seen.append(recorded.state("running", p)["seen"])
    assert any(0 < n < ROWS for n in seen)
    dbg.jump(0)
    for p in dbg.partitions("running"):
        rows = dbg.pending(p)["running"]["rows"]
        assert rows and all(end - start <= 70 for start, end in rows), rows
    dbg.close()


@pytest.mark.parametrize("code, name", [(ROW_UDF, "Tally"), (PANDAS_UDF, "tally")],
                         ids=["row-udf", "pandas-udf"])
def test_steps_over_theta_move_the_udf_by_the_rows_theta_emits(
        record, sql_conf, code, name):  # noqa: F811
    """A row UDF's record is a row, a pandas UDF's a batch of θ's rows: each step over
    one of θ's batches has the UDF take exactly the rows (batches) θ just emitted."""
    sql_conf(spark_sql_execution_arrow_maxRecordsPerBatch=str(BATCH))
    run = record(code, interesting="running")
    assert run.status == "finished", run.error
    dbg = run.debugger()
    jumped = dbg.jump(0)
    notes = [n for n in jumped.notes if "after θ ran in a Python worker" in n]
    assert len(notes) == 1 and "a step gives it each batch" in notes[0], jumped.notes
    for q in (0, 1):
        dbg.jump(0)
        for taken in range(1, ROWS // 2 // BATCH + 1):
            state = udf_state(dbg.step_over(partition=q).state(name, q))
            want = oracle(q, taken * BATCH)
            assert (state["rows"], state["total"]) == (want["rows"], want["total"]), taken
            if code == PANDAS_UDF:
                assert state["batches"] == taken
    dbg.close()
