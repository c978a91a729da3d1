"""The load over time (skew/timeline.py, agents/progress.py LoadSeries): workers' series
read on one grid, partitions named in the chart, bounded series."""
import pytest

from icedtea_jupyter.agents.progress import SERIES_POINTS, LoadSeries
from icedtea_jupyter.skew.timeline import (
    MAX_STEPS,
    OTHERS,
    chart_points,
    grid,
    grid_step,
    named_partitions,
    on_grid,
)


def test_workers_are_read_at_the_same_moments_and_summed_per_partition():
    series = [
        (0, ([0.3, 0.8, 1.6], [10, 30, 50])),  # partition 0, one task
        (1, ([0.2, 0.6], [5, 7])),  # partition 1, two tasks (two paths from θ)
        (1, ([1.1], [100])),
    ]
    frame = on_grid(series)
    assert grid_step(1.6) == 0.25
    by = {(s, p): r for s, p, r in frame.itertuples(index=False)}
    assert sorted({s for s, _ in by}) == [0.25, 0.5, 0.75, 1.0, 1.25, 1.5, 1.75]
    late = on_grid([(0, ([5.1, 6.0], [1, 2])), (1, ([5.6], [4]))])  # the grid starts there
    assert sorted(set(late["seconds"])) == [5.25, 5.5, 5.75, 6.0]
    assert list(late[late["partition"] == 1]["records"]) == [0, 0, 4, 4]
    assert [by[(t, 0)] for t in (0.25, 0.5, 1.0, 1.75)] == [0, 10, 30, 50]  # 0 before it began
    assert [by[(t, 1)] for t in (0.25, 0.75, 1.25)] == [5, 7, 107]
    assert on_grid([]).empty and grid([(3, ([], []))]).partitions == []


def test_a_long_run_takes_a_coarser_step():
    assert grid_step(10) == 0.25 and grid_step(31) == 0.5 and grid_step(3_000) == 30
    g = grid([(0, ([float(t) for t in range(3_600)], list(range(3_600))))])
    assert len(g.ticks) <= MAX_STEPS and (g.ticks[-1], g.records[0][-1]) == (3_600.0, 3_599.0)


def test_the_chart_names_flagged_and_heavy_partitions_and_draws_the_rest_as_their_median():
    loads = {p: float(p) for p in range(20)}
    named = named_partitions(loads, flagged=[2])
    assert named == [2, 15, 16, 17, 18, 19]
    assert named_partitions({0: 1.0, 1: 9.0}, []) == [0, 1]  # a few partitions: all
    points = chart_points(grid([(p, ([1.0], [float(p)])) for p in range(20)]), named)
    assert {p["series"] for p in points} == {f"partition {p}" for p in named} | {OTHERS}
    others = [p for p in points if p["series"] == OTHERS]
    assert others == [{"seconds": 1.0, "series": OTHERS, "records": 7.5}]  # 0, 1, 3..14


def test_a_worker_series_stays_bounded_and_keeps_its_course():
    series = LoadSeries()
    series.add(0.0, 0)
    series.add(0.05, 3)  # within the gap: the latest count at the kept moment
    assert list(series.seconds) == [0.0] and list(series.records) == [3]
    for i in range(1, 10_000):
        series.add(i * 0.25, i)
    assert len(series.seconds) <= SERIES_POINTS
    assert series.seconds[0] == 0.0 and series.records[-1] >= 9_990
    assert list(series.seconds) == sorted(series.seconds)
    row = series.row((1, 2, 3, 0, 9))
    assert row["operator"] == 1 and row["partition"] == 3 and row["task"] == 9
    assert len(row["seconds"]) == len(row["records"]) == len(series.seconds)
    assert row["records"] == sorted(row["records"])
    assert pytest.approx(row["seconds"][-1], abs=series.gap) == 9_999 * 0.25


def test_the_empty_chart_has_a_titled_legend():
    """The sidebar draws the load over time before its first points: Vega lays out an
    empty legend without a title at Number.MAX_VALUE px (an SVG of 1.8e308 px, which hung
    the page), so its legend is titled."""
    from icedtea_jupyter.skew.chart import spec_with

    spec = spec_with("timeline", [], "sum: records in over time (live)")
    assert spec["encoding"]["color"]["title"] == "series"
    assert next(iter(spec["datasets"].values())) == []


@pytest.mark.parametrize("kind, title", [
    ("partitions", "sum: key records per partition (live)"),
    ("partitions", "a title Altair keeps whole"),
    ("heatmap", "records in per operator and partition"),
    ("heatmap_columns", {"text": "records in per operator and partition",
                         "subtitle": "a column: 5 partitions, coloured by its heaviest"}),
    ("timeline", "sum (combine): records in over time (final)"),
])
def test_a_spec_from_the_template_is_altairs_own(kind, title):
    """spec_with puts a title and rows into a spec Altair built once a kind: the same
    spec Altair builds for that title and those rows."""
    import pandas as pd

    from icedtea_jupyter.skew.chart import partitions_chart, spec_with
    from icedtea_jupyter.skew.heatmap import heatmap
    from icedtea_jupyter.skew.timeline import timeline_chart

    rows = {"partitions": [{"partition": 0, "segment": "'hot'", "load": 5.0,
                            "skewed": True}],
            "heatmap": [{"operator": "sum", "partition": 0, "records_in": 3,
                         "seconds": 0.5}],
            "heatmap_columns": [{"operator": "sum", "partition": 0, "records_in": 3,
                                 "seconds": 0.5, "last": 4, "heaviest": 2}],
            "timeline": [{"seconds": 0.25, "series": "partition 0", "records": 2.0}]}[kind]
    frame = pd.DataFrame(rows)
    chart = {"partitions": lambda: partitions_chart(frame, title, "key_records"),
             "heatmap": lambda: heatmap(frame, title),
             "heatmap_columns": lambda: heatmap(frame, title),
             "timeline": lambda: timeline_chart(frame, title)}[kind]()
    altairs = chart.to_dict()
    ours = spec_with(kind, rows, title, "key_records")
    assert ours["title"] == altairs["title"]
    assert next(iter(ours["datasets"].values())) == next(iter(altairs["datasets"].values()))
    assert {k: v for k, v in ours.items() if k not in ("datasets", "data")} == \
        {k: v for k, v in altairs.items() if k not in ("datasets", "data")}
