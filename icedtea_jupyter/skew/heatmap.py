"""The skew report's heat map: every Python operator's (and JVM stage's) records in on
every partition, drawn in at most ``MAX_COLUMNS`` columns.

Over ``MAX_COLUMNS`` partitions a column covers ``span`` neighbouring partitions and
shows its heaviest one (its number, records in and seconds), so a skewed partition
stays as hot as it is. At 200 partitions a cell each is a pixel wide in the sidebar, and
redrawing 2,400 cells at every live update cost frames over 100 ms there (issue 13's
budget); ``s.partitions`` keeps every partition's numbers.
"""
from __future__ import annotations

from typing import Any

import pandas as pd

from ..dag import Dag

MAX_COLUMNS = 40
HEATMAP_TITLE = "records in per operator and partition"
CELL_COLUMNS = ["operator", "partition", "records_in", "seconds"]
SPAN_COLUMNS = CELL_COLUMNS + ["last", "heaviest"]  # a column of several partitions


def partition_cells(workers: list[dict], dag: Dag) -> list[dict]:
    """One cell per (Python operator, partition), its workers' records in and seconds
    summed, sorted by operator name and partition (no pandas: a live push makes 2,400)."""
    names = dag.names()
    cells: dict[tuple[str, int], dict] = {}
    for w in workers:
        if w["operator"] < 0:  # a stage's tasks (stages.stage_cells draws JVM stages)
            continue
        operator = names.get(w["operator"], str(w["operator"]))
        cell = cells.setdefault((operator, int(w["partition"])), {
            "operator": operator, "partition": int(w["partition"]), "records_in": 0,
            "seconds": 0.0})
        cell["records_in"] += int(w.get("records_in") or 0)
        cell["seconds"] += float(w.get("seconds") or 0.0)
    return [cells[key] for key in sorted(cells)]


def partition_count(cells: list[dict], dag: Dag) -> int:
    """The partitions the heat map spans: the most any Python operator has, where Spark
    said, else the highest seen (live, before every partition has reported)."""
    known = [n.partitions for n in dag.python_operators if n.partitions]
    seen = max((c["partition"] for c in cells), default=-1) + 1
    return max(known + [seen])


def column_span(partitions: int) -> int:
    """Partitions a column covers: 1 up to ``MAX_COLUMNS`` partitions."""
    return max(1, -(-partitions // MAX_COLUMNS))


def in_columns(cells: list[dict], partitions: int) -> list[dict]:
    """``cells`` in at most ``MAX_COLUMNS`` columns an operator: over that, each column's
    heaviest partition (records in), with ``partition`` the column's first partition and
    ``last`` its last. Operators keep their order."""
    span = column_span(partitions)
    if span == 1:
        return cells
    columns: dict[tuple[str, int], dict] = {}
    for cell in cells:
        first = cell["partition"] // span * span
        column = columns.get((cell["operator"], first))
        if column is None or cell["records_in"] > column["records_in"]:
            columns[(cell["operator"], first)] = {
                "operator": cell["operator"], "partition": first,
                "records_in": cell["records_in"], "seconds": cell["seconds"],
                "last": min(first + span, max(partitions, cell["partition"] + 1)) - 1,
                "heaviest": cell["partition"]}
    return list(columns.values())


def heatmap_title(span: int) -> str | dict:
    """The heat map's title, as Altair writes it: a column of several partitions says
    so in a subtitle."""
    if span == 1:
        return HEATMAP_TITLE
    return {"text": HEATMAP_TITLE,
            "subtitle": f"a column: {span} partitions, coloured by its heaviest"}


def heatmap_chart(cells: list[dict], span: int) -> Any:
    """``heatmap`` of ``in_columns``'s ``cells``, their columns ``span`` partitions each."""
    frame = pd.DataFrame(cells, columns=SPAN_COLUMNS if span > 1 else CELL_COLUMNS)
    return heatmap(frame, heatmap_title(span))


def heatmap_spec(cells: list[dict], span: int) -> dict:
    """``heatmap_chart``'s Vega-Lite spec, from the template Altair built once
    (``chart.spec_with``: a live sidebar gets it several times a second)."""
    from .chart import spec_with

    return spec_with("heatmap_columns" if span > 1 else "heatmap", cells,
                     heatmap_title(span))


def heatmap(cells: pd.DataFrame, title: str | dict = HEATMAP_TITLE) -> Any:
    """Partitions × operators, coloured by records in; ``cells`` with ``last`` and
    ``heaviest`` (``in_columns`` over ``MAX_COLUMNS`` partitions): a column each."""
    from .chart import _altair

    alt = _altair()
    shown = title if isinstance(title, str) else alt.TitleParams(**title)
    chart = alt.Chart(cells, title=shown)
    if "heaviest" not in cells.columns:
        return chart.mark_rect().encode(
            x=alt.X("partition:O"), y=alt.Y("operator:N", sort=None),
            color=alt.Color("records_in:Q", title="records in"),
            tooltip=["operator:N", "partition:O", alt.Tooltip("records_in:Q", format=","),
                     alt.Tooltip("seconds:Q", format=".2f")],
        ).properties(width=360)
    return chart.transform_calculate(
        partitions="datum.partition + '–' + datum.last"
    ).mark_rect().encode(
        x=alt.X("partition:O", title="partition (a column's first)",
                axis=alt.Axis(labelOverlap=True)),
        y=alt.Y("operator:N", sort=None),
        color=alt.Color("records_in:Q", title="records in (heaviest)"),
        tooltip=["operator:N", "partitions:N", "heaviest:O",
                 alt.Tooltip("records_in:Q", format=","),
                 alt.Tooltip("seconds:Q", format=".2f")],
    ).properties(width=360)
