"""--agent samples and --agent summaries end to end: what a run stores of each operator's
input, and what summary_diff finds between two runs of one cell."""
import pandas as pd
import pytest

from icedtea_jupyter.agents.samples import SamplesAgent
from icedtea_jupyter.agents.summaries import SummariesAgent, SummariesOfEveryRecord

pytestmark = pytest.mark.spark

CELL = """
rows = sc.parallelize(range(N), 4).map(make).setName("make")
out = rows.map(lambda r: (r[0], r[2])).setName("pair").collect()
"""


def make_rows(shift=0.0, null_name=False):
    def make(i):
        return (i, None if null_name or i % 10 == 0 else f"n{i % 37}", (i % 100) + shift)
    return make


def test_a_small_input_is_its_own_sample_and_a_large_one_gives_k_members(record):
    run = record(CELL, {"N": 60, "make": make_rows()}, agents=[SamplesAgent])
    sample = run.samples("make")
    assert sorted(sample["value"]) == list(range(60))  # K=100 >= 60 records: all of them
    assert set(sample["_partition"]) == {0, 1, 2, 3}
    assert {"_1", "_2", "_3"} <= set(run.samples("pair").columns)  # pair's input: make's rows

    big = record(CELL, {"N": 20_000, "make": make_rows()}, agents=[SamplesAgent])
    sample = big.samples("pair")
    assert len(sample) == 100 and sample["_1"].is_unique
    assert set(sample["_1"]) <= set(range(20_000))
    # uniform over the partitions (5,000 records each): none holds most of the sample
    assert sample["_partition"].value_counts().max() < 50


def test_summaries_match_pandas_on_a_planted_input(record):
    n = 20_000
    run = record(CELL, {"N": n, "make": make_rows()}, agents=[SummariesOfEveryRecord])
    summary = run.summaries("pair").set_index("field")  # pair's input: make's rows
    expected = pd.DataFrame([make_rows()(i) for i in range(n)])
    values = expected[2]
    assert summary.loc["_1", "count"] == n and summary.loc["_1", "nulls"] == 0
    assert summary.loc["_3", "min"] == values.min() and summary.loc["_3", "max"] == values.max()
    assert summary.loc["_3", "mean"] == pytest.approx(values.mean())
    assert summary.loc["_3", "std"] == pytest.approx(values.std(ddof=0))
    assert summary.loc["_3", "distinct"] == pytest.approx(values.nunique(), rel=0.05)
    assert summary.loc["_1", "distinct"] == pytest.approx(n, rel=0.05)
    for q in (5, 25, 50, 75, 95):  # KLL's rank error (about 1.65 %): within 3 ranks of 100
        rank = (values <= summary.loc["_3", f"p{q:02d}"]).mean()
        assert abs(rank - q / 100) < 0.03
    assert summary.loc["_2", "nulls"] == expected[1].isna().sum()  # exact
    assert summary.loc["_2", "distinct"] == pytest.approx(expected[1].nunique(), abs=1)
    assert summary.loc["_2", "kind"] == "text" and summary.loc["_3", "kind"] == "number"
    assert sum(b["count"] for b in summary.loc["_3", "histogram"]) == pytest.approx(n, rel=0.01)
    ints = run.summaries("make").set_index("field")  # make's input: the integers
    assert ints.loc["value", "min"] == 0 and ints.loc["value", "max"] == n - 1


def test_a_sampled_summary_scales_to_the_input(record):
    n = 100_000
    run = record(CELL, {"N": n, "make": make_rows()}, agents=[SummariesAgent])
    summary = run.summaries("pair").set_index("field")
    assert summary.loc["_1", "count"] == n  # exact: the workers' input counts
    assert 500 < summary.loc["_1", "sampled"] < 1_500  # about 1 %
    assert summary.loc["_2", "nulls"] == pytest.approx(n / 10, rel=0.3)
    assert summary.loc["_3", "mean"] == pytest.approx(49.5, abs=3)


def test_summary_diff_finds_a_shift_and_a_field_that_became_null(record):
    cell = {"N": 200_000}
    first = record(CELL, dict(cell, make=make_rows()), agents=[SummariesAgent])
    same = record(CELL, dict(cell, make=make_rows()), agents=[SummariesAgent])
    assert same.summary_diff(first).empty
    changed = record(CELL, dict(cell, make=make_rows(shift=40.0, null_name=True)),
                     agents=[SummariesAgent])
    diff = changed.summary_diff(first.id)
    found = set(zip(diff["operator"], diff["field"], diff["change"]))
    assert found == {("pair", "_3", "distribution shifted"), ("pair", "_2", "became null")}
    shifted = diff[diff["field"] == "_3"].iloc[0]
    assert shifted["after"] - shifted["before"] == pytest.approx(40.0, abs=5)  # 1 % samples
    assert shifted["statistic"] == pytest.approx(0.4, abs=0.05)  # KS distance


def test_runs_without_the_agents_say_how_to_get_them(record):
    run = record(CELL, {"N": 10, "make": make_rows()})
    with pytest.raises(LookupError, match="--agent samples"):
        run.samples("make")
    with pytest.raises(LookupError, match="--agent summaries"):
        run.summaries("make")


def test_the_summaries_section_names_this_runs_summaries_when_none_came_before(record):
    """The first run of a cell recorded with --agent summaries has nothing to compare
    with: the section says so and names the summaries it has, never that it has none."""
    from icedtea_jupyter.comm.agent_data import summaries_compare

    plain = record(CELL, {"N": 2000, "make": make_rows()})
    alone = summaries_compare({"run": plain.id})
    assert alone["other"] is None and alone["note"].startswith("This run recorded no summaries")
    first = record(CELL, {"N": 2000, "make": make_rows()}, agents=[SummariesAgent])
    assert not first.summaries("pair").empty
    nothing = summaries_compare({"run": first.id})
    assert nothing["other"] is None and nothing["earlier"] == []
    assert nothing["note"].startswith("This run recorded summaries of make, pair")
    assert "no earlier run of this cell did" in nothing["note"]
    second = record(CELL, {"N": 2000, "make": make_rows()}, agents=[SummariesAgent])
    compared = summaries_compare({"run": second.id})
    assert compared["other"] == first.id and compared["note"] is None
