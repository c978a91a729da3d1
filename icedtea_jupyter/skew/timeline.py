"""An operator's load over time: the records each partition has taken in since the run
started, on a time grid (the skew report's third chart, live while the run records).

The workers' progress reports give each worker's records in at moments of its own
(``agents/progress.py`` ``LoadSeries``); here they are read at the end of every step of
one grid, a partition's workers summed, so partitions compare at the same moments. The
chart names the flagged and heaviest partitions and draws the rest as their median.
"""
from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from typing import Any, NamedTuple

import numpy as np
import pandas as pd

TIMELINE_COLUMNS = ["seconds", "partition", "records"]
POINT_COLUMNS = ["seconds", "series", "records"]
STEPS = (0.25, 0.5, 1.0, 2.0, 5.0, 10.0, 15.0, 30.0, 60.0, 120.0, 300.0, 600.0)
MAX_STEPS = 120  # grid points at most: a longer run takes a coarser step
NAMED_PARTITIONS = 6  # lines named in the chart; every partition if there are at most 8
ALL_NAMED = 8
OTHERS = "other partitions (median)"

# (seconds, records in) of one worker, times ascending
Series = tuple[Sequence[float], Sequence[float]]


def grid_step(span: float) -> float:
    """The grid's step for reports ``span`` seconds apart: the finest of ``STEPS`` that
    keeps at most ``MAX_STEPS`` points (a step changes rarely as a live run grows)."""
    for step in STEPS:
        if span / step <= MAX_STEPS - 1:
            return step
    return float(math.ceil(span / (MAX_STEPS - 1)))


class Grid(NamedTuple):
    """Each partition's records in so far (``records``: partitions × ticks) at the
    end of each grid step (``ticks``, seconds since the run started)."""

    ticks: np.ndarray
    partitions: list[int]
    records: np.ndarray


def on_grid(series: Iterable[tuple[int, Series]]) -> pd.DataFrame:
    """seconds, partition, records: ``grid``'s numbers, by partition then time."""
    g = grid(series)
    return pd.DataFrame({"seconds": np.tile(g.ticks, len(g.partitions)),
                         "partition": np.repeat(np.asarray(g.partitions, dtype="int64"),
                                                len(g.ticks)),
                         "records": g.records.ravel()}, columns=TIMELINE_COLUMNS)


def grid(series: Iterable[tuple[int, Series]]) -> Grid:
    """At each grid tick from the first report's to the last's, each partition's records
    in so far: its workers' latest counts summed, 0 before a worker's first report
    (numpy: a live push reads 200 partitions' series several times a second)."""
    by_partition: dict[int, list[Series]] = {}
    start, end = math.inf, 0.0
    for partition, (seconds, records) in series:
        if len(seconds):
            by_partition.setdefault(int(partition), []).append((seconds, records))
            start, end = min(start, float(seconds[0])), max(end, float(seconds[-1]))
    partitions = sorted(by_partition)
    if not partitions:
        return Grid(np.zeros(0), [], np.zeros((0, 0)))
    step = grid_step(end - start)
    first = max(math.ceil(start / step - 1e-9), 1)  # the first tick at or after a report
    last = max(math.ceil(end / step - 1e-9), first)
    ticks = np.round(step * np.arange(first, last + 1), 3)
    so_far = np.zeros((len(partitions), len(ticks)))
    for row, partition in enumerate(partitions):
        for seconds, counts in by_partition[partition]:
            at = np.searchsorted(np.asarray(seconds), ticks + 1e-9, side="right")
            so_far[row] += np.where(at > 0, np.asarray(counts, dtype=float)[at - 1], 0.0)
    return Grid(ticks, partitions, so_far)


def named_partitions(loads: dict[int, float], flagged: Iterable[int]) -> list[int]:
    """The partitions the chart names: all of them if there are at most ``ALL_NAMED``,
    else the flagged ones and the heaviest, ``NAMED_PARTITIONS`` in all."""
    if len(loads) <= ALL_NAMED:
        return sorted(loads)
    chosen = [p for p in sorted(set(flagged)) if p in loads][:NAMED_PARTITIONS]
    for partition in sorted(loads, key=lambda p: (-loads[p], p)):
        if len(chosen) >= NAMED_PARTITIONS:
            break
        if partition not in chosen:
            chosen.append(partition)
    return sorted(chosen)


def chart_points(g: Grid, named: Sequence[int]) -> list[dict]:
    """The chart's rows: seconds, series ("partition p", or the median of the rest at
    each moment as ``OTHERS``), records."""
    keep = set(named)
    ticks = [float(t) for t in g.ticks]
    points: list[dict] = []
    for row, partition in enumerate(g.partitions):
        if partition in keep:
            points.extend({"seconds": t, "series": f"partition {partition}",
                           "records": float(r)} for t, r in zip(ticks, g.records[row]))
    rest = [row for row, partition in enumerate(g.partitions) if partition not in keep]
    if rest:
        middle = np.median(g.records[rest], axis=0)
        points.extend({"seconds": t, "series": OTHERS, "records": float(r)}
                      for t, r in zip(ticks, middle))
    return points


def timeline_chart(points: pd.DataFrame, title: str) -> Any:
    """Lines of records in over time, one per named partition and one for the rest."""
    from .chart import _altair

    alt = _altair()
    return alt.Chart(points, title=title).mark_line(interpolate="step-after").encode(
        x=alt.X("seconds:Q", title="seconds since the run started"),
        y=alt.Y("records:Q", title="records in so far"),
        color=alt.Color("series:N", title="series", legend=alt.Legend(orient="bottom",
                                                                  columns=2)),
        tooltip=["series:N", alt.Tooltip("seconds:Q", format=".2f"),
                 alt.Tooltip("records:Q", format=",.0f")],
    ).properties(width=360, height=140)
