"""The Skew section in real JupyterLab: a skewed reduceByKey recorded with --skew, the
chart (and the load over time) live while the map side runs and updating, then final:
the flagged partition, its line in the load over time, and a click on its bar listing
its heavy keys, as run.skew('sum') says."""
from __future__ import annotations

import json
import re

import pytest
from conftest import notebook_json
from skew_notebook import skew_cells
from test_sidebar import RUN_FINISHED, collapse, open_notebook, show_sidebar, widen_left_area
from test_time_travel import run_cells, run_code

from tests.waiting import FileGate, wait_until

pytestmark = pytest.mark.browser

expect = pytest.importorskip("playwright.sync_api").expect

LIVE = 60_000


def only_skew_open(sidebar) -> None:
    """Collapse the other sections: the Skew section gets the sidebar's height."""
    for name in ("run", "interactions", "steps", "snapshot"):
        collapse(sidebar, name)
    skew = sidebar.locator('.lm-AccordionPanel-title[aria-controls="icedtea-section-skew"]')
    if skew.get_attribute("aria-expanded") != "true":
        skew.click()


def hot_bar_label(chart) -> str | None:
    """The aria-label Vega gives the hot key's bar (its partition and load), if drawn."""
    bars = chart.locator("svg path[aria-label*=\"segment: 'hot'\"]")
    return bars.first.get_attribute("aria-label") if bars.count() else None


def click_hot_bar(view, chart, hot: int):
    """Click partition ``hot``'s bar of the 'hot' key: its keys are listed, 'hot' first."""
    bar = chart.locator(f"svg path[aria-label*=\"partition: {hot}\"]"
                        "[aria-label*=\"segment: 'hot'\"]")
    expect(bar).to_have_count(1)
    bar.click()
    keys = view.locator(".jp-icedtea-SkewKeys")
    expect(keys).to_have_attribute("data-partition", str(hot))
    rows = keys.locator(".jp-icedtea-skew-key")
    expect(rows.first.locator(".jp-icedtea-skew-key-name")).to_have_text("'hot'")
    return rows


# The keys list's first row and its text, kept to see the list change in place live.
FIRST_KEY_ROW = "document.querySelector('#icedtea-sidebar .jp-icedtea-skew-key')"
KEEP_FIRST_KEY_ROW = f"""() => {{
  window.__keyRow = {FIRST_KEY_ROW};
  window.__keyText = window.__keyRow.textContent;
}}"""


def svg_size(chart) -> tuple[float, float]:
    """The width and height of the chart's SVG (its viewBox)."""
    _, _, width, height = map(float, chart.locator("svg").first.get_attribute("viewBox").split())
    return width, height


def test_the_skew_chart_live_then_a_click_lists_the_partitions_keys(page, lab_server,
                                                                    artifacts, tmp_path):
    live = FileGate(tmp_path / "live")
    try:
        watch_skew(page, lab_server, artifacts, live)
    finally:
        live.open()  # nothing stays held at the gate


def watch_skew(page, lab_server, artifacts, live):
    (lab_server.root / "icedtea-skew.ipynb").write_text(
        json.dumps(notebook_json(skew_cells(live)), indent=1))
    notebook = open_notebook(page, lab_server, "icedtea-skew.ipynb")
    run_cells(page, notebook, 2)
    sidebar = show_sidebar(page)
    widen_left_area(page, 520)
    runs = sidebar.locator(".jp-icedtea-run-item")
    expect(runs).to_have_count(1, timeout=RUN_FINISHED)
    only_skew_open(sidebar)
    view = sidebar.locator(".jp-icedtea-SkewView")
    chart = view.locator(".jp-icedtea-skew-chart")
    timeline = view.locator(".jp-icedtea-skew-timeline")  # the load over time

    # Live: the map side counts keys; the chart appears while the run records ...
    expect(view).to_have_attribute("data-live", "true", timeout=RUN_FINISHED)
    expect(chart).to_have_attribute("data-state", "drawn", timeout=LIVE)
    first = wait_until(lambda: hot_bar_label(chart), LIVE / 1000, "the hot key's bar")
    expect(view.locator(".jp-icedtea-skew-key").first).to_be_visible(timeout=LIVE)
    page.evaluate(KEEP_FIRST_KEY_ROW)
    remedy = view.locator(".jp-icedtea-skew-remedy").first  # the advice, live too
    remedy.locator("summary").click()
    # ... and updates as the counts grow (a sketch a second from each map task)
    wait_until(lambda: (hot_bar_label(chart) or first) != first, LIVE / 1000,
               f"the hot key's bar to change from {first!r}")
    assert view.get_attribute("data-live") == "true"  # still recording
    # The keys list changes in place: the same row, its counts' text changed.
    wait_until(lambda: page.evaluate(f"() => {FIRST_KEY_ROW}.textContent !== window.__keyText"),
               LIVE / 1000, "the first key row's counts to change")
    assert page.evaluate(f"() => {FIRST_KEY_ROW} === window.__keyRow"), "key rows made anew"
    expect(remedy).to_have_attribute("open", "")  # the remedy opened stays open
    # The load over time is drawn live too, if only its frame (no points yet), at the
    # sidebar's size: Vega laid an empty line chart out at 1.8e308 px, which hung the page.
    expect(timeline).to_have_attribute("data-state", "drawn", timeout=LIVE)
    expect(timeline).to_have_attribute("data-live", "true")
    assert max(svg_size(timeline)) < 2000, svg_size(timeline)
    timeline.scroll_into_view_if_needed()
    timeline.screenshot(path=str(artifacts / "skew-timeline-live.png"))
    assert view.get_attribute("data-live") == "true"
    page.screenshot(path=str(artifacts / "skew-live.png"))
    live.open()

    # Final: the flagged partition, from the store (the collapsed Run section redraws
    # only when expanded: the Skew view tells the run has ended).
    expect(view).to_have_attribute("data-live", "false", timeout=RUN_FINISHED)
    flag = view.locator(".jp-icedtea-skew-flag[data-rule='reshape']")
    expect(flag).to_have_count(1, timeout=LIVE)
    hot = int(flag.get_attribute("data-partition"))
    expected = run_code(page, notebook, "import icedtea_jupyter as _it; _s = _it.last_run()"
                        ".skew('sum'); print(_s.skewed.partition.unique().tolist(), "
                        "_s.keys.partition[0])", "skew api")
    assert expected.strip() == f"[{hot}] {hot}", expected

    # A click on the hot partition's bar lists its heavy keys: 'hot' first.
    rows = click_hot_bar(view, chart, hot)
    for row in rows.all():
        assert row.get_attribute("data-partition") == str(hot)
    expect(view.locator(".jp-icedtea-skew-remedy[data-remedy='salt']")).to_have_count(1)
    heatmap = view.locator(".jp-icedtea-skew-heatmap")  # every operator's partitions
    expect(heatmap).to_have_attribute("data-state", "drawn")
    expect(heatmap.locator("svg path[aria-label*='operator: sum (combine)']")).to_have_count(2)
    # The load over time, final: of the map side, which took in records over the longer
    # time (run.skew('sum').timeline_operator), a named SVG line per map partition. Vega
    # gives a line's path the aria-label of its first point: "seconds since the run
    # started: 0.25; records in so far: 0; series: partition 1; seconds: 0.25; ...".
    expect(timeline).to_have_attribute("data-state", "drawn")
    expect(timeline).to_have_attribute("data-live", "false")
    assert timeline.get_attribute("data-renderer") == "svg"
    expect(timeline.locator("svg")).to_contain_text("sum (combine): records in over time")
    for partition in (0, 1):
        expect(timeline.locator(f"svg path[aria-label*='series: partition {partition};']")
               ).to_have_count(1)
    assert max(svg_size(timeline)) < 2000, svg_size(timeline)
    timeline.scroll_into_view_if_needed()
    timeline.screenshot(path=str(artifacts / "skew-timeline.png"))
    page.screenshot(path=str(artifacts / "skew.png"))
    assert not [e for e in page.console_errors if re.search(r"vega|skew", e, re.I)], \
        page.console_errors
