"""More kinds of UDF as θ (test_dataframe_time_travel.py has @udf and @pandas_udf): a
scalar Arrow UDF (``@arrow_udf``, Spark 4) and iterator pandas and Arrow UDFs, a record
an Arrow batch of its arguments (as the function takes it); and
``groupBy().cogroup().applyInPandas``, a record a key with its two groups."""
import pytest

from tests.moments import distinct_moments
from tests.spark.test_dataframe_time_travel import (  # noqa: F401 - the fixture
    BATCH,
    GROUPED,
    PANDAS_UDF,
    ROWS,
    jumps_and_steps_equal_the_run_and_the_oracle,
    sql_conf,
    udf_state,
)

pytestmark = pytest.mark.spark

CELL = """
import time
from typing import Iterator
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
from pyspark.sql.functions import arrow_udf, pandas_udf, col
def make():
    state = {{"rows": 0, "total": 0.0}}
    def running({signature}:
{body}
    return running
running = {decorator}(make(), "double")
df = spark.range(0, ROWS, numPartitions=2).selectExpr("CAST(id AS DOUBLE) / 2 AS v")
out = df.select(running(col("v")).alias("t")).collect()
"""
# θ's running count and total over a batch ``v``, by the kind of UDF
ADD = """{indent}time.sleep(0.03)
{indent}state["rows"] += len(v)
{indent}state["total"] += {total}
{indent}{out} {result}"""
ARROW_UDF = CELL.format(signature="v: pa.Array) -> pa.Array", decorator="arrow_udf", body=ADD.format(
    indent=" " * 8, total="pc.sum(v).as_py()", out="return", result='pc.add(v, state["total"])'))
ITERATOR_PANDAS_UDF = CELL.format(
    signature="batches: Iterator[pd.Series]) -> Iterator[pd.Series]", decorator="pandas_udf",
    body="        for v in batches:\n" + ADD.format(indent=" " * 12, total="float(v.sum())",
                                                  out="yield", result='v + state["total"]'))
ITERATOR_ARROW_UDF = CELL.format(
    signature="batches: Iterator[pa.Array]) -> Iterator[pa.Array]", decorator="arrow_udf",
    body="        for v in batches:\n" + ADD.format(indent=" " * 12, total="pc.sum(v).as_py()",
                                                  out="yield", result='pc.add(v, state["total"])'))


@pytest.mark.parametrize("record_inputs", [False, True])
@pytest.mark.parametrize("code", [ARROW_UDF, ITERATOR_PANDAS_UDF, ITERATOR_ARROW_UDF],
                         ids=["arrow_udf", "iterator_pandas_udf", "iterator_arrow_udf"])
def test_arrow_and_iterator_udf_columns_a_record_is_a_batch(record, sql_conf, code,  # noqa: F811
                                                            record_inputs):
    jumps_and_steps_equal_the_run_and_the_oracle(record, sql_conf, code, record_inputs,
                                                 unit=BATCH)


COGROUP = """
import time
import pandas as pd
class Matched:
    def __init__(self):
        self.groups, self.left, self.right = 0, 0, 0
    def __call__(self, key, left, right):
        time.sleep(0.02)
        self.groups += 1
        self.left += len(left)
        self.right += len(right)
        return pd.DataFrame({"k": [key[0]], "n": [len(left) * len(right)]})
orders = spark.range(0, 600, numPartitions=2).selectExpr("id % 40 AS k", "id AS v")
refunds = spark.range(0, 300, numPartitions=2).selectExpr("id % 50 AS k", "id AS r")
out = orders.groupBy("k").cogroup(refunds.groupBy("k")).applyInPandas(
    Matched(), "k long, n long").collect()
"""


@pytest.mark.parametrize("record_inputs", [False, True])
def test_a_cogroup_apply_in_pandas_a_record_is_a_key_and_its_two_groups(record, sql_conf,  # noqa: F811
                                                                       record_inputs):
    sql_conf(spark_sql_shuffle_partitions="2")
    run = record(COGROUP, interact_every=0.1, record_inputs=record_inputs)
    assert run.status == "finished", run.error
    name = run.dag.interesting.name
    assert len(run.dag.node(name).parents) == 2  # both sides read
    dbg = run.debugger()
    for k in distinct_moments(run):
        jumped, recorded = dbg.jump(k), run.snapshot(k)
        for p in (0, 1):
            if recorded.status(name, p) in ("running", "finished"):
                assert jumped.state(name, p) == recorded.state(name, p), (k, p)
    expected = "recorded" if record_inputs else "regenerated"
    assert set(dbg.inputs.source.values()) == {expected}
    state = dbg.jump(0).state(name, 0)
    moved = dbg.step_over(0).state(name, 0)  # one key: its orders and its refunds
    assert moved["groups"] == state["groups"] + 1
    assert (moved["left"] - state["left"], moved["right"] - state["right"]) in {
        (15, 6), (15, 0), (0, 6)}  # 600 ids over 40 keys, 300 over 50


def test_interact_when_on_a_pandas_udf_theta_tests_each_batch(record, sql_conf):  # noqa: F811
    """``row`` is the batch's Series; an interaction follows each batch holding a multiple
    of 100 (v = id / 2: batches 0, 4 and 8 of each partition), and a jump to it gives the
    recorded states."""
    sql_conf(spark_sql_execution_arrow_maxRecordsPerBatch=str(BATCH))
    run = record(PANDAS_UDF, {"ROWS": ROWS}, interact_when="(row % 100 == 0).any()")
    assert run.status == "finished", run.error
    conditions = [i.index for i in run.interactions if i.trigger == "condition"]
    assert len(conditions) == 6, [i.trigger for i in run.interactions]
    dbg, seen = run.debugger(), set()
    for k in conditions:
        recorded, jumped = run.snapshot(k), dbg.jump(k)
        for p in (0, 1):
            if recorded.status("running", p) in ("running", "finished"):
                assert jumped.state("running", p) == recorded.state("running", p), (k, p)
            seen.add((p, udf_state(recorded.state("running", p))[0]))
    assert {(p, (b + 1) * BATCH) for p in (0, 1) for b in (0, 4, 8)} <= seen


def test_interact_when_on_a_grouped_map_theta_tests_each_group(record, sql_conf):  # noqa: F811
    """``row`` is the group's frame; an interaction follows groups 7 and 13 (unless one is
    its partition's last group: no call comes after it) with that group done."""
    run = record(GROUPED, {"ROWS": ROWS}, interact_when="int(row.k.iloc[0]) in (7, 13)")
    assert run.status == "finished", run.error
    partitions = sorted({w["partition"] for w in run.partitions("Centre")})
    lasts = {list(run.final_state("Centre", p)["means"])[-1] for p in partitions}
    conditions = [i.index for i in run.interactions if i.trigger == "condition"]
    assert conditions and len(conditions) == len({7, 13} - lasts)
    dbg = run.debugger()
    for k in conditions:
        recorded = run.snapshot(k)
        states = {p: recorded.state("Centre", p) for p in partitions
                  if recorded.status("Centre", p) in ("running", "finished")}
        assert any(list(s["means"])[-1:] in ([7], [13]) for s in states.values()), states
        jumped = dbg.jump(k)
        assert all(jumped.state("Centre", p) == state for p, state in states.items())
