"""DataFrame Python operators after θ in workers of their own: a mapInPandas after JVM
operators (a filter, a projection) in θ's stage, and a grouped applyInPandas after a
shuffle. Jumps put them where their workers reported being at
each interaction, on inputs regenerated with Spark from their own input DataFrames."""
import time

import pytest

from tests.spark.test_dataframe_time_travel import sql_conf  # noqa: F401 - the fixture

pytestmark = pytest.mark.spark

ROWS = 6000  # two partitions of 3000 rows

THETA = """
import time
import pandas as pd
def running(batches):
    total = 0.0
    for pdf in batches:
        time.sleep(0.01)
        total += float(pdf.v.sum())
        yield pdf.assign(total=total)
df = spark.range(0, ROWS, numPartitions=2).selectExpr("id", "id % 3 AS k", "CAST(id AS DOUBLE) AS v")
theta = df.mapInPandas(running, "id long, k long, v double, total double")
"""
MAP_IN_PANDAS = THETA + """
def later(batches):
    seen, last = 0, None
    for pdf in batches:
        time.sleep(0.02)
        seen += len(pdf)
        last = int(pdf.id.iloc[-1])
        yield pdf
out = theta.filter("k != 1").select("id", "total").mapInPandas(later, "id long, total double").count()
"""
APPLY_IN_PANDAS = THETA + """
class later:
    def __init__(self):
        self.groups, self.rows, self.keys = 0, 0, []
    def __call__(self, pdf):
        time.sleep(0.05)
        self.groups += 1
        self.rows += len(pdf)
        self.keys.append(int(pdf.g.iloc[0]))
        return pdf.head(1)[["g", "total"]]
out = theta.selectExpr("id % 40 AS g", "total").groupBy("g").applyInPandas(later(), "g long, total double").collect()
"""


@pytest.fixture
def record(spark, tmp_path):
    """Record a cell, taking an interaction every 0.1 s while it runs (``--interact-every``
    takes them while θ runs; 'later' runs on after θ's partitions have ended)."""
    from icedtea_jupyter.session.execution import RunOptions, start_run

    def run_cell(code, namespace, **options):
        namespace = dict(namespace, spark=spark)
        run = start_run(code, namespace, RunOptions(store=str(tmp_path / "runs"), **options))
        interact_while_running(run)
        run.wait(180)
        return run

    return run_cell


def interact_while_running(run, done=lambda: False):
    """A manual interaction every 0.1 s until ``done()`` or the run concludes (from then
    on an interaction is refused: ``RunFinishing``)."""
    from icedtea_jupyter.coordinator.interactions import RunFinishing

    while not done() and run.status == "running":
        try:
            run.interact()
        except RunFinishing:
            break
        time.sleep(0.1)


def jumps_equal_the_reports(record, code, aqe, sql_conf):  # noqa: F811
    sql_conf(spark_sql_execution_arrow_maxRecordsPerBatch="100",
             spark_sql_adaptive_enabled=str(aqe).lower(), spark_sql_shuffle_partitions="2")
    run = record(code, {"ROWS": ROWS}, interesting="running")
    assert run.status == "finished", run.error
    assert len(run.interactions) > 3
    dbg = run.debugger()
    moving = []
    count = len(run.interactions)
    for k in sorted({*range(0, count, max(1, count // 20)), count - 1}):
        jumped, recorded = dbg.jump(k), run.snapshot(k)
        for q in dbg.partitions("later"):
            worker = recorded.worker("later", q)
            if recorded.state("later", q) is not None:
                assert jumped.state("later", q) == recorded.state("later", q), (k, q)
            if worker.count:
                moving.append((k, q))
        assert not [n for n in jumped.notes if "not replayed" in n], jumped.notes
        (note,) = [n for n in jumped.notes if "'later' after θ" in n]
        assert "a step gives it each batch" in note or "later Spark stage" in note, note
    assert moving  # some interactions found 'later' past its first records
    return run, dbg


@pytest.mark.parametrize("aqe", [True, False], ids=["aqe", "no-aqe"])
def test_a_map_in_pandas_after_a_filter_in_theta_stage(record, sql_conf, aqe):  # noqa: F811
    run, dbg = jumps_equal_the_reports(record, MAP_IN_PANDAS, aqe, sql_conf)
    for q in (0, 1):  # θ's rows without k == 1, in 100-row batches
        kept = [i for i in range(q * ROWS // 2, (q + 1) * ROWS // 2) if i % 3 != 1]
        state = run.history().final_state(run.dag.node("later"), q)
        assert (state["seen"], state["last"]) == (len(kept), kept[-1])
    dbg.close()


@pytest.mark.parametrize("aqe", [True, False], ids=["aqe", "no-aqe"])
def test_an_apply_in_pandas_after_a_shuffle(record, sql_conf, aqe):  # noqa: F811
    run, dbg = jumps_equal_the_reports(record, APPLY_IN_PANDAS, aqe, sql_conf)
    finals = [run.history().final_state(run.dag.node("later"), q)
              for q in dbg.partitions("later")]
    assert sorted(g for s in finals for g in s["keys"]) == list(range(40))
    assert sum(s["rows"] for s in finals) == ROWS
    dbg.close()


UDF_AFTER = """
from pyspark.sql.functions import udf
@udf("double")
def doubled(x):
    return x * 2
""" + THETA + """
out = theta.withColumn("d", doubled("total")).count()
"""


def test_a_udf_column_after_theta_the_action_did_not_need_is_named_as_never_run(record):
    """A UDF column on θ's output that ``count()`` does not need (Spark prunes it): the
    UDF is in G(θ) but never ran, and jumps say so rather than calling it not replayed."""
    run = record(UDF_AFTER, {"ROWS": ROWS}, interesting="running")
    assert run.status == "finished", run.error
    assert run.dag.node("doubled").in_g
    assert not run.partitions("doubled")
    dbg = run.debugger()
    notes = dbg.jump(1).notes
    assert not [n for n in notes if "not replayed" in n], notes
    (note,) = [n for n in notes if "'doubled' after θ never ran" in n]
    assert "did not need their columns" in note
    dbg.close()


def kept_ids(q):
    """The ids of partition q's rows that pass MAP_IN_PANDAS's filter, in order."""
    return [i for i in range(q * ROWS // 2, (q + 1) * ROWS // 2) if i % 3 != 1]


def exploded_ids(q):
    """The ids of EXPLODED's rows on partition q: row id comes id % 3 + 1 times."""
    return [i for i in range(q * ROWS // 2, (q + 1) * ROWS // 2) for _ in range(i % 3 + 1)]


EXPLODED = THETA + """
def later(batches):
    seen, last = 0, None
    for pdf in batches:
        seen += len(pdf)
        last = int(pdf.id.iloc[-1])
        yield pdf
out = (theta.selectExpr("id", "explode(sequence(0, CAST(k AS INT))) AS copy")
       .mapInPandas(later, "id long, copy int").count())
"""


def later_after(ids, theta_batches, ended, at_jump):
    """The oracle of 'later''s state on a partition once θ has taken ``theta_batches``
    batches of 100 rows: it has taken every 100-row batch of its input rows (``ids``:
    the θ row each came from) that θ's rows so far complete (all of them once θ's
    partition ended), and never goes back from where the jump put it (``at_jump``)."""
    start = ids[0] - ids[0] % (ROWS // 2)
    emitted = [i for i in ids if i < start + 100 * theta_batches]
    rows = len(ids) if ended else len(emitted) // 100 * 100
    rows = max(rows, at_jump)
    return rows, (ids[rows - 1] if rows else None)


@pytest.mark.parametrize("code, ids", [(MAP_IN_PANDAS, kept_ids), (EXPLODED, exploded_ids)],
                         ids=["filter", "explode"])
def test_steps_over_theta_move_a_map_in_pandas_after_it_by_the_batches_they_complete(
        record, sql_conf, code, ids):  # noqa: F811
    """Through a filter and a projection (MAP_IN_PANDAS), or an explode (EXPLODED)."""
    sql_conf(spark_sql_execution_arrow_maxRecordsPerBatch="100")
    run = record(code, {"ROWS": ROWS}, interesting="running")
    assert run.status == "finished", run.error
    dbg = run.debugger()
    (note,) = [n for n in dbg.jump(0).notes if "'later' after θ" in n]
    assert "a step gives it each batch once θ has emitted the rows" in note, note
    for q in (0, 1):
        jumped = dbg.jump(0)
        at_jump = jumped.state("later", q)["seen"] if jumped.count("later", q) else 0
        for taken in range(1, 31 + 1):
            snapshot = dbg.step_over(partition=q)
            state = snapshot.state("later", q)
            seen, last = later_after(ids(q), taken, taken == 31, at_jump)
            assert (state["seen"], state["last"]) == (seen, last), (q, taken)
        assert dbg.ended(q)
        other = 1 - q  # the other partition's 'later' stays where the jump put it
        assert snapshot.count("later", other) == jumped.count("later", other)
    dbg.close()


def test_an_apply_in_pandas_after_a_shuffle_takes_its_groups_once_theta_has_ended_everywhere(
        record, sql_conf):  # noqa: F811
    sql_conf(spark_sql_execution_arrow_maxRecordsPerBatch="100",
             spark_sql_shuffle_partitions="2")
    run = record(APPLY_IN_PANDAS, {"ROWS": ROWS}, interesting="running")
    assert run.status == "finished", run.error
    dbg = run.debugger()
    jumped = dbg.jump(0)
    (note,) = [n for n in jumped.notes if "'later' after θ" in n]
    assert "later Spark stage" in note, note
    reduce_sides = dbg.partitions("later")
    assert all(jumped.count("later", r) == 0 for r in reduce_sides)
    for q in (0, 1):
        while not dbg.ended(q):
            snapshot = dbg.step_over(partition=q)
            if q == 0:  # θ's partition 1 has not ended: the shuffle's stage has not started
                assert all(snapshot.count("later", r) == 0 for r in reduce_sides)
    finals = [run.history().final_state(run.dag.node("later"), r) for r in reduce_sides]
    assert [snapshot.state("later", r) for r in reduce_sides] == finals
    assert sorted(k for s in finals for k in s["keys"]) == list(range(40))
    dbg.close()
