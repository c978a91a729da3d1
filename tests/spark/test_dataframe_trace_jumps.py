"""DataFrame traces linked with time travel and replayed: ``dbg.jump_to(t.first())`` with a
``mapInPandas`` θ lands just before the batch holding the record, and ``t.replay()`` makes
the cell's DataFrame again from only the traced source rows (oracles computed here)."""
import pytest

from tests.spark.test_dataframe_lineage import PIPELINE, SALES, SHOPS, oracle_total
from tests.spark.test_dataframe_time_travel import (  # noqa: F401 (sql_conf: a fixture)
    BATCH,
    PANDAS,
    ROWS,
    sql_conf,
)

pytestmark = pytest.mark.spark

def before_row(dbg, snapshot, partition, first_id):
    """The debugger stands before the batch holding ``first_id``: θ has seen the rows
    before that batch, and the batch waiting holds the id."""
    row = first_id - partition * ROWS // 2
    seen = row // BATCH * BATCH
    state = dbg.state("running", partition)
    assert state["seen"] == seen
    start = partition * ROWS // 2
    assert state["total"] == pytest.approx(sum(0.5 * i for i in range(start, start + seen)))
    waiting = dbg.pending(partition)["running"]
    assert waiting["rows"][0] == [seen, seen + BATCH]
    assert first_id in list(waiting["records"][0]["id"])
    assert snapshot.count("running", partition) == row // BATCH


def test_jump_to_a_traced_row_stands_before_the_batch_that_holds_it(record, sql_conf):  # noqa: F811
    sql_conf(spark_sql_execution_arrow_maxRecordsPerBatch=str(BATCH))
    run = record(PANDAS, {"ROWS": ROWS}, lineage=True, interact_every=0.1)
    assert run.status == "finished", run.error
    t = run.trace_back(lambda r: r.k == 1)
    assert len(t) == ROWS // 3
    dbg = run.debugger()
    # a source row in the middle of partition 0: id 130 is row 130, in batch 2 (100..149)
    middle = next(r for r in t.rows() if r.record.id == 130)
    assert middle.theta_input() == (0, 130)
    before_row(dbg, dbg.jump_to(middle), 0, 130)
    first = t.first()  # id 1, the first row of batch 0
    assert (first.operator, first.record.id) == ("range", 1)
    before_row(dbg, dbg.jump_to(first), 0, 1)
    # forward from one source row: its output row (k = 2) leads back to that row only
    f = run.trace_forward(lambda r: r.id == 731)
    assert [r.record.k for r in f.rows()] == [731 % 3]
    assert f.first().theta_input() == (1, 131)
    before_row(dbg, dbg.jump_to(f.first()), 1, 731)


def test_replay_makes_the_traced_row_again_from_its_sources_only(record):
    run = record(PIPELINE, {"SALES": SALES, "SHOPS": SHOPS}, lineage=True)
    for shop, city in SHOPS:  # one shop's sales and its city: that shop's row alone
        t = run.trace_back(lambda r, shop=shop: r.shop == shop)
        assert [tuple(r) for r in t.replay()] == [(city, shop, oracle_total(shop))]
    with pytest.raises(ValueError, match="backward trace"):
        run.trace_forward(lambda r: r.shop == "a", operator="createDataFrame#2").replay()


def test_replay_of_python_operators_runs_them_on_the_traced_rows(record):
    from tests.spark.test_dataframe_lineage import NUMS, PYTHON_OPERATORS

    run = record(PYTHON_OPERATORS, {"NUMS": NUMS}, lineage=True)
    odd = [n for n in NUMS if n[1] > 0 and n[0] % 2 == 1]
    t = run.trace_back(lambda r: r.kind == "odd")
    assert [tuple(r) for r in t.replay()] == [("odd", len(odd), max(v for _, v in odd))]
