"""A grouped-aggregate ``@pandas_udf`` or ``@arrow_udf`` as θ, in ``groupBy().agg``: a
record is a group (the call's Series or Arrow arrays); jumps equal the recorded snapshots
and steps move by one group (over a window: test_dataframe_window_udf.py)."""
import pytest

from tests.moments import distinct_moments
from tests.spark.test_dataframe_time_travel import sql_conf  # noqa: F401 - the fixture

pytestmark = pytest.mark.spark

ROWS, KEYS = 1200, 40  # 30 rows a key
AGG = """
import time
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
from pyspark.sql.functions import arrow_udf, pandas_udf, col
def make():
    state = {{"keys": [], "sizes": [], "sums": {{}}}}
    @{decorator}("double")
    def spread(k: {kind}, v: {kind}) -> float:
        time.sleep(0.02)
        state["keys"].append(int({first}))
        state["sizes"].append(len(v))
        state["sums"][int({first})] = float({total})
        return 0.0
    return spread
spread = make()
df = spark.range(0, ROWS, numPartitions=3).selectExpr("id % {keys} AS k", "CAST(id AS DOUBLE) AS v")
out = df.groupBy("k").agg(spread(col("k"), col("v")).alias("s")).collect()
"""
PANDAS = AGG.format(decorator="pandas_udf", kind="pd.Series", first="k.iloc[0]",
                    total="v.sum()", keys=KEYS)
ARROW = AGG.format(decorator="arrow_udf", kind="pa.Array", first="k[0].as_py()",
                   total="pc.sum(v).as_py()", keys=KEYS)


def key_sum(key):
    """The sum of v over group ``key``: ids key, key + KEYS, … (ROWS / KEYS of them)."""
    return float(sum(range(key, ROWS, KEYS)))


@pytest.mark.parametrize("aqe", ["true", "false"])
@pytest.mark.parametrize("record_inputs", [False, True])
@pytest.mark.parametrize("code", [PANDAS, ARROW], ids=["pandas_udf", "arrow_udf"])
def test_a_grouped_aggregate_udf_a_record_is_a_group(record, sql_conf, code,  # noqa: F811
                                                     record_inputs, aqe):
    sql_conf(spark_sql_shuffle_partitions="2", spark_sql_adaptive_enabled=aqe)
    run = record(code, {"ROWS": ROWS}, interact_every=0.1, record_inputs=record_inputs)
    assert run.status == "finished", run.error
    assert sorted(row.k for row in run.namespace["out"]) == list(range(KEYS))
    name = run.dag.interesting.name
    partitions = sorted({w["partition"] for w in run.partitions(name)})
    sql_conf(spark_sql_shuffle_partitions="5")  # changed since: replay pins the run's 2
    dbg, middles = run.debugger(), []
    for k in distinct_moments(run):
        jumped, recorded = dbg.jump(k), run.snapshot(k)
        for p in partitions:
            status = recorded.status(name, p)
            if status in ("running", "finished"):
                assert jumped.state(name, p) == recorded.state(name, p), (k, p)
            keys = recorded.state(name, p)["state"]["keys"]
            if status == "running" and keys:
                middles.append((len(keys), k, p))
        assert not jumped.notes, jumped.notes
    expected = "recorded" if record_inputs else "regenerated"
    assert set(dbg.inputs.source.values()) == {expected}
    final = {p: run.final_state(name, p)["state"]["keys"] for p in partitions}
    assert sorted(sum(final.values(), [])) == list(range(KEYS))

    assert middles  # some jumps land in the middle of a partition
    _, k, p = min(middles)
    state = dbg.jump(k).state(name, p)["state"]
    seen = len(state["keys"])
    steps = min(3, len(final[p]) - seen)
    assert steps > 0
    for step in range(steps):
        moved = dbg.step_into(p, name) if step == 1 else dbg.step_over(p)
        now = moved.state(name, p)["state"]
        assert now["keys"] == final[p][:seen + step + 1]  # the run's next group, in order
        assert now["sizes"][-1] == ROWS // KEYS  # a record is the whole group
        assert now["sums"][now["keys"][-1]] == key_sum(now["keys"][-1])
    assert final[p] == sorted(final[p])  # Spark sorts a partition's groups by key


REWRITTEN = """
import pandas as pd
from pyspark.sql.functions import pandas_udf, col
@pandas_udf("double")
def spread(v: pd.Series) -> float:
    return float(v.max() - v.min())
df = spark.read.csv(PATH, schema="k INT, v INT")
out = df.groupBy("k").agg(spread(col("v")).alias("s")).collect()
"""


def write_source(path, shift):
    """600 rows, 20 keys, fixed-width values (a rewrite keeps the file's size)."""
    path.write_text("".join(f"{i % 20:02d},{i + shift:04d}\n" for i in range(600)))


def test_a_source_rewritten_since_the_run_is_named_by_group(record, sql_conf,  # noqa: F811
                                                            tmp_path):
    from icedtea_jupyter.replay.inputs import InputsChanged

    sql_conf(spark_sql_shuffle_partitions="2", spark_sql_adaptive_enabled="false")
    source = tmp_path / "source.csv"
    write_source(source, 0)
    run = record(REWRITTEN, {"PATH": str(source)})
    assert run.status == "finished", run.error
    write_source(source, 1)  # every value one more: the same groups, other values
    with pytest.raises(InputsChanged) as raised:
        run.debugger().jump(0)
    message = str(raised.value)
    assert "group #0 (rows 0–29)" in message and "other values" in message, message
    assert message.endswith("run the cell again with --record-inputs to keep what θ saw")
