"""The tools on DataFrame UDFs: --check sees a row UDF's results and mapInPandas' and
applyInPandas' output rows; the tools that skip them say so in a warning."""
import pytest

pytestmark = pytest.mark.spark

CODE = """
from pyspark.sql.functions import udf
from pyspark.sql.types import LongType

@udf(LongType())
def shifted(x):
    return x - 10

def halve(batches):
    for batch in batches:
        yield batch.assign(h=batch.id // 2)

def totals(frame):
    return frame.groupby("k", as_index=False).agg(total=("id", "sum"))

df = spark.range(40, numPartitions=2)
out = df.select(shifted("id").alias("s")).collect()
halves = df.mapInPandas(halve, "id long, h long").collect()
sums = df.withColumn("k", df.id % 4).groupBy("k").applyInPandas(totals, "k long, total long").collect()
"""


def test_checks_see_dataframe_udfs_and_the_skipping_tools_are_named(record):
    run = record(CODE, checks=["shifted: row >= 0", "halve: row.h < 15",
                               "totals: row.total < 190"],
                 table_checks=["halve: count between 40 and 40"], tolerate=0)
    assert run.status == "finished", run.error
    alerts = run.alerts()
    counts = alerts[alerts["tool"] == "check"].groupby("check")["count"].sum().to_dict()
    # s < 0 for ids 0..9; h >= 15 for ids 30..39; the totals of k = 0..3 are 180..216
    sums = [sum(i for i in range(40) if i % 4 == k) for k in range(4)]
    assert counts == {"shifted: row >= 0": 10, "halve: row.h < 15": 10,
                      "totals: row.total < 190": sum(1 for t in sums if t >= 190)}
    outcome = run.agent_table("table_checks").set_index("check")
    assert outcome.loc["halve: count between 40 and 40", "passed"]
    warned = [w for w in run.warnings if w.startswith("--tolerate does not see")]
    assert len(warned) == 1
    assert "'halve' (mapInPandas)" in warned[0]
    for name in ("'shifted'", "'totals'"):  # a row UDF's, a group's exceptions are quarantined
        assert name not in warned[0]
    assert not any(w.startswith("--check") for w in run.warnings)
