"""More kinds of UDF column after θ (test_dataframe_udf_after_theta.py has @udf and scalar
@pandas_udf): a scalar ``@arrow_udf`` and iterator ``@pandas_udf`` and ``@arrow_udf``
(a record a batch), a grouped-aggregate ``@pandas_udf`` in ``groupBy().agg`` (a record a
group, after a shuffle), and the same UDF object called before θ and after it (two
operators: only the call after θ is in G(θ)). Jumps equal the recorded snapshots, with
and without --record-inputs, and the states equal an oracle computed here."""
import pytest

from tests.moments import distinct_moments
from tests.spark.test_dataframe_time_travel import sql_conf  # noqa: F401 - the fixture
from tests.spark.test_dataframe_udf_after_theta import (  # noqa: F401 - the fixture
    BATCH,
    PANDAS_UDF,
    ROW_UDF,
    ROWS,
    THETA,
    batches_jump_to_the_recorded_state,
    jumps_equal_the_snapshots,
    oracle,
    record,
)

pytestmark = pytest.mark.spark

ITERATOR_PANDAS_UDF = PANDAS_UDF.replace("\n        ", "\n            ").replace(
    "return v * 2", "yield v * 2").replace(  # the body in a loop over the batches
    "def tally(v: pd.Series) -> pd.Series:\n",
    "def tally(batches: Iterator[pd.Series]) -> Iterator[pd.Series]:\n"
    "        for v in batches:\n").replace(
    "def make():", "from typing import Iterator\ndef make():")


def as_arrow_udf(code):
    """``code``'s pandas UDF ``tally`` made an Arrow UDF (Arrow arrays for Series)."""
    return code.replace("def make():", "import pyarrow as pa\nimport pyarrow.compute as pc\n"
                        "from pyspark.sql.functions import arrow_udf\ndef make():").replace(
        "pd.Series", "pa.Array").replace("float(v.sum())", "pc.sum(v).as_py()").replace(
        "v * 2", "pc.multiply(v, 2.0)").replace("= pandas_udf(", "= arrow_udf(")


ARROW_UDF, ITERATOR_ARROW_UDF = as_arrow_udf(PANDAS_UDF), as_arrow_udf(ITERATOR_PANDAS_UDF)


@pytest.mark.parametrize("record_inputs", [False, True])
@pytest.mark.parametrize("code", [ARROW_UDF, ITERATOR_PANDAS_UDF, ITERATOR_ARROW_UDF],
                         ids=["arrow_udf", "iterator_pandas_udf", "iterator_arrow_udf"])
def test_an_arrow_or_iterator_udf_after_theta_jumps_to_its_recorded_state(
        record, sql_conf, code, record_inputs):  # noqa: F811
    batches_jump_to_the_recorded_state(record, sql_conf, code, record_inputs)


KEYS = 8
AGGREGATE_UDF = THETA + """
def make():
    state = {"groups": 0, "rows": 0, "sums": {}}
    def spread(k: pd.Series, v: pd.Series) -> float:
        time.sleep(0.1)
        state["groups"] += 1
        state["rows"] += len(v)
        state["sums"][int(k.iloc[0])] = float(v.sum())
        return float(v.max() - v.min())
    return spread
spread = pandas_udf(make(), "double")
out = theta.groupBy((theta.id % KEYS).alias("g")).agg(
    spread(theta.id % KEYS, "v").alias("s")).collect()
"""


@pytest.mark.parametrize("record_inputs", [False, True])
def test_a_grouped_aggregate_udf_after_theta_jumps_group_by_group(
        record, sql_conf, record_inputs):  # noqa: F811
    """The aggregate UDF runs after θ's shuffle, a call a group: each jump gives every
    worker of it the groups the run's snapshot had, with the oracle's sums."""
    sql_conf(spark_sql_execution_arrow_maxRecordsPerBatch=str(BATCH),
             spark_sql_shuffle_partitions="2", spark_sql_adaptive_enabled="false")
    run = record(AGGREGATE_UDF.replace("KEYS", str(KEYS)), interesting="running",
                 record_inputs=record_inputs)
    assert run.status == "finished", run.error
    assert run.dag.node("spread").in_g
    dbg = run.debugger()
    partitions = dbg.partitions("spread")
    assert partitions
    sums = {g: float(sum(range(g, ROWS, KEYS))) for g in range(KEYS)}
    middle = []
    for k in distinct_moments(run):
        jumped, recorded = dbg.jump(k), run.snapshot(k)
        assert not [n for n in jumped.notes if "not replayed" in n], jumped.notes
        for q in partitions:
            expected = recorded.state("spread", q)
            if expected is None:
                continue
            assert jumped.state("spread", q) == expected, (k, q)
            state = expected["state"]
            assert all(sums[g] == s for g, s in state["sums"].items()), (k, q)
            if 0 < state["groups"] < len(run.final_state("spread", q)["state"]["sums"]):
                middle.append((k, q))
    assert middle  # some interactions found it between two groups
    finals = [run.final_state("spread", q)["state"] for q in partitions]
    assert sorted(g for s in finals for g in s["sums"]) == list(range(KEYS))
    assert sum(s["rows"] for s in finals) == ROWS
    dbg.close()


TALLY = ROW_UDF[ROW_UDF.index("class Tally"):ROW_UDF.index("out = ")]  # and tally = udf(…)
BEFORE_AND_AFTER = "from pyspark.sql.functions import udf\n" + TALLY + THETA.replace(
    "theta = df.mapInPandas(running, \"id long, k long, v double, total double\")",
    "before = df.withColumn(\"before\", tally(\"v\"))\n"
    "theta = before.mapInPandas(running, \"id long, k long, v double, before double, "
    "total double\")") + 'out = theta.withColumn("y", tally("v")).collect()\n'


@pytest.mark.parametrize("record_inputs", [False, True])
def test_one_udf_called_before_and_after_theta_is_two_operators_one_replayed(
        record, sql_conf, record_inputs):  # noqa: F811
    """``tally`` computes a column of θ's input and one of its output: the call after θ
    is its own operator in G(θ), whose jumps equal the snapshots (a row a record, v = id),
    and the call before θ stays out of G(θ), an operator of its own."""
    run, dbg, moving = jumps_equal_the_snapshots(record, sql_conf, BEFORE_AND_AFTER,
                                               "Tally#2", record_inputs)
    first = run.dag.node("Tally")
    assert not first.in_g and run.dag.node("Tally#2").in_g
    for k, q, state in moving:
        assert {key: state[key] for key in ("rows", "total", "last")} == \
            oracle(q, state["rows"]), (k, q)
    metrics = run.metrics().set_index(["operator", "partition"])
    for q in (0, 1):  # the call before θ is an operator of its own: every row once
        assert metrics.loc[("Tally", q), "records_in"] == ROWS // 2
        assert run.final_state("Tally#2", q)["rows"] == ROWS // 2
    assert set(dbg.inputs.source.values()) == {"recorded" if record_inputs else "regenerated"}
    dbg.close()


REUSED_COLUMN = BEFORE_AND_AFTER.replace(
    'before = df.withColumn("before", tally("v"))',
    'column = tally("v")\nbefore = df.withColumn("before", column)').replace(
    'out = theta.withColumn("y", tally("v")).collect()',
    'out = theta.withColumn("y", column).collect()')


def test_one_udf_column_used_before_and_after_theta_is_named_with_what_to_do(
        record, sql_conf):  # noqa: F811
    """One Column object (one pickled function) used on both sides of θ stays one
    operator outside G(θ): the run's warnings say so, and that calling the UDF again after
    θ makes an operator of G(θ)."""
    run = record(REUSED_COLUMN, interesting="running")
    assert run.status == "finished", run.error
    assert not run.dag.node("Tally").in_g
    (warning,) = [w for w in run.warnings if "made once and used both before θ" in w]
    assert "'Tally'" in warning and "call the UDF again there" in warning
