"""The IcedTea sidebar at its default width (~250 px), in real JupyterLab.

A prepared notebook records two runs: a large one (1.2 million records: the widest
numbers) and the fraud pipeline with a shuffle after θ's chain (a count by customer)
and two condition interactions that fall at the same moment. The sidebar is opened
without widening it, and the test checks what a user would see: no column of the
operators table is cut off (each header cell lies inside the table's visible box), no
number is cut short, no text of a row lies over another one (operators, partitions,
interactions, steps), every section's title is on screen (the Snapshot is one click
away), the step buttons and the status line say the same thing, and "Open in the main
area" shows the operators table with room. Screenshots go to ``test-artifacts/`` only.
"""
from __future__ import annotations

import json
import re

import pytest
from conftest import notebook_json
from test_sidebar import RUN_FINISHED, open_notebook, show_sidebar

pytestmark = pytest.mark.browser

expect = pytest.importorskip("playwright.sync_api").expect

STEP = 30_000  # a jump or a step, and the states it shows
NOTEBOOK = "icedtea-fits.ipynb"

CELLS = [
    "%load_ext icedtea_jupyter\n"
    "import os\n"
    "os.environ.setdefault('SPARK_LOCAL_IP', '127.0.0.1')\n"
    "from pyspark.sql import SparkSession\n"
    "spark = (SparkSession.builder.master('local[2]').appName('fits')\n"
    "         .config('spark.ui.showConsoleProgress', 'false').getOrCreate())\n"
    "spark.sparkContext.setLogLevel('ERROR')\n"
    "from icedtea_jupyter.examples.fraud import PAYMENTS, FeatureEnrichment, FraudDetector, FraudFilter",
    "%%icedtea\n"
    "big = (spark.sparkContext.parallelize(range(1_200_000), 4)\n"
    "       .map(lambda x: (x % 50, x)).setName('key by the last two digits')\n"
    "       .filter(lambda kv: kv[1] % 3 == 0).setName('multiples of three').count())",
    "%%icedtea --interesting enrich --interact-when \"row.amount == 60 or '¥' in row.currency\" --record-inputs\n"
    "payments = spark.createDataFrame(PAYMENTS, 'customer string, amount double, currency string')\n"
    "counts = (payments.rdd.keyBy(lambda r: r.customer).partitionBy(2).values()\n"
    "          .mapPartitions(FeatureEnrichment()).setName('enrich')\n"
    "          .mapPartitions(FraudDetector()).setName('detect')\n"
    "          .mapPartitions(FraudFilter()).setName('filter')\n"
    "          .map(lambda p: (p[0], 1)).setName('one per approved payment of a customer')\n"
    "          .reduceByKey(lambda a, b: a + b).setName('count')\n"
    "          .collect())",
]

OVERLAPS = r"""
([rowSelector]) => {
  const box = e => { const r = e.getBoundingClientRect(); return {x: r.left, y: r.top, r: r.right, b: r.bottom}; };
  const shown = e => { const r = e.getBoundingClientRect(); return r.width > 0 && r.height > 0; };
  const overlaps = (a, b) => Math.min(a.r, b.r) - Math.max(a.x, b.x) > 0.5 &&
                             Math.min(a.b, b.b) - Math.max(a.y, b.y) > 0.5;
  const found = [];
  const rows = [...document.querySelectorAll(rowSelector)].filter(shown);
  for (const row of rows) {
    // The row's texts: the innermost elements that hold text (a cell, a span).
    const texts = [...row.querySelectorAll('*')].filter(e => shown(e) && e.childElementCount === 0 &&
                                                            e.textContent.trim() !== '');
    for (let i = 0; i < texts.length; i++) {
      for (let j = i + 1; j < texts.length; j++) {
        if (texts[i].contains(texts[j]) || texts[j].contains(texts[i])) continue;
        if (overlaps(box(texts[i]), box(texts[j]))) {
          found.push(`${texts[i].textContent.trim()} / ${texts[j].textContent.trim()}`);
        }
      }
    }
  }
  return {rows: rows.length, found};
}
"""

CLIPPED_HEADERS = r"""
(table) => {
  // The table's visible box: its own box within the scrolled section that shows it.
  const t = table.getBoundingClientRect();
  const scroller = table.closest('.jp-icedtea-section, .jp-icedtea-Wide, #icedtea-sidebar');
  const s = scroller.getBoundingClientRect();
  const left = Math.max(t.left, s.left), right = Math.min(t.right, s.right);
  const cells = [...table.querySelectorAll('thead th')];
  return {
    cells: cells.map(th => th.textContent),
    clipped: cells.filter(th => { const r = th.getBoundingClientRect();
                                  return r.width <= 0 || r.left < left - 0.5 || r.right > right + 0.5 ||
                                         th.scrollWidth > th.clientWidth + 1; })
                  .map(th => th.textContent),
    width: right - left,
    sideways: scroller.scrollWidth > scroller.clientWidth + 1,
  };
}
"""


CUT_NUMBERS = r"""
(root) => [...root.querySelectorAll('td.jp-icedtea-num, .jp-icedtea-partition-row > .jp-icedtea-num')]
  .filter(e => e.getBoundingClientRect().width > 0 && e.scrollWidth > e.clientWidth + 1)
  .map(e => e.textContent)
"""


def no_overlaps(page, selector: str, minimum: int = 1) -> int:
    result = page.evaluate(OVERLAPS, [selector])
    assert result["rows"] >= minimum, f"{selector}: {result['rows']} rows shown"
    assert not result["found"], f"{selector}: texts over each other: {result['found']}"
    return result["rows"]


def table_headers_clipped(run) -> list:
    """The operators table's header cells outside its visible box (none, at any width)."""
    headers = run.locator("table.jp-icedtea-operators").evaluate(CLIPPED_HEADERS)
    assert headers["cells"] == ["Operator", "In", "Out", "Parts", "Rate"], headers
    assert not headers["sideways"], f"the table scrolls sideways: {headers}"
    return headers["clipped"]


def section(sidebar, name: str):
    return sidebar.locator(f'.jp-icedtea-section[data-section="{name}"]')


def title_of(sidebar, name: str):
    return sidebar.locator(f'.lm-AccordionPanel-title[aria-controls="icedtea-section-{name}"]')


def test_the_sidebar_fits_its_default_width(page, lab_server, artifacts):
    (lab_server.root / NOTEBOOK).write_text(json.dumps(notebook_json(CELLS), indent=1))
    notebook = open_notebook(page, lab_server, NOTEBOOK)
    notebook.locator(".jp-Cell").first.click()
    page.keyboard.press("Shift+Enter")
    page.keyboard.press("Shift+Enter")
    sidebar = show_sidebar(page)
    width = sidebar.bounding_box()["width"]
    assert 200 <= width <= 320, f"the sidebar is {width} px wide, not its default"
    run = sidebar.locator(".jp-icedtea-RunView")  # the Run section's view
    header = run.locator(".jp-icedtea-run-header")
    items = sidebar.locator(".jp-icedtea-run-item")

    # The large run: no column cut off, no number cut short, no text over another.
    expect(items).to_have_count(1, timeout=RUN_FINISHED)
    expect(header.locator(".jp-icedtea-badge")).to_have_text("finished", timeout=RUN_FINISHED)
    big = run.locator('.jp-icedtea-op-row[data-operator="key by the last two digits"]')
    expect(big).to_have_attribute("data-status", "done", timeout=30_000)
    big.click()
    expect(run.locator(".jp-icedtea-partition-row")).to_have_count(4, timeout=15_000)
    sidebar.screenshot(path=str(artifacts / "fits-large-run.png"))
    assert not table_headers_clipped(run)
    assert not run.evaluate(CUT_NUMBERS), run.evaluate(CUT_NUMBERS)
    no_overlaps(page, "#icedtea-sidebar .jp-icedtea-op-row", 2)
    no_overlaps(page, "#icedtea-sidebar .jp-icedtea-partition-row", 4)
    expect(big.locator(".jp-icedtea-records-in")).to_have_text("1.20M")
    expect(run.locator(".jp-icedtea-partition-row").first).to_contain_text("in 300,000")
    expect(run.locator(".jp-icedtea-runs-toggle")).to_be_hidden()  # one run: no list to repeat it

    # The fraud run, the newest, is shown when it starts; the large one is one pick away.
    notebook.locator(".jp-Cell").nth(2).locator(".jp-InputPrompt").click()  # focus back in the notebook
    page.keyboard.press("Shift+Enter")
    expect(items).to_have_count(2, timeout=RUN_FINISHED)
    expect(header.locator(".jp-icedtea-badge")).to_have_text("finished", timeout=RUN_FINISHED)
    toggle = run.locator(".jp-icedtea-runs-toggle")
    expect(toggle).to_have_text("2 runs ▾")
    toggle.click()
    expect(run.locator(".jp-icedtea-runs")).to_be_visible()
    expect(items.first).to_have_class(re.compile("jp-mod-selected"))  # newest first
    expect(header).to_have_count(1)  # the selected run's header, once
    items.first.click()  # keep the fraud run: the list closes
    expect(run.locator(".jp-icedtea-runs")).to_be_hidden()

    # The fraud run: the operators by the kernel's names.
    rows = run.locator(".jp-icedtea-op-row")
    expect(rows).to_have_count(7, timeout=30_000)  # θ's chain, the map, both sides of the count
    names = [rows.nth(i).get_attribute("data-operator") for i in range(rows.count())]
    assert names.count("count") == 1 and "count (merge)" not in rows.all_inner_texts()[-1], names
    for i in range(rows.count()):
        assert rows.nth(i).locator(".jp-icedtea-op-label").inner_text() == names[i]

    # No column cut off: every header cell inside the table's visible box.
    assert not table_headers_clipped(run)
    assert not run.evaluate(CUT_NUMBERS), run.evaluate(CUT_NUMBERS)
    # The run has ended: every operator shows its average rate, in the Rate column.
    for i in range(rows.count()):
        expect(rows.nth(i).locator(".jp-icedtea-rate")).to_have_text(re.compile(r"\d.*/s"))
    # Parts has a legend.
    expect(run.locator(".jp-icedtea-operators-legend")).to_contain_text("Parts: partitions")

    # Operators and an expanded operator's partitions: no text over another.
    theta = run.locator('.jp-icedtea-op-row[data-operator="enrich"]')
    theta.click()
    expect(run.locator(".jp-icedtea-partition-row").first).to_be_visible(timeout=15_000)
    no_overlaps(page, "#icedtea-sidebar .jp-icedtea-op-row", 7)
    no_overlaps(page, "#icedtea-sidebar .jp-icedtea-operators thead tr")
    no_overlaps(page, "#icedtea-sidebar .jp-icedtea-partition-row", 2)
    sidebar.screenshot(path=str(artifacts / "fits-run.png"))

    # Every section's title is on screen: the Snapshot is one click away.
    viewport = page.viewport_size
    for name in ("run", "interactions", "steps", "snapshot", "skew", "lineage", "versions"):
        box = title_of(sidebar, name).bounding_box()
        assert box and 0 <= box["y"] and box["y"] + box["height"] <= viewport["height"], (name, box)

    # Interactions: the two conditions at the same moment are two rows, and two markers.
    timeline = section(sidebar, "interactions")
    conditions = timeline.locator('.jp-icedtea-interaction[data-trigger="condition"]')
    expect(conditions).to_have_count(2, timeout=15_000)
    expect(timeline.locator(".jp-icedtea-timeline-count")).to_have_text("3 interactions")
    no_overlaps(page, "#icedtea-sidebar .jp-icedtea-interaction", 3)

    # Jump to the yen interaction: the steps' rows fit, and the status line counts the
    # enabled buttons.
    yen = conditions.filter(has_text="¥")
    yen.click()
    snapshot = section(sidebar, "snapshot")
    expect(snapshot.locator(".jp-icedtea-SnapshotView")).to_have_attribute("data-mode", "debug", timeout=STEP)
    steps = section(sidebar, "steps")
    expect(steps.locator(".jp-icedtea-partition-steps").first).to_be_visible(timeout=STEP)
    no_overlaps(page, "#icedtea-sidebar .jp-icedtea-partition-steps", 1)
    # The jump is done when the status stops saying "Working: jump to …".
    expect(steps.locator(".jp-icedtea-step-status")).not_to_contain_text("Working", timeout=STEP)
    status = steps.locator(".jp-icedtea-step-status").inner_text()
    over = int(steps.locator('[data-action="step-over"]:enabled').count())
    assert re.search(rf"Over on {over if over else 'none'}\b", status) or (
        over > 1 and "Over on all" in status), (status, over)
    # What each button of the selected partition does, or why not, in words.
    expect(steps.locator(".jp-icedtea-step-why li")).to_have_count(3)

    # The snapshot: reachable, and it says what its highlights compare with.
    title_of(sidebar, "snapshot").scroll_into_view_if_needed()
    state_title = snapshot.locator(".jp-icedtea-snapshot-title")
    state_title.scroll_into_view_if_needed()
    expect(state_title).to_be_visible()
    expect(snapshot.locator(".jp-icedtea-snapshot-comparison")).to_contain_text(
        re.compile(r"since I\d, the interaction before"))
    page.screenshot(path=str(artifacts / "fits-sidebar.png"))
    sidebar.screenshot(path=str(artifacts / "fits-sidebar-only.png"))

    # Open in the main area: the same operators, with room for the table.
    sidebar.locator('.jp-icedtea-open-wide[data-section="run"]').click()
    wide = page.locator("#icedtea-wide-run")
    expect(wide).to_be_visible(timeout=15_000)
    wide_rows = wide.locator(".jp-icedtea-op-row")
    expect(wide_rows).to_have_count(7, timeout=15_000)
    wide_table = wide.locator("table.jp-icedtea-operators")
    expect(wide_table).to_have_css("display", "table")
    headers = wide_table.evaluate(CLIPPED_HEADERS)
    assert not headers["clipped"], headers
    tops = {round(wide_table.locator("thead th").nth(i).bounding_box()["y"]) for i in range(5)}
    assert len(tops) == 1, f"the wide table's headers are not on one line: {tops}"
    expect(section(sidebar, "run")).to_be_visible()  # the sidebar stays as it was
    page.screenshot(path=str(artifacts / "fits-main-area.png"))

    problems = [e for e in page.console_errors if "icedtea" in e.lower()]
    assert not problems, problems
