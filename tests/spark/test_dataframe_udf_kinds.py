"""More kinds of UDF as θ (test_dataframe_time_travel.py has @udf and @pandas_udf): a
scalar Arrow UDF (``@arrow_udf``, Spark 4) and iterator pandas and Arrow UDFs, a record
an Arrow batch of its arguments (as the function takes it); and
``groupBy().cogroup().applyInPandas``, a record a key with its two groups."""
import pytest

from tests.spark.test_dataframe_time_travel import (  # noqa: F401 - the fixture
    ROWS,
    jumps_and_steps_equal_the_run_and_the_oracle,
    sql_conf,
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
    from tests.spark.test_dataframe_time_travel import BATCH

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
    for k in range(len(run.interactions)):
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
