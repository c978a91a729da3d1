"""Window UDFs (an aggregate ``@pandas_udf`` used ``.over(window)``), after θ and as θ: a
record is one call, which Spark makes once a window partition for an unbounded frame and
once a row for a bounded one. The recorder keeps the window; replay computes a capture
UDF over the same window and gets the run's calls in the run's order. Jumps equal the
recorded snapshots, with and without --record-inputs, and states equal an oracle."""
import pytest

from tests.moments import distinct_moments
from tests.spark.test_dataframe_time_travel import sql_conf  # noqa: F401 - the fixture
from tests.spark.test_dataframe_udf_after_theta import (  # noqa: F401 - the fixture
    ROWS,
    THETA,
    record,
)

pytestmark = pytest.mark.spark

KEYS = 8
SPREAD = """
from pyspark.sql.window import Window
def make():
    state = {"calls": 0, "rows": 0, "mins": []}
    def spread(v: pd.Series) -> float:
        time.sleep(SLEEP)
        state["calls"] += 1
        state["rows"] += len(v)
        state["mins"].append(float(v.min()))
        return float(v.max() - v.min())
    return spread
spread = pandas_udf(make(), "double")
"""
UNBOUNDED = (THETA + SPREAD.replace("SLEEP", "0.1") + f"""
out = theta.withColumn("s", spread("v").over(Window.partitionBy(theta.id % {KEYS}))).collect()
""")
BOUNDED = (THETA + SPREAD.replace("SLEEP", "0.0005") + f"""
frame = Window.partitionBy(theta.id % {KEYS}).orderBy("id").rowsBetween(-2, 0)
out = theta.withColumn("s", spread("v").over(frame)).collect()
""")


def test_a_window_udf_after_theta_over_a_whole_window_partition_a_call_a_partition(
        record, sql_conf):  # noqa: F811
    """Unbounded frame: one call a window partition (key ``id % 8``), its whole Series:
    250 rows whose least id is the key."""
    finals = jumps_after_theta(record, sql_conf, UNBOUNDED, record_inputs=False)
    for state in finals:
        assert state["rows"] == state["calls"] * ROWS // KEYS
    assert sorted(m for state in finals for m in state["mins"]) == list(map(float, range(KEYS)))


@pytest.mark.parametrize("record_inputs", [False, True])
def test_a_window_udf_after_theta_over_a_bounded_frame_a_call_a_row(
        record, sql_conf, record_inputs):  # noqa: F811
    """Rows between 2 before and the row itself, ordered by id: one call a row, the
    frame's Series (1, 2, then 3 values), whose least id is 16 below the row's."""
    finals = jumps_after_theta(record, sql_conf, BOUNDED, record_inputs)
    assert sum(state["calls"] for state in finals) == ROWS
    assert sum(state["rows"] for state in finals) == 3 * ROWS - 3 * KEYS
    assert sorted(m for state in finals for m in state["mins"]) == \
        sorted(float(max(i % KEYS, i - 2 * KEYS)) for i in range(ROWS))


def jumps_after_theta(record, sql_conf, code, record_inputs):  # noqa: F811
    """Every jump's state of 'spread' equals the run's snapshot; its final states."""
    sql_conf(spark_sql_shuffle_partitions="2", spark_sql_adaptive_enabled="false",
             spark_sql_execution_arrow_maxRecordsPerBatch="100")
    run = record(code, interesting="running", record_inputs=record_inputs)
    assert run.status == "finished", run.error
    assert run.dag.node("spread").in_g
    dbg = run.debugger()
    partitions = dbg.partitions("spread")
    finals = [run.final_state("spread", q)["state"] for q in partitions]
    middles = 0
    for k in distinct_moments(run):
        jumped, recorded = dbg.jump(k), run.snapshot(k)
        assert not [n for n in jumped.notes if "not replayed" in n], jumped.notes
        for q, final in zip(partitions, finals):
            if recorded.state("spread", q) is not None:
                assert jumped.state("spread", q) == recorded.state("spread", q), (k, q)
                middles += 0 < recorded.state("spread", q)["state"]["calls"] < final["calls"]
    assert middles  # some interactions found it between two calls
    dbg.close()
    return finals


def test_a_window_udf_as_theta_jumps_and_steps_a_call_at_a_time(record, sql_conf):  # noqa: F811
    sql_conf(spark_sql_shuffle_partitions="2", spark_sql_adaptive_enabled="false")
    code = "import time\nimport pandas as pd\nfrom pyspark.sql.functions import pandas_udf\n" \
        + SPREAD.replace("SLEEP", "0.1")
    code += f"""
df = spark.range(0, ROWS, numPartitions=2).selectExpr("id", "CAST(id AS DOUBLE) AS v")
out = df.withColumn("s", spread("v").over(Window.partitionBy(df.id % {KEYS}))).collect()
"""
    run = record(code, interact_every=0.1)
    assert run.status == "finished", run.error
    assert run.dag.interesting.name == "spread"
    dbg = run.debugger()
    middle = None
    for k in distinct_moments(run):
        jumped, recorded = dbg.jump(k), run.snapshot(k)
        assert not jumped.notes, jumped.notes
        for q in dbg.partitions("spread"):
            if recorded.status("spread", q) in ("running", "finished"):
                assert jumped.state("spread", q) == recorded.state("spread", q), (k, q)
                if recorded.status("spread", q) == "running" and \
                        0 < recorded.state("spread", q)["state"]["calls"] < 3:
                    middle = (k, q, recorded.state("spread", q)["state"]["calls"])
    assert middle  # an interaction between two calls
    k, q, calls = middle
    dbg.jump(k)
    moved = dbg.step_over(q).state("spread", q)["state"]
    assert moved["calls"] == calls + 1 and moved["rows"] == (calls + 1) * ROWS // KEYS
    dbg.close()


ARROW_SPREAD = """
import pyarrow as pa
import pyarrow.compute as pc
from pyspark.sql.functions import arrow_udf
from pyspark.sql.window import Window
def make():
    state = {"calls": 0, "rows": 0, "mins": []}
    def spread(v: pa.Array) -> float:
        time.sleep(SLEEP)
        state["calls"] += 1
        state["rows"] += len(v)
        state["mins"].append(float(pc.min(v).as_py()))
        return float(pc.max(v).as_py() - pc.min(v).as_py())
    return spread
spread = arrow_udf(make(), "double")
"""
ARROW_UNBOUNDED = (THETA + ARROW_SPREAD.replace("SLEEP", "0.1") + f"""
out = theta.withColumn("s", spread("v").over(Window.partitionBy(theta.id % {KEYS}))).collect()
""")


def test_an_arrow_window_udf_after_theta_a_call_a_window_partition(record, sql_conf):  # noqa: F811
    """An aggregate ``@arrow_udf`` over a window replays like a pandas one: a call a
    window partition, its Arrow array of 250 rows whose least id is the key."""
    finals = jumps_after_theta(record, sql_conf, ARROW_UNBOUNDED, record_inputs=False)
    for state in finals:
        assert state["rows"] == state["calls"] * ROWS // KEYS
    assert sorted(m for state in finals for m in state["mins"]) == list(map(float, range(KEYS)))
