"""Exception policies on groups (``executor/group_errors.py``): an ``applyInPandas``
function or a grouped-aggregate ``@pandas_udf`` that raises on a group. With
``--on-error pause`` the job pauses on the group; skip gives the group no rows (null for
an aggregate) and keeps it in the quarantine with its key, replace calls the function
with the replacement group. ``--tolerate N`` quarantines up to N groups."""
import pandas as pd
import pytest

from tests.moments import distinct_moments
from tests.spark.test_live_control import live  # noqa: F401  (the fixture)

pytestmark = pytest.mark.spark

GROUPS = """
import pandas as pd
from pyspark.sql.functions import col, pandas_udf

def total(key, pdf):
    if (pdf["id"] == BAD_A).any() or (pdf["id"] == BAD_B).any():
        raise ValueError("a bad id in the group")
    return pd.DataFrame({"g": [key[0]], "total": [int(pdf["id"].sum())]})

@pandas_udf("double")
def spread(s: pd.Series) -> float:
    if (s == BAD_A).any() or (s == BAD_B).any():
        raise ValueError("a bad id in the group")
    return float(s.max() - s.min())

df = spark.range(0, 40, 1, 2).withColumn("g", col("id") % 5)
"""
APPLY = "out = df.groupBy('g').applyInPandas(total, 'g long, total long').collect()"


def cell(code, bad_a=13, bad_b=-1):
    return GROUPS.replace("BAD_A", str(bad_a)).replace("BAD_B", str(bad_b)) + code


def reopen(run):
    """``run`` as a new kernel reads it from its store."""
    from icedtea_jupyter.dag import Dag
    from icedtea_jupyter.session.run import Run
    from icedtea_jupyter.store.run_store import RunStore

    store = RunStore.open(run.path)
    manifest = store.read_manifest()
    return Run(store, manifest, Dag.from_json(manifest["dag"]))


def keys(quarantine):
    """The quarantined groups' keys as kept, with their types."""
    return sorted((type(v["key"]).__name__, v["key"]) for v in quarantine["value"])


def totals(run):
    return {row["g"]: row["total"] for row in run.namespace["out"]}


def group_of(g):
    return [x for x in range(40) if x % 5 == g]


def test_pause_then_skip_gives_the_group_no_rows_and_quarantines_it(live):  # noqa: F811
    run = live(cell(APPLY), on_error="pause")
    hit = run.wait_for_hit(120)
    assert (hit.kind, hit.operator) == ("error", "total")
    assert hit.record["key"] == (3,)
    assert sorted(r["id"] for r in hit.record["rows"]) == group_of(3)
    assert hit.error["exception"] == "ValueError"
    assert hit.actions == ("skip", "replace", "resume", "stop")
    hit.skip()
    run.wait(120)
    assert run.status == "finished", run.error
    assert totals(run) == {g: sum(group_of(g)) for g in range(5) if g != 3}
    quarantine = run.quarantine()
    assert list(quarantine["reason"]) == ["skipped"]
    [kept] = quarantine["value"]
    assert kept["key"] == (3,) and sorted(r["id"] for r in kept["rows"]) == group_of(3)
    [reopened] = reopen(run).quarantine()["value"]
    assert reopened == kept


def test_pause_then_replace_calls_the_function_with_the_replacement_group(live):  # noqa: F811
    run = live(cell(APPLY), on_error="pause")
    hit = run.wait_for_hit(120)
    hit.replace("not a group")  # a clear error at a new hit, nothing lost
    again = run.wait_for_hit(120)
    assert "takes a DataFrame" in again.error["message"]
    fixed = pd.DataFrame(hit.record["rows"])
    fixed = fixed[fixed["id"] != 13]
    again.replace(fixed)
    run.wait(120)
    assert run.status == "finished", run.error
    expected = {g: sum(group_of(g)) for g in range(5)}
    expected[3] -= 13
    assert totals(run) == expected
    assert [h.decision for h in run.breakpoints] == ["replace", "replace"]
    assert run.quarantine().empty


def test_tolerate_quarantines_failing_groups_with_their_keys(record):
    run = record(cell(APPLY, bad_a=13, bad_b=31), tolerate=2)  # groups 3 and 1
    assert run.status == "finished", run.error
    assert totals(run) == {g: sum(group_of(g)) for g in (0, 2, 4)}
    quarantine = run.quarantine()
    assert keys(quarantine) == [("tuple", (1,)), ("tuple", (3,))]  # as the user's data has it
    assert keys(reopen(run).quarantine()) == keys(quarantine)
    for row in quarantine.itertuples():
        assert (row.reason, row.operator, row.exception) == ("raised", "total",
                                                            "ValueError")
        assert sorted(r["id"] for r in row.value["rows"]) == group_of(row.value["key"][0])
    assert not [w for w in run.warnings if w.startswith("--tolerate does not see")]


def test_tolerate_fails_the_run_at_n_plus_one_groups(record):
    run = record(cell(APPLY, bad_a=13, bad_b=31), tolerate=1)
    assert run.status == "failed"
    assert "--tolerate 1 reached" in run.error["message"]
    assert len(run.quarantine()) == 1


def test_tolerate_makes_an_aggregate_udf_null_on_its_failing_groups(record):
    code = cell("out = df.groupBy('g').agg(spread('id').alias('v')).collect()", bad_b=31)
    run = record(code, tolerate=2)
    assert run.status == "finished", run.error
    values = {row["g"]: row["v"] for row in run.namespace["out"]}
    assert values == {g: None if g in (1, 3) else float(max(group_of(g)) - min(group_of(g)))
                      for g in range(5)}
    quarantine = run.quarantine()
    assert sorted(sorted(v) for v in quarantine["value"]) == [group_of(1), group_of(3)]
    assert not [w for w in run.warnings if w.startswith("--tolerate does not see")]


STATEFUL = """
import time
import pandas as pd
from pyspark.sql.functions import col

def make():
    state = {"calls": 0, "groups": 0, "total": 0}
    def total(key, pdf):
        time.sleep(0.05)
        state["calls"] += 1
        if (pdf["id"] == 13).any():
            raise ValueError("13 in the group")
        state["groups"] += 1
        state["total"] += int(pdf["id"].sum())
        return pd.DataFrame({"g": [key[0]], "total": [int(pdf["id"].sum())]})
    return total

df = spark.range(0, 400, 1, 2).withColumn("g", col("id") % 80)
out = df.groupBy("g").applyInPandas(make(), "g long, total long").collect()
"""


@pytest.mark.parametrize("record_inputs", [False, True], ids=["regenerated", "recorded"])
def test_jumps_after_a_skipped_group_equal_the_run(live, record_inputs):  # noqa: F811
    run = live(STATEFUL, on_error="pause", interact_every=0.1, record_inputs=record_inputs)
    hit = run.wait_for_hit(120)
    assert hit.record["key"] == (13,)
    hit.skip()
    run.wait(120)
    assert run.status == "finished", run.error
    assert 13 not in {row["g"] for row in run.namespace["out"]}
    dbg = run.debugger()
    after = 0
    for k in distinct_moments(run, 1):
        recorded = run.snapshot(k)
        if recorded.status("total", hit.partition) == "running":
            state = recorded.state("total", hit.partition)["state"]
            assert dbg.jump(k).state("total", hit.partition)["state"] == state, k
            after += state["calls"] > state["groups"]  # past the skipped group
    assert after >= 1


COGROUPED = """
import pandas as pd
from pyspark.sql.functions import col

def joined(key, left, right):
    if (left["id"] == 13).any():
        raise ValueError("13 on the left")
    return pd.DataFrame({"g": [key[0]], "total": [int(left["id"].sum() + right["id"].sum())]})

left = spark.range(0, 40, 1, 2).withColumn("g", col("id") % 5)
right = spark.range(100, 110, 1, 2).withColumn("g", col("id") % 5)
out = left.groupBy("g").cogroup(right.groupBy("g")).applyInPandas(
    joined, "g long, total long").collect()
"""


def test_a_cogroup_is_replaced_by_a_pair_of_frames(live):  # noqa: F811
    run = live(COGROUPED, on_error="pause")
    hit = run.wait_for_hit(120)
    assert hit.record["key"] == (3,)
    assert sorted(r["id"] for r in hit.record["left"]) == group_of(3)
    assert sorted(r["id"] for r in hit.record["right"]) == [103, 108]
    left = pd.DataFrame(hit.record["left"])
    hit.replace((left[left["id"] != 13], pd.DataFrame(hit.record["right"])))
    run.wait(120)
    assert run.status == "finished", run.error
    expected = {g: sum(group_of(g)) + sum(x for x in range(100, 110) if x % 5 == g)
                for g in range(5)}
    expected[3] -= 13
    assert totals(run) == expected


AGGREGATES = """
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
from pyspark.sql.functions import arrow_udf, col, pandas_udf

@pandas_udf("double")
def spread(s: pd.Series) -> float:
    if (s == 13).any():
        raise ValueError("13 in the group")
    return float(s.max() - s.min())

@arrow_udf("double")
def arrow_spread(a: pa.Array) -> float:
    if pc.any(pc.equal(a, 13)).as_py():
        raise ValueError("13 in the group")
    return float(pc.max(a).as_py() - pc.min(a).as_py())

df = spark.range(0, 40, 1, 2).withColumn("g", col("id") % 5)
"""


@pytest.mark.parametrize("column", ["spread", "arrow_spread"])
def test_an_aggregate_udf_group_is_skipped_to_null_or_replaced(live, column):  # noqa: F811
    code = AGGREGATES + f"out = df.groupBy('g').agg({column}('id').alias('v')).collect()"
    run = live(code, on_error="pause")
    hit = run.wait_for_hit(120)
    assert sorted(hit.record) == group_of(3)
    hit.replace(pd.Series([x for x in hit.record if x not in (13, 38)]))
    run.wait(120)
    assert run.status == "finished", run.error
    expected = {g: float(max(group_of(g)) - min(group_of(g))) for g in range(5)}
    expected[3] = float(33 - 3)
    assert {row["g"]: row["v"] for row in run.namespace["out"]} == expected


def test_tolerate_makes_an_arrow_aggregate_null_on_its_failing_group(record):
    code = AGGREGATES + "out = df.groupBy('g').agg(arrow_spread('id').alias('v')).collect()"
    run = record(code, tolerate=1)
    assert run.status == "finished", run.error
    assert {row["g"]: row["v"] for row in run.namespace["out"]} == {
        g: None if g == 3 else float(max(group_of(g)) - min(group_of(g))) for g in range(5)}
    assert [sorted(v) for v in run.quarantine()["value"]] == [group_of(3)]
