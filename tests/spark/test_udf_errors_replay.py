"""Time travel after UDF rows skipped or replaced at exception hits: replay meets the
same exceptions and applies the run's decisions to them (``EditedCall``), so jumps equal
the snapshots the run took, with θ's inputs regenerated or recorded."""
import pytest

from tests.moments import distinct_moments
from tests.spark.test_dataframe_time_travel import sql_conf  # noqa: F401  (the fixture)
from tests.spark.test_live_control import live  # noqa: F401  (the fixture)

pytestmark = pytest.mark.spark

ROW_UDF = """
import time
from pyspark.sql.functions import udf
def make():
    state = {"rows": 0, "total": 0}
    def running(x):
        time.sleep(0.004)
        state["rows"] += 1
        state["total"] += 1000 // (x - 13)
        return state["total"]
    return running
running = udf(make(), "long")
out = spark.range(0, 400, 1, 2).select("id", running("id").alias("v")).collect()
"""

PANDAS_UDF = """
import time
from pyspark.sql.functions import pandas_udf
def make():
    state = {"rows": 0, "total": 0, "calls": 0}
    def running(s):
        time.sleep(0.03)
        state["calls"] += 1
        out = s.map(lambda x: 1000 // (x - 13))
        state["rows"] += len(s)
        state["total"] += int(out.sum())
        return out
    return running
running = pandas_udf(make(), "long")
out = spark.range(0, 400, 1, 2).select("id", running("id").alias("v")).collect()
"""


@pytest.mark.parametrize("code, action, record_inputs", [
    (ROW_UDF, "skip", False), (ROW_UDF, "replace", True),
    (PANDAS_UDF, "skip", True), (PANDAS_UDF, "replace", False)],
    ids=["udf-skip", "udf-replace-recorded", "pandas-skip-recorded", "pandas-replace"])
def test_jumps_after_an_edited_udf_row_equal_the_run(live, sql_conf, code, action,  # noqa: F811
                                                     record_inputs):
    sql_conf(spark_sql_execution_arrow_maxRecordsPerBatch="10")
    run = live(code, on_error="pause", interact_every=0.1, record_inputs=record_inputs)
    hit = run.wait_for_hit(120)
    assert (hit.record, hit.input_index, hit.partition) == (13, 13, 0)
    hit.skip() if action == "skip" else hit.replace(113)
    run.wait(120)
    assert run.status == "finished", run.error
    values = {row["id"]: row["v"] for row in run.namespace["out"]}
    assert (values[13] is None) == (action == "skip")
    dbg = run.debugger()
    after = 0
    for k in distinct_moments(run, 1):
        recorded = run.snapshot(k)
        if recorded.status("running", 0) == "running":
            state = recorded.state("running", 0)
            assert dbg.jump(k).state("running", 0) == state, k
            after += state["state"]["rows"] > 20
    assert after >= 2  # jumps past the edited row
