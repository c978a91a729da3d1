"""``dbg.jump_to(t.first())`` of DataFrame traces whose θ is a row ``@udf`` column (a
record is a row: the jump lands before θ's call on the traced row) or an
``applyInPandas`` (a record is a group: before the group holding the traced row);
oracles computed here from the rows' ids."""
import pytest

from tests.spark.test_dataframe_time_travel import (  # noqa: F401 (sql_conf: a fixture)
    BATCH,
    GROUPED,
    PANDAS_UDF,
    ROW_UDF,
    ROWS,
    group_mean,
    oracle_total,
    sql_conf,
    udf_state,
)

pytestmark = pytest.mark.spark

HALF = ROWS // 2  # rows a partition of spark.range(0, ROWS, numPartitions=2)


def test_jump_to_a_traced_row_stands_before_a_row_udf_is_called_on_it(record, sql_conf):  # noqa: F811
    sql_conf(spark_sql_execution_arrow_maxRecordsPerBatch=str(BATCH))
    run = record(ROW_UDF, {"ROWS": ROWS}, lineage=True, interact_every=0.1)
    assert run.status == "finished", run.error
    assert run.dag.interesting.api == "udf"
    dbg = run.debugger()
    # back from the output row whose running total is partition 0's after 51 rows
    t = run.trace_back(lambda r: r.t == oracle_total(0, 51))
    first = t.first()
    assert (first.operator, first.record.id) == ("range", 50)
    assert first.theta_input() == (0, 50)
    before = dbg.jump_to(first).state("Running", 0)
    assert (before["rows"], before["total"]) == (50, oracle_total(0, 50))
    after = dbg.step_over(0).state("Running", 0)  # θ's call on the traced row
    assert (after["rows"], after["total"]) == (51, oracle_total(0, 51))
    # forward from one source row of partition 1 to its output row, and back to θ
    f = run.trace_forward(lambda r: r.id == HALF + 130, operator="range")
    assert [r.record.t for r in f.rows()] == [oracle_total(1, 131)]
    assert f.first().theta_input() == (1, 130)
    moved = dbg.jump_to(f.first()).state("Running", 1)
    assert (moved["rows"], moved["total"]) == (130, oracle_total(1, 130))


def test_jump_to_a_traced_row_stands_before_a_pandas_udfs_batch_holding_it(
        record, sql_conf):  # noqa: F811
    sql_conf(spark_sql_execution_arrow_maxRecordsPerBatch=str(BATCH))
    run = record(PANDAS_UDF, {"ROWS": ROWS}, lineage=True, interact_every=0.1)
    assert run.status == "finished", run.error
    f = run.trace_forward(lambda r: r.id == HALF + 130, operator="range")
    assert f.first().theta_input() == (1, 130)
    state = run.debugger().jump_to(f.first()).state("running", 1)
    seen = 130 // BATCH * BATCH  # the batches before the one holding row 130
    assert udf_state(state) == (seen, oracle_total(1, seen))


APPLY = GROUPED.replace('.applyInPandas(Centre(), "k long, v double").count()',
                        '.applyInPandas(Centre(), "k long, v double").collect()')


@pytest.mark.parametrize("record_inputs", [False, True])
def test_jump_to_a_traced_row_stands_before_the_group_holding_it(record, record_inputs):
    run = record(APPLY, {"ROWS": ROWS}, lineage=True, interact_every=0.1,
                 record_inputs=record_inputs)
    assert run.status == "finished", run.error
    assert run.dag.interesting.name == "Centre"
    # the partition θ received group k = 7 on: the one whose final state has its mean
    [p] = [w["partition"] for w in run.partitions("Centre")
           if 7 in (run.final_state("Centre", w["partition"]) or {}).get("means", {})]
    dbg = run.debugger()
    t = run.trace_back(lambda r: r.k == 7)
    assert len(t) == ROWS // 60  # ids 7, 67, ...: every row of the group
    first = t.first()
    assert (first.operator, first.record.id) == ("range", 7)
    before = dbg.jump_to(first).state("Centre", p)
    assert 7 not in before["means"]
    waiting = dbg.pending(p)["Centre"]
    assert waiting["rows"][0] == [before["rows"], before["rows"] + ROWS // 60]
    after = dbg.step_over(p).state("Centre", p)
    assert set(after["means"]) - set(before["means"]) == {7}
    assert after["means"][7] == pytest.approx(group_mean(7))
    # forward from one row of the group: the group's outputs, and the same jump
    f = run.trace_forward(lambda r: r.id == 67, operator="range")
    assert len(f) == ROWS // 60 and {r.record.k for r in f.rows()} == {7}
    assert dbg.jump_to(f.first()).state("Centre", p) == before


def test_jump_to_names_an_apply_in_pandas_grouped_by_an_expression(record):
    run = record(APPLY.replace('groupBy("k")', 'groupBy(col("k"))').replace(
        "import time", "import time\nfrom pyspark.sql.functions import col"),
        {"ROWS": ROWS}, lineage=True)
    assert run.status == "finished", run.error
    t = run.trace_back(lambda r: r.k == 7)
    with pytest.raises(LookupError, match=r"grouped by expressions.*\(dbg.jump\(i\)\)"):
        run.debugger().jump_to(t.first())
