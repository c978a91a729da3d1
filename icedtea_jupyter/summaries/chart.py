"""An Altair (Vega-Lite 5) chart of a field in two runs: the quantile sketches' CDFs, one
line per run, so a shifted distribution shows as two curves apart."""
from __future__ import annotations

from typing import Any

import pandas as pd

from ..agents.summaries import FieldSketch
from ..skew.chart import _altair

POINTS = 50


def cdf_rows(sketch: FieldSketch, run: str) -> list[dict]:
    if sketch.kll.is_empty():
        return []
    ranks = [i / POINTS for i in range(POINTS + 1)]
    return [{"run": run, "value": value, "share": rank}
            for rank, value in zip(ranks, sketch.kll.get_quantiles(ranks))]


def shift_chart(operator: str, field: str, before: tuple[str, FieldSketch],
                after: tuple[str, FieldSketch]) -> Any:
    """Both runs' distributions of ``field`` of ``operator``'s input as CDF lines."""
    alt = _altair()
    rows = pd.DataFrame(cdf_rows(before[1], before[0]) + cdf_rows(after[1], after[0]),
                        columns=["run", "value", "share"])
    return (alt.Chart(rows, title=f"{operator}: {field}")
            .mark_line(interpolate="step-after")
            .encode(x=alt.X("value:Q", title=field),
                    y=alt.Y("share:Q", title="share of records ≤ value"),
                    color=alt.Color("run:N", sort=[before[0], after[0]],
                                    legend=alt.Legend(orient="bottom", title=None)),
                    tooltip=["run:N", "value:Q", "share:Q"])
            .properties(width=260, height=140))
