"""More kinds of UDF as θ (test_dataframe_time_travel.py has @udf and @pandas_udf): a
scalar Arrow UDF (``@arrow_udf``, Spark 4), a record an Arrow batch of its arguments."""
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


@pytest.mark.parametrize("record_inputs", [False, True])
def test_an_arrow_udf_column_a_record_is_an_arrow_batch(record, sql_conf, record_inputs):  # noqa: F811
    from tests.spark.test_dataframe_time_travel import BATCH

    assert ROWS % BATCH == 0
    jumps_and_steps_equal_the_run_and_the_oracle(record, sql_conf, ARROW_UDF, record_inputs,
                                                 unit=BATCH)
