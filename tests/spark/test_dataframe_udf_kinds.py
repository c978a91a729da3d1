"""More kinds of UDF as θ (test_dataframe_time_travel.py has @udf and @pandas_udf): a
scalar Arrow UDF (``@arrow_udf``, Spark 4) and iterator pandas and Arrow UDFs, a record
an Arrow batch of its arguments (as the function takes it)."""
import pytest

from tests.spark.test_dataframe_time_travel import (  # noqa: F401 - the fixture
    ROWS,
    jumps_and_steps_equal_the_run_and_the_oracle,
    sql_conf,
)

pytestmark = pytest.mark.spark

ARROW_UDF = """
import time
import pyarrow as pa
import pyarrow.compute as pc
from pyspark.sql.functions import arrow_udf, col
def make():
    state = {"rows": 0, "total": 0.0}
    def running(v: pa.Array) -> pa.Array:
        time.sleep(0.03)
        state["rows"] += len(v)
        state["total"] += pc.sum(v).as_py()
        return pc.add(v, state["total"])
    return running
running = arrow_udf(make(), "double")
df = spark.range(0, ROWS, numPartitions=2).selectExpr("CAST(id AS DOUBLE) / 2 AS v")
out = df.select(running(col("v")).alias("t")).collect()
"""


ITERATOR_PANDAS_UDF = """
import time
from typing import Iterator
import pandas as pd
from pyspark.sql.functions import pandas_udf, col
def make():
    state = {"rows": 0, "total": 0.0}
    def running(batches: Iterator[pd.Series]) -> Iterator[pd.Series]:
        for v in batches:
            time.sleep(0.03)
            state["rows"] += len(v)
            state["total"] += float(v.sum())
            yield v + state["total"]
    return running
running = pandas_udf(make(), "double")
df = spark.range(0, ROWS, numPartitions=2).selectExpr("CAST(id AS DOUBLE) / 2 AS v")
out = df.select(running(col("v")).alias("t")).collect()
"""
ITERATOR_ARROW_UDF = ARROW_UDF.replace(
    "import pyarrow as pa\n", "import pyarrow as pa\nfrom typing import Iterator\n").replace(
    """    def running(v: pa.Array) -> pa.Array:
        time.sleep(0.03)
        state["rows"] += len(v)
        state["total"] += pc.sum(v).as_py()
        return pc.add(v, state["total"])""", """    def running(batches: Iterator[pa.Array]) -> Iterator[pa.Array]:
        for v in batches:
            time.sleep(0.03)
            state["rows"] += len(v)
            state["total"] += pc.sum(v).as_py()
            yield pc.add(v, state["total"])""")


@pytest.mark.parametrize("record_inputs", [False, True])
@pytest.mark.parametrize("code", [ARROW_UDF, ITERATOR_PANDAS_UDF, ITERATOR_ARROW_UDF],
                         ids=["arrow_udf", "iterator_pandas_udf", "iterator_arrow_udf"])
def test_arrow_and_iterator_udf_columns_a_record_is_a_batch(record, sql_conf, code,  # noqa: F811
                                                            record_inputs):
    from tests.spark.test_dataframe_time_travel import BATCH

    assert "Iterator[" in code or code is ARROW_UDF
    jumps_and_steps_equal_the_run_and_the_oracle(record, sql_conf, code, record_inputs,
                                                 unit=BATCH)
