"""A collapsed sidebar section does not redraw while a run records (issue 13: the
sidebar's frames while the live skew chart updates); expanded, it shows the latest."""
from __future__ import annotations

import json

import pytest
from conftest import notebook_json
from test_sidebar import RUN_FINISHED, collapse, count, open_notebook, show_sidebar
from test_time_travel import run_cells, run_code

from tests.waiting import FileGate, wait_until

pytestmark = pytest.mark.browser

expect = pytest.importorskip("playwright.sync_api").expect

# Counts every change under the Run section's view from now on.
WATCH_RUN_VIEW = """() => {
  const view = document.querySelector('#icedtea-section-run .jp-icedtea-RunView');
  window.__runViewChanges = 0;
  new MutationObserver(records => (window.__runViewChanges += records.length)).observe(
    view, {subtree: true, childList: true, attributes: true, characterData: true});
}"""


# Counts every change under each collapsed section's content from now on, by section.
WATCH_COLLAPSED = """ids => {
  window.__sectionChanges = {};
  for (const id of ids) {
    window.__sectionChanges[id] = 0;
    new MutationObserver(records => (window.__sectionChanges[id] += records.length)).observe(
      document.querySelector('#icedtea-section-' + id),
      {subtree: true, childList: true, attributes: true, characterData: true});
  }
}"""
# Sections that start collapsed and draw a model of the selected run.
COLLAPSED = ["versions", "samples", "summaries", "skew", "lineage", "alerts"]


def cells(gate: FileGate) -> list[str]:
    """A quick run (the sidebar then has sections), and a run of 2,000 records whose
    partitions wait at ``gate`` halfway, recording progress all along."""
    return [
        "%load_ext icedtea_jupyter\n"
        "import os, time\n"
        "os.environ.setdefault('SPARK_LOCAL_IP', '127.0.0.1')\n"
        "from pyspark.sql import SparkSession\n"
        "spark = (SparkSession.builder.master('local[2]').appName('collapsed')\n"
        "         .config('spark.ui.showConsoleProgress', 'false').getOrCreate())\n"
        "spark.sparkContext.setLogLevel('ERROR')\n"
        "from tests.waiting import FileGate  # the gate the test opens\n"
        f"gate = FileGate({gate.directory!r})\n"
        "def slow(x):\n"
        "    time.sleep(0.002)\n"
        "    if x % 1000 == 500:\n"
        "        gate.wait('halfway')\n"
        "    return x",
        "%%icedtea\n"
        "first = spark.sparkContext.parallelize(range(100), 2).map(lambda x: x).setName('quick').count()",
        "%%icedtea\n"
        "second = spark.sparkContext.parallelize(range(2000), 2).map(slow).setName('slow').count()",
    ]


def test_a_collapsed_run_section_skips_redraws_and_shows_the_latest_on_expand(
        page, lab_server, tmp_path):
    gate = FileGate(tmp_path / "gate")
    try:
        watch_collapsed(page, lab_server, gate)
    finally:
        gate.open()  # nothing stays held at the gate


def watch_collapsed(page, lab_server, gate):
    (lab_server.root / "icedtea-collapsed.ipynb").write_text(
        json.dumps(notebook_json(cells(gate)), indent=1))
    notebook = open_notebook(page, lab_server, "icedtea-collapsed.ipynb")
    run_cells(page, notebook, 2)
    sidebar = show_sidebar(page)
    view = sidebar.locator("#icedtea-section-run .jp-icedtea-RunView")
    expect(view.locator(".jp-icedtea-run-header .jp-icedtea-badge")).to_have_text(
        "finished", timeout=RUN_FINISHED)
    first_id = view.locator(".jp-icedtea-run-header").get_attribute("data-run-id")
    collapse(sidebar, "run")
    for name in COLLAPSED:
        expect(sidebar.locator(f'.lm-AccordionPanel-title[aria-controls="icedtea-section-{name}"]')
               ).to_have_attribute("aria-expanded", "false")
    page.evaluate(WATCH_RUN_VIEW)
    page.evaluate(WATCH_COLLAPSED, COLLAPSED)

    # The second run starts, records progress and waits halfway: the collapsed view is untouched.
    notebook.locator(".jp-Cell").nth(2).locator(".jp-InputPrompt").click()  # select it
    page.keyboard.press("Shift+Enter")
    wait_until(lambda: "halfway" in gate.held(), RUN_FINISHED / 1000,
               "the second run's tasks at the gate")
    page.wait_for_timeout(1500)  # progress events reach the page meanwhile
    assert page.evaluate("window.__runViewChanges") == 0
    gate.open()
    second_id = run_code(page, notebook, "import icedtea_jupyter as _it; print(_it.last_run().id)",
                         "id").strip()
    assert second_id != first_id
    page.wait_for_timeout(1000)  # the run's end reaches the page
    assert page.evaluate("window.__runViewChanges") == 0
    # a new run selected, its progress and its end: none of it drawn in a collapsed section
    assert page.evaluate("window.__sectionChanges") == dict.fromkeys(COLLAPSED, 0)

    # Expanded: drawn once, from the latest data (the second run, finished, every record).
    sidebar.locator('.lm-AccordionPanel-title[aria-controls="icedtea-section-run"]').click()
    header = view.locator(".jp-icedtea-run-header")
    expect(header).to_have_attribute("data-run-id", second_id, timeout=10_000)
    expect(header.locator(".jp-icedtea-badge")).to_have_text("finished")
    row = view.locator(".jp-icedtea-op-row[data-operator='slow']")
    expect(row).to_have_attribute("data-status", "done")
    assert count(row.locator(".jp-icedtea-records-in").inner_text()) == 2000
    assert page.evaluate("window.__runViewChanges") > 0

    # The Versions section expanded: drawn once, for the run selected meanwhile.
    sidebar.locator('.lm-AccordionPanel-title[aria-controls="icedtea-section-versions"]').click()
    versions = sidebar.locator("#icedtea-section-versions .jp-icedtea-VersionsView")
    expect(versions.locator(".jp-icedtea-export-path")).to_have_attribute(
        "placeholder", f"debug-{second_id}.ipynb", timeout=10_000)
