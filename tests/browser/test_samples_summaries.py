"""Samples per DAG edge and summaries compared across runs, in real JupyterLab and headless
Chromium. A cell recorded with ``--agent samples --agent summaries`` runs twice, a global
it reads changed in between (a value shifted by 40, a name field null): the Samples
section opens an edge's sample as a table; the Summaries section compares the second
run with the first, lists the shifted field and the field that became null, and draws
the shifted field's chart."""
from __future__ import annotations

import pytest
from test_sidebar import show_sidebar
from test_versions import SESSION, run_twice

pytestmark = pytest.mark.browser

expect = pytest.importorskip("playwright.sync_api").expect

NOTEBOOK = "samples_summaries.ipynb"
CELLS = [
    SESSION + "SHIFT, NULL = 0, False",
    "%%icedtea --wait --no-panel --agent samples --agent summaries\n"
    "def make(i):\n"
    "    return (i, None if NULL else 'n%d' % (i % 7), (i % 100) + SHIFT)\n"
    "pairs = (sc.parallelize(range(40_000), 2).map(make).setName('make')\n"
    "         .map(lambda r: (r[0], r[2])).setName('pair').collect())",
    "SHIFT, NULL = 40, True",
]


def test_an_edge_sample_opens_and_two_runs_summaries_show_the_shift(page, lab_server,
                                                                    artifacts):
    run_twice(page, lab_server, NOTEBOOK, CELLS)
    sidebar = show_sidebar(page)
    expect(sidebar.locator(".jp-icedtea-run-item")).to_have_count(2, timeout=60_000)
    sidebar.locator('.jp-icedtea-open-wide[data-section="samples"]').click()
    samples = page.locator("#jp-main-dock-panel .jp-icedtea-SamplesView")
    expect(samples).to_be_visible(timeout=30_000)
    edge = samples.locator('.jp-icedtea-edge[data-edge="make->pair"]')
    edge.click()
    table = samples.locator(".jp-icedtea-sample-table")
    expect(table.locator("th")).to_have_text(["_1", "_2", "_3", "_partition"], timeout=30_000)
    expect(table.locator("tbody tr")).to_have_count(100)  # K records of 40,000
    expect(table.locator("tbody tr").first.locator("td").nth(1)).to_have_text("null")
    page.screenshot(path=str(artifacts / "samples.png"))

    sidebar.locator('.jp-icedtea-open-wide[data-section="summaries"]').click()
    summaries = page.locator("#jp-main-dock-panel .jp-icedtea-SummariesView")
    expect(summaries).to_be_visible(timeout=30_000)
    changes = summaries.locator(".jp-icedtea-summary-changes tbody tr")
    expect(changes).to_have_count(2, timeout=30_000)
    expect(summaries.locator('tr[data-change="distribution shifted"] td').nth(1)).to_have_text("_3")
    expect(summaries.locator('tr[data-change="became null"] td').nth(1)).to_have_text("_2")
    chart = summaries.locator('.jp-icedtea-summary-chart[data-field="_3"]')
    expect(chart).to_have_attribute("data-state", "drawn", timeout=30_000)
    expect(chart.locator("svg")).to_be_visible()
    page.screenshot(path=str(artifacts / "summaries.png"))
