"""Exception policies on DataFrame UDF columns (``executor/udf_errors.py``): with
``--on-error pause`` a row ``@udf`` or scalar ``@pandas_udf`` that raises pauses the job
on the row; skip makes the column's value null (the row stays), replace calls the UDF
with the replacement arguments. ``--tolerate N`` quarantines up to N such rows."""
import pytest

from tests.spark.test_live_control import live  # noqa: F401  (the fixture)

pytestmark = pytest.mark.spark

UDFS = """
from pyspark.sql.functions import pandas_udf, udf

@udf("long")
def inverse(x):
    return 1000 // (x - 13)

@udf("long")
def ratio(a, b):
    return a // b

@pandas_udf("long")
def inverses(s):
    return s.map(lambda x: 1000 // (x - 13))

@pandas_udf("double")
def centered(s):
    if (s == 13).any():
        raise ValueError("13 in the batch")
    return s - s.mean()

df = spark.range(0, 40, 1, 2)
"""


def inverse(x):
    return None if x == 13 else 1000 // (x - 13)


def rows_of(run):
    return {row["id"]: row["v"] for row in run.namespace["out"]}


@pytest.mark.parametrize("column", ["inverse", "inverses"])
def test_pause_then_skip_makes_the_value_null_and_keeps_the_row(live, column):  # noqa: F811
    code = UDFS + f"out = df.select('id', {column}('id').alias('v')).collect()"
    run = live(code, on_error="pause")
    hit = run.wait_for_hit(120)
    assert (hit.kind, hit.operator, hit.partition) == ("error", column, 0)
    assert (hit.record, hit.input_index) == (13, 13)  # the row that raised, not its batch
    assert hit.error["exception"] == "ZeroDivisionError"
    assert hit.actions == ("skip", "replace", "resume", "stop")
    hit.skip()
    run.wait(120)
    assert run.status == "finished", run.error
    assert rows_of(run) == {x: inverse(x) for x in range(40)}  # 40 rows, 13's value null
    quarantine = run.quarantine()
    assert list(zip(quarantine["reason"], quarantine["operator"], quarantine["partition"],
                    quarantine["index"], quarantine["value"])) == [("skipped", column, 0, 13, 13)]


@pytest.mark.parametrize("column", ["inverse", "inverses"])
def test_pause_then_replace_calls_the_udf_with_the_replacement(live, column):  # noqa: F811
    code = UDFS + f"out = df.select('id', {column}('id').alias('v')).collect()"
    run = live(code, on_error="pause")
    hit = run.wait_for_hit(120)
    assert hit.record == 13
    hit.replace(13)  # raises again: a second hit on the same row
    again = run.wait_for_hit(120)
    assert (again.record, again.input_index, again.partition) == (13, 13, 0)
    again.replace(113)
    run.wait(120)
    assert run.status == "finished", run.error
    expected = {x: inverse(x) for x in range(40)}
    expected[13] = 1000 // (113 - 13)
    assert rows_of(run) == expected
    assert [h.decision for h in run.breakpoints] == ["replace", "replace"]
    assert run.quarantine().empty  # nothing was set aside


def test_a_udf_of_two_arguments_is_replaced_by_a_tuple_of_them(live):  # noqa: F811
    code = UDFS + "out = df.select('id', ratio('id', df.id - 13).alias('v')).collect()"
    run = live(code, on_error="pause")
    hit = run.wait_for_hit(120)
    assert hit.record == (13, 0)
    hit.replace(7)  # not a tuple of two: a hit saying so, nothing lost
    again = run.wait_for_hit(120)
    assert "takes a tuple of 2 values" in again.error["message"]
    again.replace((13, 1))
    run.wait(120)
    assert run.status == "finished", run.error
    assert rows_of(run) == {x: 13 if x == 13 else x // (x - 13) for x in range(40)}


def test_a_batch_whose_values_depend_on_it_is_skipped_whole(live):  # noqa: F811
    code = UDFS + "out = df.select('id', centered('id').alias('v')).collect()"
    run = live(code, on_error="pause")
    hit = run.wait_for_hit(120)
    assert (hit.partition, hit.input_index) == (0, 0)  # the batch: partition 0's 20 rows
    assert hit.actions == ("skip", "resume", "stop") and "whole batch" in hit.refused
    with pytest.raises(ValueError, match="not offered"):
        hit.replace(12)
    hit.skip()
    run.wait(120)
    assert run.status == "finished", run.error
    mean = sum(range(20, 40)) / 20
    assert rows_of(run) == {x: None if x < 20 else x - mean for x in range(40)}


@pytest.mark.parametrize("column", ["inverse", "inverses"])
def test_tolerate_quarantines_the_rows_that_raise_and_the_job_finishes(record, column):
    planted = {7: 0, 31: 1}  # id -> its partition, both raising
    code = UDFS.replace("(x - 13)", "(x - 7) // (x - 31)") + \
        f"out = df.select('id', {column}('id').alias('v')).collect()"
    run = record(code, tolerate=2)
    assert run.status == "finished", run.error
    assert rows_of(run) == {x: None if x in planted else 1000 // (x - 7) // (x - 31)
                            for x in range(40)}
    quarantine = run.quarantine().sort_values("value")
    assert list(quarantine["value"]) == [7, 31]
    for row in quarantine.itertuples():
        assert (row.reason, row.operator, row.exception) == ("raised", column, "ZeroDivisionError")
        assert (row.partition, row.index) == (planted[row.value], row.value % 20)
        assert "ZeroDivisionError" in row.traceback and "inverse" in row.traceback
    assert not [w for w in run.warnings if w.startswith("--tolerate does not see")]


def test_tolerate_fails_the_run_at_n_plus_one_and_keeps_the_quarantined(record):
    code = UDFS.replace("(x - 13)", "(x - 3) // (x - 9)") + \
        "out = df.select('id', inverses('id').alias('v')).collect()"
    run = record(code, tolerate=1)
    assert run.status == "failed"
    assert "--tolerate 1 reached" in run.error["message"]
    assert list(run.quarantine()["value"]) == [3]


@pytest.mark.parametrize("on_error", ["fail", "pause"])
def test_a_breakpoint_on_a_row_udf_is_refused_in_an_alert_and_the_job_runs(record, on_error):
    """Spark calls a row @udf from its own loop, where a paused row could not be skipped:
    --break-when on one is never armed, and the run says so (it used to never hit, or
    to fail the task at a skip under --on-error pause)."""
    code = UDFS + "out = df.where('id > 0').select('id', ratio('id', 'id').alias('v')).collect()"
    run = record(code, on_error=on_error, break_when=["ratio: row[0] == 13"])
    assert run.status == "finished", run.error
    assert rows_of(run) == {x: 1 for x in range(1, 40)} and run.breakpoints == []
    alerts = run.alerts()
    refused = alerts[alerts.message.str.contains("is a row @udf column")]
    assert set(refused.level) == {"warning"} and set(refused.operator) == {"ratio"}
    assert "--on-error pause" in refused.message.iloc[0]
