"""Altair (Vega-Lite 5) charts of a skew report: one spec for the cell and the sidebar.

``partitions_chart``: a bar per partition of the operator's load, stacked by its heavy
keys (the eight heaviest by name, live also those rising now, the rest of the partition
as ``other``), flagged
partitions outlined; clicking a bar selects the partition (the ``partition`` parameter:
the sidebar listens to it and lists the partition's keys). ``side_by_side``: two runs'
bars with their wall times (a mitigation against the run it fixes). The heat map is
``heatmap.py``'s; ``spec_with`` builds any of them from a cached template.
"""
from __future__ import annotations

import json
from functools import lru_cache
from typing import Any

import pandas as pd

NAMED_KEYS = 8
OTHER = "other"


def _altair() -> Any:
    """Altair, drawing with JupyterLab's own Vega renderer: Altair's default renderer
    loads vega from a CDN, which a notebook offline cannot reach (a user's choice of
    another renderer stays)."""
    import altair as alt

    if alt.renderers.active == "default":
        alt.renderers.enable("mimetype")
    return alt


STACKED_COLUMNS = ["partition", "segment", "load", "skewed"]


def with_rising(keys: pd.DataFrame, rising: pd.DataFrame | None) -> pd.DataFrame:
    """``keys`` (a ``Keys.frame``) and after them the ``rising`` keys not among them."""
    if rising is None or rising.empty:
        return keys
    more = rising[~rising["key"].map(repr).isin(set(keys["key"].map(repr)))]
    return pd.concat([keys, more], ignore_index=True) if not more.empty else keys


def named_keys(keys: pd.DataFrame, rising: pd.DataFrame | None = None) -> pd.DataFrame:
    """The keys a chart names: the ``NAMED_KEYS`` heaviest, and (live) the ``rising``
    ones (``Keys.rising``: heavy now) not among them."""
    return with_rising(keys.head(NAMED_KEYS), rising)


def stacked_records(partitions: pd.DataFrame, keys: pd.DataFrame, load: str,
                    flagged: set[int], rising: pd.DataFrame | None = None) -> list[dict]:
    """One record per (partition, key segment): the named heavy keys' records
    (``named_keys``) and the rest."""
    named: dict[int, list[tuple[Any, float]]] = {}
    if load == "key_records":
        top = named_keys(keys, rising)
        for key, count, part in zip(top["key"], top["count"], top["partition"]):
            named.setdefault(int(part), []).append((key, float(count)))
    rows = []
    for part, total in zip(partitions["partition"], partitions[load]):
        part, skewed = int(part), int(part) in flagged
        used = 0.0
        for key, count in named.get(part, ()):
            rows.append({"partition": part, "segment": repr(key), "load": count,
                         "skewed": skewed})
            used += count
        rows.append({"partition": part, "segment": OTHER,
                     "load": max(float(total or 0) - used, 0.0), "skewed": skewed})
    return rows


def stacked_rows(partitions: pd.DataFrame, keys: pd.DataFrame, load: str,
                 flagged: set[int]) -> pd.DataFrame:
    """``stacked_records`` as a frame."""
    return pd.DataFrame(stacked_records(partitions, keys, load, flagged),
                        columns=STACKED_COLUMNS)


def partitions_chart(rows: pd.DataFrame, title: str, load: str) -> Any:
    """Bars per partition stacked by heavy key; a click selects a partition. A title
    "operator: load per partition (state)" is drawn on two lines, which fit the sidebar."""
    alt = _altair()
    pick = alt.selection_point(name="partition", fields=["partition"], on="click")
    head, cut, tail = title.partition(" per partition")
    shown = alt.TitleParams(head, subtitle="per partition" + tail, anchor="start") if cut \
        else title
    return alt.Chart(rows, title=shown).mark_bar().encode(
        x=alt.X("partition:O", title="partition"),
        y=alt.Y("load:Q", title=load.replace("_", " ")),
        color=alt.Color("segment:N", title="key", legend=alt.Legend(orient="bottom",
                                                                    columns=2)),
        stroke=alt.condition("datum.skewed", alt.value("#d62728"), alt.value(None)),
        strokeWidth=alt.condition("datum.skewed", alt.value(2), alt.value(0)),
        opacity=alt.condition(pick, alt.value(1.0), alt.value(0.55)),
        tooltip=["partition:O", "segment:N", alt.Tooltip("load:Q", format=",.0f"),
                 "skewed:N"],
    ).add_params(pick).properties(width=360, height=180)


TEMPLATE_TITLE = "operator: load per partition (state)"  # its place in a template


@lru_cache(maxsize=16)
def _template(kind: str, load: str) -> str:
    """A chart's Vega-Lite spec without its data or title (Altair builds it once a kind
    and load: ~0.1 s idle, over a second on a kernel sharing busy cores)."""
    if kind == "partitions":
        chart = partitions_chart(pd.DataFrame(columns=STACKED_COLUMNS), TEMPLATE_TITLE, load)
    elif kind == "timeline":
        from .timeline import POINT_COLUMNS, timeline_chart

        chart = timeline_chart(pd.DataFrame(columns=POINT_COLUMNS), TEMPLATE_TITLE)
    else:
        from .heatmap import CELL_COLUMNS, SPAN_COLUMNS, heatmap

        columns = SPAN_COLUMNS if kind == "heatmap_columns" else CELL_COLUMNS
        chart = heatmap(pd.DataFrame(columns=columns), TEMPLATE_TITLE)
    return json.dumps(chart.to_dict())


def warm_templates() -> None:
    """Build the live view's templates now (the bars by either load, the heat map of
    either form, the load over time), so a run's first push does not wait for Altair."""
    for kind, load in (("partitions", "key_records"), ("partitions", "records"),
                       ("heatmap", ""), ("heatmap_columns", ""), ("timeline", "")):
        _template(kind, load)


def title_json(kind: str, title: str | dict) -> Any:
    """The spec's ``title`` as Altair writes it for ``title``: the bars' split in two
    lines (``partitions_chart``), the others' as they are (a dict: as Altair writes it)."""
    if not isinstance(title, str):
        return title
    head, cut, tail = title.partition(" per partition")
    if kind == "partitions" and cut:
        return {"text": head, "subtitle": "per partition" + tail, "anchor": "start"}
    return title


def spec_with(kind: str, records: list[dict], title: str | dict, load: str = "") -> dict:
    """The Vega-Lite spec of ``partitions_chart`` (kind "partitions"), ``heatmap`` (kind
    "heatmap", or "heatmap_columns" for columns of several partitions) or
    ``timeline_chart`` (kind "timeline") titled ``title`` and holding ``records``:
    Altair's spec is built once a kind and load, and only its title and its one
    dataset put in (a live sidebar gets reports several times a second)."""
    spec = json.loads(_template(kind, load))
    spec["title"] = title_json(kind, title)
    spec["datasets"] = {spec["data"]["name"]: records}
    return spec


def side_by_side(before: Any, after: Any, wall: tuple[float, float]) -> Any:
    """Two charts side by side, each titled with its run's wall time."""
    alt = _altair()
    return alt.hconcat(before.properties(title=f"before: {wall[0]:.2f} s", width=260),
                       after.properties(title=f"after: {wall[1]:.2f} s", width=260))
