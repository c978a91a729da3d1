"""The versions dashboard in the IcedTea sidebar, in real JupyterLab and headless Chromium.

A cell is run twice with a global it reads changed in between: JupyterLab's cell id
makes the two runs versions 1 and 2 of one cell. The Versions section (opened in the main
area) lists them; ticking
both compares them (the filter's globals changed, the counts differ); "Export session"
writes the selected run's debugging session as a notebook beside this one.
"""
from __future__ import annotations

import json
import re

import pytest
from conftest import notebook_json
from test_sidebar import KERNEL_READY, RUN_FINISHED, open_notebook, show_sidebar

pytestmark = pytest.mark.browser

expect = pytest.importorskip("playwright.sync_api").expect

NOTEBOOK = "versions.ipynb"
SESSION = ("%load_ext icedtea_jupyter\n"
           "import os\n"
           "os.environ.setdefault('SPARK_LOCAL_IP', '127.0.0.1')\n"
           "from pyspark.sql import SparkSession\n"
           "spark = (SparkSession.builder.master('local[2]')\n"
           "         .config('spark.ui.showConsoleProgress', 'false').getOrCreate())\n"
           "sc = spark.sparkContext\n")
CELLS = [
    SESSION + "LIMIT = 100",
    "%%icedtea --wait --no-panel\n"
    "sevens = sc.parallelize(range(1000), 2).filter(lambda x: x % 7 == 0 and x > LIMIT).collect()",
    "LIMIT = 500",
]


def run_twice(page, lab_server, name: str, cells: list[str]) -> None:
    """Open a notebook of ``cells`` (a session, a ``%%icedtea`` cell, a change of a
    global it reads), run them all, then the ``%%icedtea`` cell again: versions 1 and 2."""
    (lab_server.root / name).write_text(json.dumps(notebook_json(cells), indent=1))
    notebook = open_notebook(page, lab_server, name)
    shown = notebook.locator(".jp-Cell")
    shown.first.click()
    for _ in cells:
        page.keyboard.press("Shift+Enter")
    prompt = shown.nth(2).locator(".jp-InputPrompt")
    expect(prompt).to_have_text(re.compile(r"\[\d+\]"), timeout=RUN_FINISHED + KERNEL_READY)
    shown.nth(1).locator(".jp-InputPrompt").click()  # the %%icedtea cell again: version 2
    page.keyboard.press("Control+Enter")
    expect(shown.nth(1).locator(".jp-InputPrompt")).to_have_text("[4]:", timeout=RUN_FINISHED)


def test_two_versions_compared_and_a_session_exported(page, lab_server, artifacts):
    run_twice(page, lab_server, NOTEBOOK, CELLS)
    sidebar = show_sidebar(page)
    expect(sidebar.locator(".jp-icedtea-run-item")).to_have_count(2, timeout=60_000)
    # The section starts collapsed, under the others: its view opens in the main area.
    sidebar.locator('.jp-icedtea-open-wide[data-section="versions"]').click()
    view = page.locator("#jp-main-dock-panel .jp-icedtea-VersionsView")
    expect(view).to_be_visible(timeout=30_000)
    rows = view.locator(".jp-icedtea-version")
    expect(rows).to_have_count(2, timeout=60_000)
    # the lab's other notebooks (other tests) have cells of their own: this one's number varies
    status = view.locator(".jp-icedtea-versions-status")
    expect(status).to_have_text(re.compile(r"cell \d+: 2 versions"))
    cell = status.inner_text().split(":")[0]
    assert [rows.nth(i).get_attribute("data-version") for i in range(2)] == [
        f"{cell}, v1", f"{cell}, v2"]
    expect(rows.nth(1).locator(".jp-icedtea-version-changed")).to_have_text(
        "filter: globals read (LIMIT: 100 → 500)")

    for i in range(2):
        rows.nth(i).locator("input[type=checkbox]").check()
    diff = view.locator(".jp-icedtea-version-diff")
    expect(diff.locator(".jp-icedtea-diff-title")).to_have_text(
        f"{cell}, v2 against {cell}, v1", timeout=30_000)
    expect(diff.locator(".jp-icedtea-diff-changed")).to_have_text(
        "filter: globals read (LIMIT: 100 → 500)")
    counts = diff.locator('.jp-icedtea-diff-count[data-operator="filter"] td')
    expect(counts).to_have_text(["filter", "1,000", "71", "1,000", "128"])
    result = diff.locator(".jp-icedtea-diff-result")
    expect(result).to_have_attribute("data-same", "false")
    older_only = [str(x) for x in range(105, 501, 7)]  # the sevens between 100 and 500
    expect(result.locator("caption")).to_have_text(f"{len(older_only)} rows only there")
    page.screenshot(path=str(artifacts / "versions.png"))

    view.locator(".jp-icedtea-export-path").fill("exported-session.ipynb")
    view.locator(".jp-icedtea-export").click()
    expect(view.locator(".jp-icedtea-exported")).to_contain_text("Wrote", timeout=60_000)
    exported = json.loads((lab_server.root / "exported-session.ipynb").read_text())
    sources = [c["source"] for c in exported["cells"] if c["cell_type"] == "code"]
    assert any("LIMIT = 100" in s for s in sources)
    assert any(s.startswith("%%icedtea --wait --no-panel") for s in sources)
